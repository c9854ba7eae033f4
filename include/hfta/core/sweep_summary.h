// A human-readable summary of a sweep, as `hfta-tune validate` prints it.
#pragma once

#include <cstdint>
#include <string>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// Several indented lines: task, metric, budget, search, fusion, early stopping, parameters.
std::string summarize(const SweepConfig& sweep);

/// A table read (task.dataset csv): "114 rows to train on, 28 to validate, 36
/// to test; 13 features; label cultivar, 3 classes".
std::string table_counts(const TableOptions& table);

/// "configs/data/wine_train.csv, test configs/data/wine_test.csv: " and its
/// counts, or before the table is read, the split and label it will take.
std::string describe_table(const TableOptions& table, std::int64_t validation_size);

/// One parameter's distribution in one line: "log_uniform [0.0001, 0.1]".
std::string describe(const search::ParameterSpec& parameter);

/// A budget with its unit: "11.1111 steps" (six significant digits), "1 epoch",
/// whole budgets in full ("5000000 samples").
std::string budget_text(double budget, const std::string& unit);

/// "1 to 9 epochs", or "9 epochs" where every trial trains to budget.max alone
/// (random search without median stopping, a grid).
std::string budget_range(const SweepConfig& sweep);

}  // namespace hfta::core
