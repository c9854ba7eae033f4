#include "hfta/core/sweep_tables.h"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "hfta/core/config_error.h"
#include "hfta/core/did_you_mean.h"
#include "hfta/core/experiment_dir.h"

namespace hfta::core {

namespace {

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
    trainers::TabularData data = trainers::make_tabular_data(train, test ? &*test : nullptr, sweep.task.validation_size);
    t.features = static_cast<std::int64_t>(data.features.size());
    t.label_column = data.label;
    t.classes = data.data.classes;
    t.train_rows = data.data.train.size();
    t.validation_rows = data.data.validation.size();
    t.test_rows = data.data.test.size();
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
    return trainers::read_table(file, file, label, part, read);
  });
}

void keep_table(const std::string& dir, const TableBytes& bytes, SweepConfig& sweep) {
  const TableOptions& files = sweep.task.table;
  const trainers::TabularData data = tabular(sweep, [&](const std::string& part, const std::string& label) {
    return trainers::parse_table(part == "train" ? bytes.train : bytes.test,
                                 part == "train" ? files.train_file : files.test_file, label, part);
  });
  std::error_code ec;
  std::filesystem::create_directory(dir + "/data", ec);
  if (ec) throw StorageError("cannot create " + dir + "/data: " + ec.message());
  write_atomically(dir + "/data/train.csv", bytes.train);
  if (!sweep.task.table.test.empty()) write_atomically(dir + "/data/test.csv", bytes.test);
  const auto& t = sweep.task.table;
  nlohmann::json table = {
      {"format", 1},
      {"input", "the features in this order, each as (value - mean) / scale"},
      {"features", data.features},
      {"mean", data.mean},
      {"scale", data.scale},
      {"label", data.label},
      {"output", "a logit per class: index i stands for classes[i]"},
      {"classes", data.classes},
      {"rows", {{"train", t.train_rows}, {"validation", t.validation_rows}, {"test", t.test_rows}}},
  };
  write_atomically(dir + "/data/table.json", table.dump(2) + "\n");
}

bool holds_only_a_kept_table(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/data", ec)) {
    const std::string name = entry.path().filename().string();
    const std::string base = name.size() > 4 && name.substr(name.size() - 4) == ".tmp" ? name.substr(0, name.size() - 4) : name;
    if (base != "train.csv" && base != "test.csv" && base != "table.json") return false;
  }
  return !ec;
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
  try {
    read_sweep_table(sweep);  // its counts, for the array sizes
  } catch (const ConfigError& e) {
    return std::string(e.what()) + " (in the table run kept: changed from outside)";
  }
  return "";
}

}  // namespace hfta::core
