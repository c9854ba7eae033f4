#include "hfta/core/sweep_tables.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "hfta/core/config_error.h"
#include "hfta/core/did_you_mean.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {

nlohmann::json table_digest(const std::string& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t at = 0; at < bytes.size(); at += std::size_t{1} << 30) {  // (zlib takes a uInt at a time)
    const std::size_t n = std::min(bytes.size() - at, std::size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
  }
  return {{"bytes", bytes.size()}, {"crc32", static_cast<std::uint32_t>(crc)}};
}

namespace {

// The loader's check that no two rungs train to the same step, with the
// table's rows known: a step trains them all where they are fewer than a batch.
void check_rung_steps(const SweepConfig& sweep) {
  const auto problem = rung_steps_problem(sweep, sweep.task.table.train_rows);
  if (!problem) return;
  const auto& marks = sweep.task.table.marks;
  const std::string path = !problem->at_max && marks.count("budget.min") ? "budget.min" : "budget.max";
  const auto [line, column] = marks.count(path) ? marks.at(path) : std::pair<int, int>{0, 0};
  throw ConfigError({Diagnostic{sweep.task.table.source, path, line, column, problem->message}});
}

// Where the sweep first names `metric`: as its metric, an objective or a constraint.
std::string path_naming(const SweepConfig& sweep, const std::string& metric) {
  if (sweep.objectives.empty() && sweep.metric.name == metric) return "metric.name";
  for (std::size_t i = 0; i < sweep.objectives.size(); ++i) {
    if (sweep.objectives[i].name == metric) return "metric[" + std::to_string(i) + "].name";
  }
  for (std::size_t i = 0; i < sweep.constraints.size(); ++i) {
    if (sweep.constraints[i].name == metric) return "constraints[" + std::to_string(i) + "].name";
  }
  return "metric.name";
}

// ROC AUC and average precision rank validation rows of two classes at
// least: with one, every trial's would be undefined (sklearn raises) or 1.
// Refused where the sweep names them.
void check_validation_classes(const SweepConfig& sweep) {
  const TableOptions& t = sweep.task.table;
  if (t.regression || t.validation_classes >= 2) return;
  for (const std::string metric : {"val_auc", "val_average_precision"}) {
    if (!sweep.names_metric(metric)) continue;
    const std::string path = path_naming(sweep, metric);
    const auto [line, column] = t.marks.count(path) ? t.marks.at(path) : std::pair<int, int>{0, 0};
    const std::string why = metric == "val_auc"
                                ? "ROC AUC ranks rows of two classes, so val_auc would be undefined for every trial"
                                : "average precision finds one class among others, so val_average_precision would be "
                                  "1 or undefined for every trial";
    throw ConfigError({Diagnostic{t.source, path, line, column,
                                  "the validation rows (" + std::to_string(t.validation_rows) + ") hold one class of " +
                                      t.label_column + ": " + why + "; hold out more rows with task.validation_size "
                                      "(each class holds out its share), or rank by val_f1 or val_balanced_accuracy"}});
  }
}

// The table made from its files' tables, its counts filled in; a TableError
// said where the sweep names what is wrong: the file, the label, or the
// validation rows (at the file where the sweep leaves them to the default).
template <typename Read>
trainers::TabularData tabular(SweepConfig& sweep, Read read) {
  TableOptions& t = sweep.task.table;
  try {
    const trainers::Table train = read("train", t.label);
    std::optional<trainers::Table> test;
    if (!t.test.empty()) test = read("test", train.label);
    trainers::TabularData data = trainers::make_tabular_data(train, test ? &*test : nullptr, sweep.task.validation_size,
                                                             trainers::is_regression_loss(sweep.task.loss));
    t.features = static_cast<std::int64_t>(data.features.size());
    t.label_column = data.label;
    t.classes = data.data.classes;
    t.regression = data.regression;
    t.integer_classes = data.integer_classes;
    t.train_rows = data.data.train.size();
    t.validation_rows = data.data.validation.size();
    t.test_rows = data.data.test.size();
    t.validation_lacks.clear();
    if (!data.regression) {
      const at::Tensor counts = at::bincount(data.data.validation.labels, {}, data.data.classes);
      t.validation_classes = (counts > 0).sum().item<std::int64_t>();
      for (std::int64_t c = 0; c < data.data.classes; ++c) {
        if (counts[c].item<std::int64_t>() == 0) t.validation_lacks.push_back(data.classes[static_cast<std::size_t>(c)]);
      }
      t.test_classes = data.data.test.size() == 0
                           ? 0
                           : (at::bincount(data.data.test.labels, {}, data.data.classes) > 0).sum().item<std::int64_t>();
    }
    check_rung_steps(sweep);
    check_validation_classes(sweep);
    return data;
  } catch (const trainers::TableError& e) {
    std::string part = e.part();
    if (!t.marks.count(part)) part = "train";
    const auto [line, column] = t.marks.count(part) ? t.marks.at(part) : std::pair<int, int>{0, 0};
    const std::string path = part == "validation" ? "task.validation_size" : "task.data." + part;
    throw ConfigError({Diagnostic{t.source, path, line, column, e.what() + did_you_mean(t.label, e.columns())}});
  }
}

}  // namespace

trainers::TabularData read_sweep_table(SweepConfig& sweep, TableBytes* bytes) {
  const TableOptions& t = sweep.task.table;
  return tabular(sweep, [&](const std::string& part, const std::string& label) {
    const std::string& file = part == "train" ? t.train_file : t.test_file;
    std::string* read = bytes ? (part == "train" ? &bytes->train : &bytes->test) : nullptr;
    return trainers::read_table(file, file, label, part, read, trainers::is_regression_loss(sweep.task.loss));
  });
}

void keep_table(const std::string& dir, const TableBytes& bytes, SweepConfig& sweep) {
  const TableOptions& files = sweep.task.table;
  const trainers::TabularData data = tabular(sweep, [&](const std::string& part, const std::string& label) {
    return trainers::parse_table(part == "train" ? bytes.train : bytes.test,
                                 part == "train" ? files.train_file : files.test_file, label, part,
                                 trainers::is_regression_loss(sweep.task.loss));
  });
  std::error_code ec;
  std::filesystem::create_directory(dir + "/data", ec);
  if (ec) throw StorageError("cannot create " + dir + "/data: " + ec.message());
  const auto& t = sweep.task.table;
  nlohmann::json copies = {{"train.csv", table_digest(bytes.train)}};
  if (!t.test.empty()) copies["test.csv"] = table_digest(bytes.test);
  nlohmann::json table = {
      {"format", 1},
      {"input", "the features in this order, each as (value - mean) / scale"},
      {"features", data.features},
      {"mean", data.mean},
      {"scale", data.scale},
      {"label", data.label},
      {"rows", {{"train", t.train_rows}, {"validation", t.validation_rows}, {"test", t.test_rows}}},
      // Which rows: so that a baseline elsewhere is measured on the same ones.
      {"validation_lines", data.validation_lines},
      {"files", copies},
  };
  if (data.regression) {
    table["output"] = "the label predicted, standardised: value = output * target_scale + target_mean";
    table["target_mean"] = data.target_mean;
    table["target_scale"] = data.target_scale;
  } else {
    table["output"] = "a logit per class: index i stands for classes[i]";
    table["classes"] = data.classes;
  }
  // table.json first: it marks data/ as a kept table's (a run killed before
  // the copies leaves what the next run into the directory takes over), and
  // names the copies' bytes, which resume checks.
  write_atomically(dir + "/data/table.json", table.dump(2) + "\n");
  write_atomically(dir + "/data/train.csv", bytes.train);
  if (!t.test.empty()) {
    write_atomically(dir + "/data/test.csv", bytes.test);
  } else {
    std::filesystem::remove(dir + "/data/test.csv", ec);  // a killed run's, of a sweep with a test table
  }
}

bool holds_only_kept_data(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir + "/run.json", ec)) return false;  // not a run's directory
  bool marked = false;  // by the record either writes first
  for (const char* record : {"table.json", "corpus.json"}) {
    std::ifstream in(dir + "/data/" + record);
    const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    marked = marked || (json.is_object() && json.contains("files"));
  }
  if (!marked) return false;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/data", ec)) {
    const std::string name = entry.path().filename().string();
    const std::string base = name.size() > 4 && name.substr(name.size() - 4) == ".tmp" ? name.substr(0, name.size() - 4) : name;
    if (base != "train.csv" && base != "test.csv" && base != "table.json" && base != "corpus.txt" &&
        base != "corpus.json") {
      return false;
    }
  }
  return !ec;
}

void add_table_shape(const TableOptions& table, std::map<std::string, double>& numeric) {
  if (table.features == 0) return;
  numeric["inputs"] = static_cast<double>(table.features);
  numeric["classes"] = static_cast<double>(table.classes);
}

std::string read_tables_from(SweepConfig& sweep, const std::string& dir) {
  if (sweep.task.dataset != "csv") return "";
  TableOptions& t = sweep.task.table;
  t.train_file = dir + "/data/train.csv";
  t.test_file = t.test.empty() ? "" : dir + "/data/test.csv";
  for (const std::string* file : {&t.train_file, &t.test_file}) {
    struct stat info {};
    if (file->empty()) continue;
    if (::stat(file->c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      return *file + " is gone: run kept the sweep's table there, and the trials train on it (" +
             (file == &t.train_file ? t.train : t.test) + " may have changed since); put it back";
    }
  }
  std::ifstream in(dir + "/data/table.json");
  const auto table = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!table.is_object() || !table.contains("files") || !table["files"].is_object()) {
    return dir + "/data/table.json is gone or damaged (run wrote it whole: changed from outside); it names the "
                 "tables the trials train on, so resume cannot check them";
  }
  TableBytes bytes;
  try {
    read_sweep_table(sweep, &bytes);  // its counts, for the array sizes
  } catch (const ConfigError& e) {
    // (Rungs that train the same steps of this table: refused by a later version than ran it, not changed.)
    const bool budget = !e.diagnostics().empty() && e.diagnostics().front().path.rfind("budget.", 0) == 0;
    return std::string(e.what()) + (budget ? "" : " (in the table run kept: changed from outside)");
  }
  for (const auto& [name, read] : {std::pair{"train.csv", &bytes.train}, std::pair{"test.csv", &bytes.test}}) {
    if (std::string(name) == "test.csv" && t.test.empty()) continue;
    if (table["files"].value(name, nlohmann::json()) != table_digest(*read)) {
      return dir + "/data/" + name + " is not the table run kept (its size or CRC-32 differs from what "
             "data/table.json records): changed from outside; put back the copy the trials trained on";
    }
  }
  return "";
}

}  // namespace hfta::core
