// A table of the user's own: CSV rows of numeric features and a class label,
// split, standardised and numbered as the models train on them (task.dataset
// csv, with an MLP).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

/// What is wrong with a table: the message names the file and line
/// ("wine.csv:17: ..."). `part` says which the sweep's task.data names it by:
/// "train", "test" or "label".
class TableError : public std::runtime_error {
 public:
  TableError(std::string part, const std::string& message, std::vector<std::string> columns = {})
      : std::runtime_error(message), part_(std::move(part)), columns_(std::move(columns)) {}
  const std::string& part() const { return part_; }
  /// A label not found: the table's columns (for a "did you mean").
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::string part_;
  std::vector<std::string> columns_;
};

/// A CSV file as read: a header row naming the columns, then a row per line.
struct Table {
  std::string name;                  ///< the file as messages name it
  std::vector<std::string> features; ///< the columns but the label, in file order
  std::string label;                 ///< the label column's name
  std::vector<double> values;        ///< rows x features, row by row
  std::vector<std::string> labels;   ///< each row's label, as written
  std::vector<int> lines;            ///< each row's line in the file (1-based)
  std::int64_t rows() const { return static_cast<std::int64_t>(labels.size()); }
};

/// Parses CSV text: commas between fields, fields in double quotes where they
/// hold a comma ("" for a quote inside), LF or CRLF line ends, blank lines
/// skipped. `label` names the label column ("": the last). Every other column
/// holds a finite number in every row, and so does the label where
/// `numeric_label` (a regression's target). Throws TableError(part) naming
/// `name`:line for anything else.
Table parse_table(const std::string& text, const std::string& name, const std::string& label,
                  const std::string& part = "train", bool numeric_label = false);

/// Reads `path` (at most `max_bytes`) and parses it; `bytes`, when given,
/// receives the file as read. `name` stands for the file in messages.
Table read_table(const std::string& path, const std::string& name, const std::string& label,
                 const std::string& part = "train", std::string* bytes = nullptr, bool numeric_label = false);

/// A table's rows as a model trains on them, and what a user needs to feed it
/// new rows: the same columns, standardised by `mean` and `scale`, and which
/// label each class index stands for.
struct TabularData {
  ClassificationData data;           ///< images: features [N, F] float32; labels: class indices [N]
  std::vector<std::string> features; ///< the columns, in input order
  std::string label;                 ///< the label column's name
  std::vector<double> mean, scale;   ///< per feature: input = (value - mean) / scale
  std::vector<int> validation_lines; ///< the training file's lines held out for validation, in order
  std::vector<std::string> classes;  ///< the label each class index stands for (classification)
  bool integer_classes = false;      ///< every label an integer (numbered in numeric order)
  /// Regression: labels hold the target standardised, (value - target_mean) /
  /// target_scale, and the model's one output predicts it.
  bool regression = false;
  double target_mean = 0, target_scale = 1;
};

/// The rows a training table leaves for validation where the sweep names no
/// number: a fifth, at least one.
std::int64_t default_validation_rows(std::int64_t rows);

/// `train` split into training and validation rows (`validation_rows`; 0: the
/// default), stratified by class from a fixed seed, so every run and resume of
/// any sweep on the same file sees the same split; every split standardised by
/// the training rows' mean and standard deviation (a constant column by 1); the
/// classes numbered in sorted order (numerically where every label is an
/// integer). `test`, when given, holds the same columns and only labels the
/// training table has. Throws TableError where a split would be empty, a
/// label has one class or looks like a measurement, or the test table differs.
/// `regression`: the label column is a number to predict (every row's a
/// finite number); the validation rows are drawn at random from the fixed
/// seed, and the target is standardised as the features are.
TabularData make_tabular_data(const Table& train, const Table* test, std::int64_t validation_rows = 0,
                              bool regression = false);

}  // namespace hfta::trainers
