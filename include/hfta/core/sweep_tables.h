// A sweep on a table of the user's own (task.dataset csv): reading the CSV
// files its task.data names, the copies run keeps in the experiment
// directory, and the description of the inputs and classes that a user needs
// to feed new rows to an exported model.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"
#include "hfta/trainers/tabular_data.h"

namespace hfta::core {

/// The table's files as read: run copies exactly the bytes it checked.
struct TableBytes {
  std::string train, test;
};

/// The table `sweep` trains on, read from task.table's files, split and
/// standardised; fills the table's counts. Throws ConfigError naming the
/// task.data line of the sweep file, its message naming the table's file and line.
trainers::TabularData read_sweep_table(SweepConfig& sweep, TableBytes* bytes = nullptr);

/// Keeps the table read as `bytes` in DIR/data/ (run, before sweep.json):
/// train.csv, test.csv and table.json (the columns in input order, each one's
/// mean and scale, the label each class index stands for). Throws StorageError.
void keep_table(const std::string& dir, const TableBytes& bytes, SweepConfig& sweep);

/// What table.json records of a file's bytes, to know it again: {"bytes", "crc32"}.
nlohmann::json table_digest(const std::string& bytes);

/// Whether DIR/data holds nothing but what keep_table or keep_corpus
/// (sweep_corpus.h) write (a run killed before its sweep.json left it; a
/// folder of the user's is no such thing).
bool holds_only_kept_data(const std::string& dir);

/// A read table's width and classes, as the footprint of an MLP takes them
/// (`inputs`, `classes`); nothing before the table is read.
void add_table_shape(const TableOptions& table, std::map<std::string, double>& numeric);

/// Points a recorded sweep (DIR/sweep.json) at DIR/data's copies and reads
/// them (their counts): "" where they are there and whole, else why not
/// (resume cannot go on without them).
std::string read_tables_from(SweepConfig& sweep, const std::string& dir);

}  // namespace hfta::core
