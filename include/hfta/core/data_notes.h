// Notes on settings that the training set's size makes idle or odd. run says
// them once its data is loaded; plan and validate where the size is known
// without loading it (a read table, Fashion-MNIST, the point clouds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// "note: ..." lines (without the newline), for a training set of
/// `train_examples`: a batch larger than it (each step trains it all); a step
/// or exponential schedule that has all but stopped by budget.max
/// (decay_notes); early_stopping.patience or a plateau schedule's patience
/// that budget.max leaves too few evaluations to ever act.
std::vector<std::string> data_notes(const SweepConfig& sweep, std::int64_t train_examples);

/// The sweep's training examples where they are known before its data is
/// loaded: a table's rows once read_sweep_table has counted them,
/// Fashion-MNIST's and the point clouds'; nullopt for the text corpus.
std::optional<std::int64_t> known_train_examples(const SweepConfig& sweep);

/// What plan and validate note on a sweep: suspect_settings, then data_notes
/// where known_train_examples knows the training set's size. (run prints
/// these in its plan; the tuner says data_notes only where they were not.)
std::vector<std::string> plan_notes(const SweepConfig& sweep);

}  // namespace hfta::core
