#include "hfta/core/sweep_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include "hfta/core/did_you_mean.h"
#include "hfta/core/data_notes.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/search/brackets.h"
#include "hfta/fusion/precision.h"
#include "option_values.h"
#include "sweep_sections.h"

namespace hfta::core {

constexpr std::int64_t kMaxTrials = 1000000;  ///< trials a sweep may start
namespace {

using trainers::ModelSpec;

template <typename E>
void read_enum_into(YamlReader& r, const std::optional<YAML::Node>& node, const std::string& path,
                    E& out) {
  if (!node) return;
  if (auto i = r.read_enum(*node, path, enum_names<E>())) out = static_cast<E>(*i);
}

// Reads an integer in [lo, hi]; `what` says what the bound means.
void read_int_in(YamlReader& r, const std::optional<YAML::Node>& node, const std::string& path,
                 std::int64_t lo, std::int64_t hi, const std::string& what, std::int64_t& out) {
  if (!node) return;
  auto range_error = [&](const std::string& got) {
    r.error(*node, path,
            "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (" + what + "), got " + got);
  };
  // Beyond 64 bits too: the same message as just outside the range.
  if (node->IsScalar() && node->Tag() != "!") {
    const std::string& s = node->Scalar();
    const std::size_t start = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (s.size() > start && s.find_first_not_of("0123456789", start) == std::string::npos) {
      errno = 0;
      std::strtoll(s.c_str(), nullptr, 10);
      if (errno == ERANGE) return range_error(s);
    }
  }
  auto v = r.read_int(*node, path);
  if (!v) return;
  if (*v < lo || *v > hi) return range_error(std::to_string(*v));
  out = *v;
}

// A number that `ok` accepts, or an error saying what was `expected`.
void read_number_where(YamlReader& r, const std::optional<YAML::Node>& node, const std::string& path,
                       bool (*ok)(double), const std::string& expected, double& out) {
  if (!node) return;
  auto v = r.read_number(*node, path);
  if (!v) return;
  if (!ok(*v)) {
    r.error(*node, path, expected + ", got " + describe_node(*node));
    return;
  }
  out = *v;
}

void load_name(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "name", true);
  if (!node) return;
  auto name = r.read_string(*node, "name");
  if (!name) return;
  // The name becomes a directory name (the default experiment directory).
  const bool valid = !name->empty() && std::isalnum(static_cast<unsigned char>((*name)[0])) &&
                     name->find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789._-") == std::string::npos;
  if (!valid) {
    r.error(*node, "name",
            "expected a name of letters, digits, '.', '_' or '-' starting with a letter or digit "
            "(it names the experiment directory), got '" + *name + "'");
    return;
  }
  if (name->size() > 128) {
    r.error(*node, "name",
            "a name is at most 128 characters (it names the experiment directory), got " +
                std::to_string(name->size()) + ": '" + name->substr(0, 40) + "...'");
    return;
  }
  sweep.name = *name;
}

// A path the sweep file `source` names: relative paths from its directory
// (from the working directory for a sweep read from a pipe), ~/ from $HOME.
std::string from_sweep_file(const std::string& written, const std::string& source) {
  namespace fs = std::filesystem;
  const char* home = std::getenv("HOME");
  const fs::path dir = fs::path(source).parent_path();
  if (written.rfind("~/", 0) == 0 && home && *home) return (fs::path(home) / written.substr(2)).lexically_normal();
  const fs::path path(written);
  struct stat info {};
  const bool piped = source.empty() || source.front() == '<' || source == "-" ||
                     (::stat(source.c_str(), &info) == 0 && !S_ISREG(info.st_mode));  // /dev/stdin, a FIFO
  if (path.is_absolute() || piped || dir.empty()) return path.lexically_normal();
  return (dir / path).lexically_normal();
}

// A file task.data names, as read (from_sweep_file: not from the working
// directory, so a sweep runs the same from anywhere). The sweep file in an experiment directory (its sweep.yaml, sweep.json)
// reads the tables run kept there, as resume trains on them: its relative
// paths were written from elsewhere.
std::string table_file(const std::string& written, const std::string& source, const char* kept) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(source).parent_path();
  std::error_code ec;
  if (!dir.empty() && fs::is_regular_file(dir / "data" / "table.json", ec) && fs::is_regular_file(dir / "sweep.json", ec)) {
    return (dir / "data" / kept).string();
  }
  return from_sweep_file(written, source);
}

// task.data: the CSV files of a table of the user's own (dataset csv), read
// (to check them) by the verbs that take a sweep file, not here: the copy of
// the sweep in an experiment directory names them from elsewhere.
// `written`: the dataset as the sweep names it, if it does (one refused is
// said there, and task.data then is not).
void load_table(YamlReader& r, const YAML::Node& task_node, TaskOptions& task, const std::optional<std::string>& written) {
  auto data = r.child(task_node, "task", "data", task.dataset == "csv");
  if (!data) return;
  const bool dataset_written = written.has_value();
  if (task.dataset != "csv") {
    if (dataset_written && *written == task.dataset) {
      r.error(*data, "task.data",
              "names the CSV files of a table of your own, for dataset csv; dataset " + task.dataset +
                  " is read from its own files");
    } else if (!dataset_written) {
      const trainers::ModelSpec* model = trainers::find_model(task.model);
      const bool takes_csv = model && std::count(model->datasets.begin(), model->datasets.end(), "csv") > 0;
      r.error(*data, "task.data",
              "names the CSV files of a table of your own, for dataset csv; dataset " + task.dataset +
                  " (the model's) is read from its own files" +
                  (takes_csv ? ": to train on the table, add dataset: csv"
                             : "; model " + task.model + " does not train on tables (mlp does)"));
    }
    return;
  }
  if (!r.check_mapping(*data, "task.data", {"train", "test", "label"}) && !data->IsMap()) return;
  TableOptions& table = task.table;
  table.source = r.file();
  for (const char* key : {"train", "test", "label"}) {
    auto node = r.child(*data, "task.data", key, std::string(key) == "train");
    if (!node) continue;
    const std::string path = std::string("task.data.") + key;
    auto text = r.read_string(*node, path);
    if (!text) continue;
    if (text->empty()) {
      r.error(*node, path, std::string(key) == "label" ? "an empty column name; leave label out for the last column"
                                                       : "an empty path; give the CSV file's");
      continue;
    }
    table.marks[key] = {node->Mark().line + 1, node->Mark().column + 1};
    if (std::string(key) == "label") {
      table.label = *text;
    } else {
      (std::string(key) == "train" ? table.train : table.test) = *text;
      (std::string(key) == "train" ? table.train_file : table.test_file) =
          table_file(*text, r.file(), std::string(key) == "train" ? "train.csv" : "test.csv");
    }
  }
}

// What another library calls a loss hfta-tune takes under another name
// (Keras' "mae", PyTorch's "smooth_l1_loss"), said as the name to write; "" for
// any other value.
std::string loss_alias(const YAML::Node& node, const std::vector<std::string>& names) {
  if (!node.IsScalar()) return "";
  static const std::map<std::string, std::pair<std::string, std::string>> aliases = {
      {"mae", {"l1", "the mean absolute error"}},
      {"mean_absolute_error", {"l1", "the mean absolute error"}},
      {"l1_loss", {"l1", "PyTorch's L1Loss"}},
      {"mean_squared_error", {"mse", "the mean squared error"}},
      {"mse_loss", {"mse", "PyTorch's MSELoss"}},
      {"l2", {"mse", "the mean squared error"}},
      {"smooth_l1", {"huber", "PyTorch's SmoothL1Loss with beta 1 (HuberLoss with delta 1)"}},
      {"smooth_l1_loss", {"huber", "PyTorch's SmoothL1Loss with beta 1 (HuberLoss with delta 1)"}},
      {"huber_loss", {"huber", "PyTorch's HuberLoss with delta 1"}},
      {"mseloss", {"mse", "PyTorch's MSELoss"}},
      {"l1loss", {"l1", "PyTorch's L1Loss"}},
      {"huberloss", {"huber", "PyTorch's HuberLoss with delta 1"}},
      {"smoothl1loss", {"huber", "PyTorch's SmoothL1Loss with beta 1 (HuberLoss with delta 1)"}},
      {"squared_error", {"mse", "the squared error"}},
      {"absolute_error", {"l1", "the absolute error"}},
      {"reg:squarederror", {"mse", "XGBoost's squared error"}},
      {"reg:absoluteerror", {"l1", "XGBoost's absolute error"}},
      {"reg:pseudohubererror", {"huber", "a Huber loss"}},
      {"regression", {"mse", "LightGBM's regression (L2) objective"}},
      {"regression_l1", {"l1", "LightGBM's L1 objective"}},
      {"categorical_crossentropy", {"cross_entropy", "the cross-entropy of classes"}},
      {"sparse_categorical_crossentropy", {"cross_entropy", "the cross-entropy of classes"}},
      {"crossentropy", {"cross_entropy", "the cross-entropy of classes"}},
      {"crossentropyloss", {"cross_entropy", "PyTorch's CrossEntropyLoss"}},
  };
  std::string key = node.Scalar();
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  if (key != node.Scalar() && std::find(names.begin(), names.end(), key) != names.end()) {
    return "names are lower case: " + key;
  }
  auto it = aliases.find(key);
  if (it == aliases.end() || std::find(names.begin(), names.end(), it->second.first) == names.end()) return "";
  return it->second.second + " is " + it->second.first + " here";
}

const ModelSpec* load_task(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "task", true);
  if (!node) return nullptr;
  if (!r.check_mapping(*node, "task", {"dataset", "model", "batch_size", "loss", "precision", "validation_size", "eval_steps",
                                         "options", "data"})) {
    if (!node->IsMap()) return nullptr;
  }
  TaskOptions& task = sweep.task;
  const ModelSpec* model = nullptr;
  if (auto m = r.child(*node, "task", "model", true)) {
    if (auto i = r.read_enum(*m, "task.model", trainers::model_names())) {
      model = &trainers::models()[*i];
      task.model = model->name;
      task.dataset = model->dataset;
      task.loss = trainers::loss_names(model->kind).front();
    }
  }
  if (auto d = r.child(*node, "task", "dataset", false)) {
    if (auto i = r.read_enum(*d, "task.dataset", trainers::dataset_names())) {
      const std::string dataset = trainers::dataset_names()[*i];
      if (model && std::find(model->datasets.begin(), model->datasets.end(), dataset) ==
                       model->datasets.end()) {
        r.error(*d, "task.dataset",
                "model " + model->name + " does not train on " + dataset + "; it takes " +
                    join_alternatives(model->datasets));
      } else {
        task.dataset = dataset;
      }
    }
  }
  read_int_in(r, r.child(*node, "task", "batch_size", false), "task.batch_size", 1, 1 << 20,
              "examples per batch", task.batch_size);
  if (auto p = r.child(*node, "task", "precision", false)) {
    if (auto i = r.read_enum(*p, "task.precision", fusion::precision_names())) {
      task.precision = fusion::precision_names()[*i];
      task.precision_line = p->Mark().line + 1;
      task.precision_column = p->Mark().column + 1;
      if (const std::string refusal = model ? trainers::precision_refusal(*model, task.precision) : "";
          !refusal.empty()) {
        r.error(*p, "task.precision", refusal);
      }
    }
  }
  if (auto v = r.child(*node, "task", "validation_size", false)) {
    // Fashion-MNIST's split leaves at least 10,000 images to train on; point
    // clouds are generated, as many as asked; the text corpus splits by its own rule.
    if (task.dataset == "fashion_mnist") {
      read_int_in(r, v, "task.validation_size", 1, 50000, "Fashion-MNIST training images held out for validation",
                  task.validation_size);
    } else if (task.dataset == "point_clouds") {
      read_int_in(r, v, "task.validation_size", 1, 100000, "generated validation clouds", task.validation_size);
    } else if (task.dataset == "csv") {  // (whether it leaves rows to train on, the table says)
      double share = 0;
      if (v->IsScalar() && std::sscanf(v->Scalar().c_str(), "%lf", &share) == 1 && share > 0 && share < 1) {
        r.error(*v, "task.validation_size",
                "a number of rows, not a share of them (" + v->Scalar() + "); leave it out for a fifth of the rows");
      } else {
        read_int_in(r, v, "task.validation_size", 1, std::int64_t{1} << 40, "table rows held out for validation",
                    task.validation_size);
      }
      task.table.marks["validation"] = {v->Mark().line + 1, v->Mark().column + 1};
    } else if (!task.dataset.empty()) {
      r.error(*v, "task.validation_size",
              "dataset " + task.dataset + " has a fixed split (every 20th sequence); validation_size is for "
              "fashion_mnist, point_clouds and csv");
    }
  }
  const YAML::Node& task_node = *node;  // (const: reading a key adds none)
  load_table(r, task_node, task,
             task_node.IsMap() && task_node["dataset"] && task_node["dataset"].IsScalar()
                 ? std::optional<std::string>(task_node["dataset"].Scalar())
                 : std::nullopt);
  read_int_in(r, r.child(*node, "task", "eval_steps", false), "task.eval_steps", 1, std::int64_t{1} << 40,
              "training steps between evaluations", task.eval_steps);
  if (auto l = r.child(*node, "task", "loss", false); l && model) {
    const auto names = trainers::loss_names(*model, task.dataset);
    if (l->IsScalar() && trainers::is_regression_loss(l->Scalar()) &&
        std::find(names.begin(), names.end(), l->Scalar()) == names.end()) {
      const bool takes_tables = std::find(model->datasets.begin(), model->datasets.end(), "csv") != model->datasets.end();
      r.error(*l, "task.loss",
              l->Scalar() + " learns a number from a table's column (regression): " +
                  (takes_tables ? "add task.dataset: csv and name the table in task.data"
                                : "model " + model->name + " does not train on tables (mlp does)") +
                  "; " + task.dataset + " trains with " + join_alternatives(names));
    } else if (const auto alias = loss_alias(*l, names); !alias.empty()) {
      r.error(*l, "task.loss", "'" + l->Scalar() + "' is not one of " + join_alternatives(names) + ": " + alias);
      task.loss = l->Scalar();  // (not a loss: the metric is then checked against every loss's)
    } else if (auto i = r.read_enum(*l, "task.loss", names)) {
      task.loss = names[*i];
    } else if (l->IsScalar()) {
      task.loss = l->Scalar();
    }
  }
  if (!model) return nullptr;

  auto options = r.child(*node, "task", "options", false);
  if (options) {
    r.check_mapping(*options, "task.options", model->option_names(),
                    " (the options of model " + model->name + ")");
  }
  if (options && options->IsMap()) {
    for (const auto& entry : *options) {
      const std::string key = entry.first.Scalar();
      const std::string path = "task.options." + key;
      const trainers::OptionSpec* option = model->find_option(key);
      auto value = r.read_value(entry.second, path);
      if (!option || !value) continue;
      std::string why;
      if (auto fitted = fit_option_value(*option, *value, &why)) {
        task.options[key] = *fitted;
      } else {
        r.error(entry.second, path, why);
      }
    }
  }
  for (const auto& option : model->options) {
    task.options.emplace(option.name, default_value(option));
  }
  // Attention splits d_model evenly across its heads.
  auto d_model = task.options.find("d_model"), heads = task.options.find("heads");
  if (options && options->IsMap() && d_model != task.options.end() && heads != task.options.end() &&
      search::is_numeric(d_model->second) && search::is_numeric(heads->second)) {
    const auto d = static_cast<std::int64_t>(search::as_double(d_model->second));
    const auto h = static_cast<std::int64_t>(search::as_double(heads->second));
    if (h > 0 && d % h != 0) {
      const bool at_heads = static_cast<bool>((*options)["heads"]);
      r.error(at_heads ? (*options)["heads"] : (*options)["d_model"], at_heads ? "task.options.heads" : "task.options.d_model",
              std::to_string(h) + " heads do not divide d_model " + std::to_string(d) + " evenly");
    }
  }
  return model;
}

// A value of the metric `name` at `path` (a target, a bound), within what the
// metric can be: an accuracy's 90 meant 0.9. Counts (params) and losses are
// at least 0, a perplexity at least 1.
std::optional<double> read_metric_value(YamlReader& r, const YAML::Node& n, const std::string& path,
                                        const std::string& name, const std::string& what) {
  // Shares of the examples or of the classes, in [0, 1] (F1 and AUC too).
  const bool accuracy = name.find("accuracy") != std::string::npos || name == "val_f1" || name == "val_auc" ||
                        name == "val_average_precision";
  const bool r2 = name == "val_r2";  // 1 is perfect; a model worse than the mean is below 0
  const double least = name.find("perplexity") != std::string::npos ? 1 : r2 ? -INFINITY : 0;
  auto v = r.read_number(n, path);
  if (v && (*v < least || ((accuracy || r2) && *v > 1))) {
    std::ostringstream range;
    range << name << " lies in " << (r2 ? "(-infinity" : "[" + std::to_string(static_cast<int>(least))) << ", "
          << (accuracy || r2 ? "1]" : "infinity)");
    r.error(n, path,
            "expected a value " + name + " can reach, got " + describe_node(n) + ": " + range.str() +
                (accuracy && *v <= 100 ? " (a " + what + " of 90% is 0.9)" : ""));
    return std::nullopt;
  }
  return v;
}

// A metric's name and goal at `path` ("metric", or "metric[i]" in a list of
// objectives, where "params", the model's size, may be named too).
// The metrics a sweep's task reports; where its loss was refused, those of
// every loss the model takes on its dataset (the loss's error is the one to see).
std::vector<std::string> task_metric_names(const ModelSpec& model, const TaskOptions& task) {
  const auto losses = trainers::loss_names(model, task.dataset);
  if (std::find(losses.begin(), losses.end(), task.loss) != losses.end()) {
    return trainers::metric_names(trainers::task_kind(model, task.loss));
  }
  std::vector<std::string> out;
  for (const auto& loss : losses) {
    for (const auto& name : trainers::metric_names(trainers::task_kind(model, loss))) {
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

// Why a metric of another kind of task is not this one's: a regression's
// errors on classes, an accuracy on a regression; "" for any other name.
std::string other_kinds_metric(const std::string& name, const ModelSpec& model, const TaskOptions& task) {
  const auto losses = trainers::loss_names(model, task.dataset);
  if (std::find(losses.begin(), losses.end(), task.loss) == losses.end()) return "";  // the loss's error says it
  const auto regression = trainers::metric_names(trainers::TaskKind::kRegression);
  const auto classes = trainers::metric_names(trainers::TaskKind::kClassification);  // (val_loss, train_loss: both)
  const bool regression_metric = std::find(regression.begin(), regression.end(), name) != regression.end() &&
                                 std::find(classes.begin(), classes.end(), name) == classes.end();
  const bool class_metric = std::find(classes.begin(), classes.end(), name) != classes.end() &&
                            std::find(regression.begin(), regression.end(), name) == regression.end();
  if (trainers::is_regression_loss(task.loss) && class_metric) {
    return name + " counts classes; task.loss " + task.loss + " learns a number, measured by " +
           join_alternatives(regression);
  }
  const auto kind = trainers::task_kind(model, task.loss);
  if (class_metric && name != "val_accuracy" && kind != trainers::TaskKind::kClassification &&
      kind != trainers::TaskKind::kRegression) {
    return name + " weighs classes of examples alike, a classifier's measure; " + model.name + " reports " +
           join_alternatives(trainers::metric_names(kind));
  }
  if (!regression_metric || trainers::is_regression_loss(task.loss)) return "";
  if (std::find(losses.begin(), losses.end(), "mse") != losses.end()) {
    return name + " measures a regression, and task.loss " + task.loss + " learns classes: to predict a number, set "
           "task.loss: mse (or l1, huber)";
  }
  return name + " measures a regression, on a table of your own (task.dataset: csv and task.loss: mse, with mlp); " +
         model.name + " on " + task.dataset + " reports " + join_alternatives(trainers::metric_names(model.kind));
}

// A metric named as other libraries name it ("rmse", "accuracy", a
// regression's "mse"), said as this one's name; "" for any other.
std::string metric_alias(const std::string& name, const std::vector<std::string>& names, const TaskOptions& task) {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  if (key.rfind("val_", 0) != 0) {
    for (const std::string& with : {"val_" + key, "val_" + key.substr(0, key.find("_score"))}) {
      if (std::find(names.begin(), names.end(), with) != names.end()) {
        return "did you mean '" + with + "'? (what is measured on the validation rows starts with val_)";
      }
    }
  }
  // sklearn's scorers' names, and AUROC.
  for (const auto& [others, ours] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"roc_auc", "roc_auc_ovr", "roc_auc_score", "auroc", "val_roc_auc", "val_auroc"}, "val_auc"},
           {{"f1_macro", "macro_f1", "val_f1_macro", "val_macro_f1"}, "val_f1"},
           {{"pr_auc", "pr-auc", "prauc", "auprc", "auc_pr", "prc_auc", "precision_recall_auc", "ap", "map",
             "val_pr_auc", "val_prauc", "val_auprc", "val_ap", "val_map"},
            "val_average_precision"},
           {{"ppl", "val_ppl", "val_perp"}, "val_perplexity"}}) {
    if (std::find(others.begin(), others.end(), key) != others.end() &&
        std::find(names.begin(), names.end(), ours) != names.end()) {
      return "did you mean '" + ours + "'?" + (ours == "val_f1"                  ? " (macro F1, the mean over the classes)"
                                               : ours == "val_average_precision" ? " (the area under the precision-recall curve)"
                                                                                 : "");
    }
  }
  if ((key == "mse" || key == "val_mse") && trainers::is_regression_loss(task.loss)) {
    return task.loss == "mse" ? "the validation rows' mean squared error, on the standardised label, is val_loss under "
                                "task.loss mse; val_rmse is its root in the label's units"
                              : "val_rmse is the root of the validation rows' mean squared error, in the label's units "
                                "(val_loss is task.loss " + task.loss + "'s)";
  }
  return "";
}

void load_metric_name_goal(YamlReader& r, const YAML::Node& node, const std::string& path, const ModelSpec* model,
                           const TaskOptions& task, bool objective, MetricOptions& out) {
  if (auto n = r.child(node, path, "name", true)) {
    if (!objective && n->IsScalar() && n->Scalar() == "params") {
      r.error(*n, path + ".name",
              "params (the model's size) is an objective to trade against a measured one: write metric as a list, "
              "[{name: val_accuracy, goal: maximize}, {name: params, goal: minimize}]");
    } else if (model) {
      auto names = task_metric_names(*model, task);
      if (objective) names.push_back("params");
      if (const std::string other = n->IsScalar() ? other_kinds_metric(n->Scalar(), *model, task) : ""; !other.empty()) {
        r.error(*n, path + ".name", other);
      } else if (const std::string hint = n->IsScalar() ? metric_alias(n->Scalar(), names, task) : ""; !hint.empty()) {
        r.error(*n, path + ".name", "'" + n->Scalar() + "' is not one of " + join_alternatives(names) + ": " + hint);
      } else if (auto i = r.read_enum(*n, path + ".name", names)) {
        out.name = names[*i];
      }
    } else if (auto s = r.read_string(*n, path + ".name")) {
      out.name = *s;
    }
  }
  read_enum_into(r, r.child(node, path, "goal", true), path + ".goal", out.goal);
}

// metric as a list: several objectives, as Optuna's directions.
void load_objectives(YamlReader& r, const YAML::Node& node, const ModelSpec* model, SweepConfig& sweep) {
  constexpr std::size_t kMost = 4;
  if (node.size() < 2 || node.size() > kMost) {
    r.error(node, "metric",
            "expected a mapping {name, goal}, or a list of 2 to " + std::to_string(kMost) +
                " such mappings (objectives), got a list of " + std::to_string(node.size()) +
                (node.size() == 1 ? " (one metric is a mapping: drop the '-')" : ""));
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string path = "metric[" + std::to_string(i) + "]";
    const YAML::Node item = node[i];
    if (!r.check_mapping(item, path, {"name", "goal", "target"}) || !item.IsMap()) continue;
    if (auto t = r.child(item, path, "target", false)) {
      r.error(*t, path + ".target", "a target ends a sweep at one metric's value; a sweep of several objectives has none");
    }
    MetricOptions o;
    load_metric_name_goal(r, item, path, model, sweep.task, true, o);
    if (o.name.empty()) continue;
    const bool repeated = std::any_of(sweep.objectives.begin(), sweep.objectives.end(),
                                      [&](const MetricOptions& seen) { return seen.name == o.name; });
    if (repeated) {
      r.error(item["name"], path + ".name", "'" + o.name + "' is already an objective");
    } else if (i == 0 && o.name == "params") {
      r.error(item["name"], path + ".name",
              "the first objective is the sweep's metric, which early stopping watches and the best trial is "
              "ranked by: put a measured metric first, params after it");
    }
    sweep.objectives.push_back(o);
  }
  if (!sweep.objectives.empty()) sweep.metric = sweep.objectives.front();
}

void load_metric(YamlReader& r, const YAML::Node& root, const ModelSpec* model,
                 SweepConfig& sweep) {
  auto node = r.child(root, "", "metric", true);
  if (!node) return;
  if (node->IsSequence()) return load_objectives(r, *node, model, sweep);
  r.check_mapping(*node, "metric", {"name", "goal", "target"});
  if (!node->IsMap()) return;
  load_metric_name_goal(r, *node, "metric", model, sweep.task, false, sweep.metric);
  if (auto n = r.child(*node, "metric", "target", false)) {
    sweep.metric.target = read_metric_value(r, *n, "metric.target", sweep.metric.name, "target");
  }
}

// A budget of a fraction (0.5 epochs, as BOHB's real-valued budgets) is
// refused with the way to give it: budgets count whole units, and a part of an
// epoch is a whole number of steps or samples. True where it refused.
bool refuse_a_fraction(YamlReader& r, const std::optional<YAML::Node>& node, const std::string& path, BudgetUnit unit) {
  if (!node || !node->IsScalar()) return false;
  const std::string& s = node->Scalar();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v <= 0 || v == std::floor(v)) return false;
  const char* finer = unit == BudgetUnit::kEpochs  ? "; a part of an epoch is a whole number of steps or samples (budget.unit: steps)"
                      : unit == BudgetUnit::kSteps ? "; a part of a step is a whole number of samples (budget.unit: samples)"
                                                   : "";
  r.error(*node, path,
          "expected a whole number of " + enum_names<BudgetUnit>()[static_cast<int>(unit)] + ", got " + s + finer);
  return true;
}

void load_budget(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "budget", true);
  if (!node) return;
  r.check_mapping(*node, "budget", {"unit", "min", "max"});
  if (!node->IsMap()) return;
  BudgetOptions& b = sweep.budget;
  read_enum_into(r, r.child(*node, "budget", "unit", false), "budget.unit", b.unit);
  const std::int64_t most = std::int64_t(1) << 40;
  auto min_node = r.child(*node, "budget", "min", false);
  if (!refuse_a_fraction(r, min_node, "budget.min", b.unit)) {
    read_int_in(r, min_node, "budget.min", 1, most, "the smallest budget a trial gets", b.min);
  }
  auto max_node = r.child(*node, "budget", "max", true);
  b.max = b.min;
  if (!refuse_a_fraction(r, max_node, "budget.max", b.unit)) {
    read_int_in(r, max_node, "budget.max", 1, most, "the budget of a fully trained trial", b.max);
  }
  if (min_node && max_node && b.min > b.max) {
    r.error(*min_node, "budget.min",
            "min (" + std::to_string(b.min) + ") is greater than max (" + std::to_string(b.max) +
                ")");
  }
}

// The stopping rule's keys, read once search.stopping and budget are: Ray
// Tune's grace_period and min_samples_required, Optuna's percentile.
void load_stopping_rule(YamlReader& r, const YAML::Node& node, SweepConfig& sweep) {
  SearchOptions& s = sweep.search;
  s.grace_period = sweep.budget.min;
  const bool rule = s.stopping != Stopping::kNone;
  for (const char* key : {"grace_period", "min_samples", "percentile"}) {
    if (auto n = r.child(node, "search", key, false); n && !rule) {
      r.error(*n, std::string("search.") + key,
              std::string("'") + key + "' is the stopping rule's; it needs stopping: median or percentile");
    }
  }
  if (!rule) return;
  if (auto n = r.child(node, "search", "grace_period", false)) {
    std::int64_t grace = 0;
    read_int_in(r, n, "search.grace_period", 1, std::int64_t(1) << 40,
                "the budget before which no trial stops, in budget.unit", grace);
    // (At most budget.min is the default: the rule compares from the first step.)
    const std::int64_t min = sweep.budget.min, max = sweep.budget.max;
    if (grace > min && grace >= max) {
      r.error(*n, "search.grace_period",
              "expected a grace_period below budget.max (" + std::to_string(max) + "), got " + std::to_string(grace) +
                  ": the rule stops trials before budget.max, so none would stop");
    } else if (grace > min && (grace + min - 1) / min * min >= max) {
      r.error(*n, "search.grace_period",
              "the rule compares the trials at budget.min (" + std::to_string(min) + "), twice it, ... and budget.max (" +
                  std::to_string(max) + "), and the first of these at or past grace_period " + std::to_string(grace) +
                  " is budget.max, where stopping saves nothing: expected a grace_period of at most " +
                  std::to_string((max - 1) / min * min));
    } else if (grace > 0) {
      s.grace_period = grace;
    }
  }
  // (One past search.trials - 1 leaves the rule idle: plan notes it, as the default 3 may.)
  read_int_in(r, r.child(node, "search", "min_samples", false), "search.min_samples", 1, kMaxTrials,
              "other trials that must have reached a budget before the rule stops a trial there", s.min_samples);
  auto percentile = r.child(node, "search", "percentile", s.stopping == Stopping::kPercentile);
  if (percentile && s.stopping == Stopping::kMedian) {
    r.error(*percentile, "search.percentile",
            "stopping: median compares with the median (percentile 50); for another share write stopping: "
            "percentile");
  } else {
    read_number_where(r, percentile, "search.percentile", [](double v) { return v > 0 && v <= 100; },
                      "expected a percentage in (0, 100] (a trial goes on while its best is as good as the others' "
                      "running average at that percentile, counted from the best; 50 is the median)",
                      s.percentile);
  }
}

// Population based training's keys, named as Ray Tune's PBT names them.
void load_pbt(YamlReader& r, const YAML::Node& node, SearchOptions& s) {
  read_int_in(r, r.child(node, "search", "population", true), "search.population", 2, kMaxTrials,
              "members trained together; each generation replaces the worst of them", s.population);
  read_number_where(r, r.child(node, "search", "quantile_fraction", false), "search.quantile_fraction",
                    [](double v) { return v > 0 && v <= 0.5; },
                    "expected a share in (0, 0.5] (each generation the worst share takes the state of the best share)",
                    s.quantile_fraction);
  read_number_where(r, r.child(node, "search", "resample_probability", false), "search.resample_probability",
                    [](double v) { return v >= 0 && v <= 1; },
                    "expected a probability in [0, 1] (of drawing a value again rather than perturbing it)",
                    s.resample_probability);
  read_int_in(r, r.child(node, "search", "burn_in_period", false), "search.burn_in_period", 0, 1LL << 53,
              "budget before which no generation exploits", s.burn_in_period);
  if (auto explore = r.child(node, "search", "explore", false)) {
    if (!explore->IsSequence() || explore->size() == 0) {
      r.error(*explore, "search.explore",
              "expected a list of the parameters explore may change (as [lr, momentum]), got " +
                  (explore->IsSequence() ? std::string("an empty list") : describe_node(*explore)));
    } else {
      for (std::size_t k = 0; k < explore->size(); ++k) {
        auto name = r.read_string((*explore)[k], "search.explore[" + std::to_string(k) + "]");
        if (name) s.explore.push_back(*name);
      }
    }
  }
  auto factors = r.child(node, "search", "perturbation_factors", false);
  if (!factors) return;
  const std::string expected =
      "expected a list of positive numbers below 1,000,000 that explore multiplies a value by (as [1.2, 0.8])";
  if (!factors->IsSequence() || factors->size() == 0 || factors->size() > 100) {
    r.error(*factors, "search.perturbation_factors",
            expected + ", got " + (factors->IsSequence() && factors->size() == 0 ? "an empty list" : describe_node(*factors)));
    return;
  }
  std::vector<double> read;
  for (std::size_t k = 0; k < factors->size(); ++k) {
    const std::string path = "search.perturbation_factors[" + std::to_string(k) + "]";
    double v = 0;
    read_number_where(r, (*factors)[k], path, [](double x) { return x > 0 && x < 1e6; }, expected, v);
    read.push_back(v);
  }
  s.perturbation_factors = std::move(read);
}

// search.warm_start: a directory, or a list of up to 16, of earlier sweeps
// whose results a searcher that learns from results starts from. Read (to
// check them) by the verbs that take a sweep file, as task.data's tables.
void load_warm_start(YamlReader& r, const YAML::Node& search, SearchOptions& s) {
  auto node = r.child(search, "search", "warm_start", false);
  if (!node) return;
  const std::string path = "search.warm_start";
  if (s.searcher != Searcher::kTpe && s.searcher != Searcher::kGp && s.searcher != Searcher::kCmaEs) {
    r.error(*node, path,
            "earlier results start a searcher that learns from results (tpe, gp or cmaes); searcher " +
                to_string(s.searcher) + " draws its trials whatever the results: set searcher: tpe, gp or cmaes, or remove search.warm_start");
    return;
  }
  std::vector<YAML::Node> items;
  if (node->IsScalar()) {
    items.push_back(*node);
  } else if (node->IsSequence() && node->size() >= 1 && node->size() <= 16) {
    for (const auto& item : *node) items.push_back(item);
  } else {
    r.error(*node, path,
            "expected an experiment directory of an earlier sweep, or a list of 1 to 16 of them, got " +
                (node->IsSequence() ? node->size() == 0 ? std::string("an empty list") : "a list of " + std::to_string(node->size())
                                     : describe_node(*node)));
    return;
  }
  s.warm_start_file = r.file();
  for (std::size_t k = 0; k < items.size(); ++k) {
    const std::string at = node->IsSequence() ? path + "[" + std::to_string(k) + "]" : path;
    auto text = r.read_string(items[k], at);
    if (!text) continue;
    if (text->empty()) {
      r.error(items[k], at, "an empty path; give the experiment directory of an earlier sweep");
      continue;
    }
    if (std::find(s.warm_start.begin(), s.warm_start.end(), *text) != s.warm_start.end()) {
      r.error(items[k], at, "names " + *text + " a second time; its results would count twice");
      continue;
    }
    s.warm_start.push_back(*text);
    s.warm_sources.push_back({from_sweep_file(*text, r.file()), at, items[k].Mark().line + 1, items[k].Mark().column + 1});
  }
}

void load_search(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "search", true);
  const std::vector<std::string> all = {"method",   "searcher", "eta",           "trials",         "repeats",
                                        "stopping", "waves",    "promotion_wait", "align_brackets", "iterations",
                                        "points_to_evaluate", "grace_period", "min_samples", "percentile",
                                        "population", "quantile_fraction", "resample_probability",
                                        "perturbation_factors", "explore", "burn_in_period", "multivariate",
                                        "warm_start"};
  if (!node) return;
  // The keys each method uses; any other known key is a mistake worth naming.
  auto keys_of = [](SearchMethod m) -> std::vector<std::string> {
    switch (m) {
      case SearchMethod::kRandom:
        return {"searcher", "trials", "stopping", "waves", "population", "multivariate", "points_to_evaluate",
                "grace_period", "min_samples", "percentile", "warm_start"};
      case SearchMethod::kGrid: return {"repeats"};
      case SearchMethod::kHyperband:
        return {"searcher", "eta", "align_brackets", "iterations", "multivariate", "points_to_evaluate", "warm_start"};
      case SearchMethod::kSha:
        return {"searcher", "eta", "trials", "waves", "population", "multivariate", "points_to_evaluate", "warm_start"};
      case SearchMethod::kAsha:
        return {"searcher", "eta",           "trials",             "waves",     "population",
                "multivariate", "promotion_wait", "points_to_evaluate", "warm_start"};
      case SearchMethod::kPbt:
        return {"searcher", "population", "quantile_fraction", "resample_probability", "perturbation_factors",
                "explore", "burn_in_period", "points_to_evaluate"};
    }
    return {};
  };
  // An unknown key's hint lists what the method takes, once the method is
  // known (known keys it does not take are named below, with why).
  std::vector<std::string> allowed = all;
  if (node->IsMap() && (*node)["method"] && (*node)["method"].IsScalar()) {
    const auto names = enum_names<SearchMethod>();
    const auto it = std::find(names.begin(), names.end(), (*node)["method"].Scalar());
    if (it != names.end()) {
      allowed = keys_of(static_cast<SearchMethod>(it - names.begin()));
      allowed.insert(allowed.begin(), "method");
      for (const auto& entry : *node) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (std::find(all.begin(), all.end(), key) != all.end() &&
            std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
          allowed.push_back(key);
        }
      }
    }
  }
  r.check_mapping(*node, "search", allowed);
  if (!node->IsMap()) return;
  SearchOptions& s = sweep.search;
  auto method_node = r.child(*node, "search", "method", true);
  if (!method_node) return;
  auto method = r.read_enum(*method_node, "search.method", enum_names<SearchMethod>());
  if (!method) return;
  s.method = static_cast<SearchMethod>(*method);
  const std::vector<std::string> uses = keys_of(s.method);
  for (const auto& entry : *node) {
    const std::string key = entry.first.Scalar();
    if (key == "method" || std::find(all.begin(), all.end(), key) == all.end()) continue;
    if (std::find(uses.begin(), uses.end(), key) == uses.end()) {
      std::string hint = key == "trials" && s.method == SearchMethod::kHyperband
                             ? " (Hyperband sets each bracket's trials from budget and eta; for more trials, repeat its brackets "
                               "with search.iterations)"
                         : key == "grace_period"
                             ? " (Ray Tune's ASHA grace_period is budget.min here; search.grace_period is the stopping "
                               "rule's, under method random)"
                         : key == "trials" && s.method == SearchMethod::kPbt
                             ? " (population based training trains search.population members, and makes a new "
                               "trial for each member it replaces)"
                             : "";
      r.error(entry.first, "search." + key,
              "'" + key + "' is not used by method " + to_string(s.method) + hint +
                  "; it takes " + (uses.empty() ? "no other keys" : join_alternatives(uses)));
    }
  }
  auto has = [&](const char* key) {
    return std::find(uses.begin(), uses.end(), key) != uses.end();
  };

  if (s.method == SearchMethod::kGrid) {
    s.searcher = Searcher::kGrid;
  } else if (auto n = r.child(*node, "search", "searcher", false)) {
    if (auto i = r.read_enum(*n, "search.searcher", {"random", "tpe", "qmc", "cmaes", "gp"})) {
      s.searcher = std::array{Searcher::kRandom, Searcher::kTpe, Searcher::kQmc, Searcher::kCmaEs, Searcher::kGp}.at(*i);
      if (s.method == SearchMethod::kPbt && s.searcher != Searcher::kRandom && s.searcher != Searcher::kQmc) {
        r.error(*n, "search.searcher",
                "population based training draws its population with searcher random or qmc; it learns from "
                "results by its exploit and explore steps, not by a model of them (" + to_string(s.searcher) + ")");
      } else if (s.method == SearchMethod::kHyperband && s.searcher == Searcher::kCmaEs) {
        r.error(*n, "search.searcher",
                "CMA-ES ranks each generation at one budget, and Hyperband's brackets start their trials at "
                "different budgets: write method sha, asha (one bracket) or random for CMA-ES, or searcher tpe (BOHB)");
      }
    }
  }
  if (s.method == SearchMethod::kPbt) load_pbt(r, *node, s);
  if (has("eta")) {
    read_int_in(r, r.child(*node, "search", "eta", false), "search.eta", 2, 1000,
                "each rung keeps the best 1/eta of its trials, so eta must be at least 2", s.eta);
  }
  if (has("trials")) {
    read_int_in(r, r.child(*node, "search", "trials", true), "search.trials", 1, kMaxTrials,
                "configurations to sample", s.trials);
  }
  if (has("repeats")) {
    read_int_in(r, r.child(*node, "search", "repeats", false), "search.repeats", 1, 100000,
                "runs of each grid point with distinct seeds", s.repeats);
  }
  if (has("stopping")) {
    // A stopping value that could not be read says nothing of the rule's keys.
    auto n = r.child(*node, "search", "stopping", false);
    const auto i = n ? r.read_enum(*n, "search.stopping", enum_names<Stopping>()) : std::nullopt;
    if (i) s.stopping = static_cast<Stopping>(*i);
    if (!n || i) load_stopping_rule(r, *node, sweep);
  }
  if (has("align_brackets")) {
    if (auto n = r.child(*node, "search", "align_brackets", false)) {
      if (auto v = r.read_bool(*n, "search.align_brackets")) s.align_brackets = *v;
    }
  }
  if (has("iterations")) {
    read_int_in(r, r.child(*node, "search", "iterations", false), "search.iterations", 1, 1000,
                "times Hyperband runs its brackets, with new trials each time", s.iterations);
  }
  if (has("population") && s.method != SearchMethod::kPbt) {
    if (auto n = r.child(*node, "search", "population", false)) {
      if (s.searcher != Searcher::kCmaEs) {
        r.error(*n, "search.population",
                "search.population is the size of CMA-ES's generations (searcher: cmaes) or of population based "
                "training's (method: pbt)");
      } else {
        read_int_in(r, n, "search.population", 4, kMaxTrials,
                    "trials in each CMA-ES generation; by default 4 + floor(3 ln d), d the parameters it searches",
                    s.population);
      }
    }
  }
  if (has("multivariate")) {
    if (auto n = r.child(*node, "search", "multivariate", false)) {
      if (auto v = r.read_bool(*n, "search.multivariate"); v && *v && s.searcher != Searcher::kTpe) {
        r.error(*n, "search.multivariate",
                "multivariate is an option of searcher: tpe (Optuna's multivariate TPE), not of searcher " +
                    to_string(s.searcher) + ": set searcher: tpe, or leave it out");
      } else if (v) {
        s.multivariate = *v;
      }
    }
  }
  if (has("waves")) {
    if (auto n = r.child(*node, "search", "waves", false)) {
      read_int_in(r, n, "search.waves", 1, 1000, "parts the new trials start in", s.waves);
      if (!models_results(s.searcher)) {
        r.error(*n, "search.waves",
                s.searcher == Searcher::kCmaEs
                    ? "CMA-ES starts each generation (search.population trials) as a wave of its own"
                    : "waves are for searcher: tpe or gp (random and qmc search propose the same trials whatever the "
                      "results, so waves would only make the arrays narrower)");
      } else if (s.trials > 0 && s.waves > s.trials) {
        r.error(*n, "search.waves",
                "expected at most search.trials (" + std::to_string(s.trials) + ") waves, got " +
                    std::to_string(s.waves));
      }
    }
  }
  if (has("promotion_wait")) {
    read_number_where(r, r.child(*node, "search", "promotion_wait", false), "search.promotion_wait",
                      [](double v) { return v >= 0 && v <= 3600; }, "expected seconds in [0, 3600]", s.promotion_wait);
  }
  if (has("warm_start")) load_warm_start(r, *node, s);
}

void load_early_stopping(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "early_stopping", false);
  if (!node) return;
  r.check_mapping(*node, "early_stopping", {"patience", "min_delta", "divergence"});
  if (!node->IsMap()) return;
  EarlyStoppingOptions& e = sweep.early_stopping;
  e.enabled = true;
  read_int_in(r, r.child(*node, "early_stopping", "patience", false), "early_stopping.patience",
              0, 1000000, "evaluations without improvement before a model stops (0: divergence alone)", e.patience);
  read_number_where(r, r.child(*node, "early_stopping", "min_delta", false), "early_stopping.min_delta",
                    [](double v) { return v >= 0; }, "expected a number >= 0 (the smallest improvement)", e.min_delta);
  read_number_where(r, r.child(*node, "early_stopping", "divergence", false), "early_stopping.divergence",
                    [](double v) { return v > 0; },
                    "expected a loss bound > 0 (a model whose training loss exceeds it diverged)", e.divergence);
}

void load_fusion(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "fusion", false);
  if (!node) return;
  r.check_mapping(*node, "fusion", {"enabled", "max_array", "memory_fraction", "min_gain"});
  if (!node->IsMap()) return;
  FusionOptions& f = sweep.fusion;
  if (auto enabled = r.child(*node, "fusion", "enabled", false)) {
    // A key named `enabled` invites a boolean: true is auto, false is off.
    const std::string& text = enabled->IsScalar() ? enabled->Scalar() : "";
    const bool boolean = enabled->IsScalar() && enabled->Tag() != "!" &&
                         (text == "true" || text == "True" || text == "TRUE" || text == "false" || text == "False" ||
                          text == "FALSE");
    if (boolean) {
      f.enabled = r.read_bool(*enabled, "fusion.enabled").value_or(true) ? FusionMode::kAuto : FusionMode::kOff;
    } else {
      read_enum_into(r, enabled, "fusion.enabled", f.enabled);
    }
  }
  read_int_in(r, r.child(*node, "fusion", "max_array", false), "fusion.max_array", 1, 4096,
              "most models in one array", f.max_array);
  read_number_where(r, r.child(*node, "fusion", "memory_fraction", false), "fusion.memory_fraction",
                    [](double v) { return v > 0 && v <= 1; }, "expected a fraction in (0, 1] of device memory",
                    f.memory_fraction);
  read_number_where(r, r.child(*node, "fusion", "min_gain", false), "fusion.min_gain",
                    [](double v) { return v >= 0 && v <= 10; },
                    "expected a share in [0, 10] (0.1: arrays must train 10% faster than one model)", f.min_gain);
}

void load_seed(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  auto node = r.child(root, "", "seed", false);
  if (!node) return;
  std::int64_t seed = 0;
  read_int_in(r, node, "seed", 0, std::numeric_limits<std::int64_t>::max(), "every trial's configuration and seed follow from it", seed);
  sweep.seed = static_cast<std::uint64_t>(seed);
}

[[noreturn]] void reject(YamlReader& r) {
  auto diagnostics = r.diagnostics();
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                   });
  throw ConfigError(std::move(diagnostics));
}

}  // namespace

// How many trials the sweep starts: a sweep of millions is a typo (a budget in
// samples with budget.min left at 1) that would take the planner's memory.
void check_trial_count(YamlReader& r, const YAML::Node& root, const SweepConfig& sweep) {
  const auto& s = sweep.search;
  std::int64_t trials = 0;
  std::string what, path, remedy;
  if (s.method == SearchMethod::kHyperband) {
    const std::int64_t pass = search::started_trials(search::hyperband_brackets(sweep.budget.max, sweep.budget.min, s.eta));
    trials = pass > kMaxTrials ? pass : pass * s.iterations;
    what = "Hyperband's brackets from budget.min " + std::to_string(sweep.budget.min) + " to budget.max " +
           std::to_string(sweep.budget.max) + " at eta " + std::to_string(s.eta) +
           (s.iterations > 1 ? ", " + std::to_string(s.iterations) + " iterations," : "") + " start";
    // Where one pass fits, the iterations are what is too many.
    path = pass <= kMaxTrials && s.iterations > 1 ? "search" : "budget";
    remedy = s.iterations > 1 ? "raise budget.min, lower budget.max, or run fewer search.iterations"
                              : "raise budget.min, or lower budget.max";
  } else if (s.method == SearchMethod::kGrid) {
    trials = s.repeats;
    for (const auto& p : sweep.parameters) {
      if (p.distribution != search::Distribution::kGrid) continue;
      trials = trials > kMaxTrials ? trials : trials * static_cast<std::int64_t>(p.values.size());
    }
    what = "the grid's points times search.repeats come to";
    path = "parameters";
    remedy = "fewer grid values, or fewer repeats";
  }
  if (trials <= kMaxTrials) return;
  auto node = r.child(root, "", path, false);
  if (node && path == "budget") {  // at budget.max (the budget section's own line is not kept)
    node = r.child(*node, "budget", "max", false);
    path = "budget.max";
  } else if (node && path == "search") {
    node = r.child(*node, "search", "iterations", false);
    path = "search.iterations";
  }
  const std::string count = trials > kMaxTrials * 1000 ? "over " + std::to_string(kMaxTrials * 1000) : std::to_string(trials);
  r.error(node ? *node : root, path,
          what + " " + count + " trials; at most " + std::to_string(kMaxTrials) + " (" + remedy + ")");
}

// Reports at budget.min, or at budget.max where asked or where min is left at its default.
void budget_error(YamlReader& r, const YAML::Node& root, bool at_max, const std::string& message) {
  auto node = r.child(root, "", "budget", false);
  auto min = node && !at_max ? r.child(*node, "budget", "min", false) : std::nullopt;
  auto at = min ? min : node ? r.child(*node, "budget", "max", false) : std::nullopt;
  r.error(at ? *at : root, min || !at ? "budget.min" : "budget.max", message);
}

// Population based training draws its population and changes, between
// generations, only what a model can take up mid-training.
// constraints: bounds on measured metrics or params, as Optuna's constraints_func.
void load_constraints(YamlReader& r, const YAML::Node& root, const ModelSpec* model, SweepConfig& sweep) {
  auto node = r.child(root, "", "constraints", false);
  if (!node) return;
  constexpr std::size_t kMost = 8;
  if (!node->IsSequence() || node->size() == 0 || node->size() > kMost) {
    r.error(*node, "constraints",
            "expected a list of 1 to " + std::to_string(kMost) + " bounds {name, min, max} (such as {name: params, max: "
            "100000}), got " + (node->IsSequence() ? "a list of " + std::to_string(node->size()) : describe_node(*node)));
    return;
  }
  for (std::size_t i = 0; i < node->size(); ++i) {
    const std::string path = "constraints[" + std::to_string(i) + "]";
    const YAML::Node item = (*node)[i];
    if (!r.check_mapping(item, path, {"name", "min", "max"}) || !item.IsMap()) continue;
    ConstraintOptions c;
    if (auto n = r.child(item, path, "name", true)) {
      if (model) {
        auto names = task_metric_names(*model, sweep.task);
        names.push_back("params");
        if (const std::string other = n->IsScalar() ? other_kinds_metric(n->Scalar(), *model, sweep.task) : "";
            !other.empty()) {
          r.error(*n, path + ".name", other);
        } else if (const std::string hint = n->IsScalar() ? metric_alias(n->Scalar(), names, sweep.task) : "";
                   !hint.empty()) {
          r.error(*n, path + ".name", "'" + n->Scalar() + "' is not one of " + join_alternatives(names) + ": " + hint);
        } else if (auto k = r.read_enum(*n, path + ".name", names)) {
          c.name = names[*k];
        }
      } else if (auto s = r.read_string(*n, path + ".name")) {
        c.name = *s;
      }
    }
    if (auto n = r.child(item, path, "min", false)) c.min = read_metric_value(r, *n, path + ".min", c.name, "bound");
    if (auto n = r.child(item, path, "max", false)) c.max = read_metric_value(r, *n, path + ".max", c.name, "bound");
    if (!item["min"] && !item["max"]) {
      r.error(item, path, "a constraint bounds its metric: give max, min or both");
    } else if (c.min && c.max && !(*c.min < *c.max)) {
      r.error(item["min"], path + ".min", "min must be below max, or no result can meet it");
    }
    const bool repeated = std::any_of(sweep.constraints.begin(), sweep.constraints.end(),
                                      [&](const ConstraintOptions& seen) { return seen.name == c.name; });
    if (repeated && !c.name.empty()) {
      r.error(item["name"], path + ".name", "'" + c.name + "' is bounded already: give both bounds in one constraint");
    }
    sweep.constraints.push_back(c);
  }
}

// Several objectives: the methods that rank one number refuse them.
void check_objectives(YamlReader& r, const YAML::Node& root, const SweepConfig& sweep) {
  const YAML::Node search = root["search"];
  if (!sweep.constraints.empty() && sweep.search.stopping != Stopping::kNone) {
    r.error(search["stopping"], "search.stopping",
            "the " + to_string(sweep.search.stopping) +
                " stopping rule compares the metric whatever the constraints, and would stop the trials that meet "
                "them for those that do not; write hyperband, sha or asha to stop trials early");
  }
  if (sweep.objectives.empty()) return;
  if (sweep.search.searcher == Searcher::kCmaEs || sweep.search.searcher == Searcher::kGp) {
    r.error(search["searcher"], "search.searcher",
            std::string(sweep.search.searcher == Searcher::kCmaEs
                            ? "CMA-ES ranks a generation by one value (as Optuna's CmaEsSampler)"
                            : "the Gaussian process models one value") +
                "; several objectives need searcher random, qmc or tpe (MOTPE)");
  } else if (sweep.search.method == SearchMethod::kPbt) {
    r.error(search["method"], "search.method",
            "population based training copies the best members by one metric; several objectives need random, grid, "
            "hyperband, sha or asha");
  } else if (sweep.search.stopping != Stopping::kNone) {
    r.error(search["stopping"], "search.stopping",
            "the " + to_string(sweep.search.stopping) +
                " stopping rule compares one metric; with several objectives, write hyperband, sha or asha to stop "
                "trials early (they rank rungs by Pareto fronts)");
  }
}

// CMA-ES needs a numeric range that every trial has; its population defaults to Hansen's.
void check_cmaes(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  if (sweep.search.searcher != Searcher::kCmaEs) return;
  const auto space = make_search_space(sweep);
  if (search::CmaEsSearcher::dimensions(space).empty()) {
    r.error(root["search"]["searcher"], "search.searcher",
            "CMA-ES searches numeric ranges (uniform, log_uniform, int_uniform, int_log_uniform, quantized) that "
            "every trial has, and this sweep has none (one that some trials lack, by its `when`, or with branches is drawn "
            "at random): "
            "write searcher tpe or random");
  } else if (sweep.search.population == 0) {
    sweep.search.population = static_cast<std::int64_t>(search::CmaEsSearcher::default_population(space));
  }
}

void check_pbt(YamlReader& r, const YAML::Node& root, const SweepConfig& sweep) {
  if (sweep.search.method != SearchMethod::kPbt) return;
  auto params = r.child(root, "", "parameters", false);
  for (const auto& p : sweep.parameters) {
    if (p.distribution != search::Distribution::kGrid) continue;
    auto at = params ? r.child(*params, "parameters", p.name, false) : std::nullopt;
    r.error(at ? *at : root, parameter_path(p),
            "a grid is searched by method grid; population based training draws its population (write "
            "values: [...] to draw among them)");
    return;
  }
  auto search = r.child(root, "", "search", false);
  auto explore = search ? r.child(*search, "search", "explore", false) : std::nullopt;
  SweepConfig unchosen = sweep;
  unchosen.search.explore.clear();
  const std::set<std::string> may_change = pbt_mutable(unchosen);
  std::vector<std::string> tuned;
  for (const auto& p : sweep.parameters) tuned.push_back(p.name);
  const auto& names = pbt_mutable_names();
  for (std::size_t k = 0; k < sweep.search.explore.size(); ++k) {
    const std::string& name = sweep.search.explore[k];
    const std::string path = "search.explore[" + std::to_string(k) + "]";
    const YAML::Node at = explore ? (*explore)[k] : root;
    if (std::find(sweep.search.explore.begin(), sweep.search.explore.begin() + static_cast<std::ptrdiff_t>(k), name) !=
        sweep.search.explore.begin() + static_cast<std::ptrdiff_t>(k)) {
      r.error(at, path, "'" + name + "' is listed twice");
    } else if (!sweep.find_parameter(name)) {
      r.error(at, path, "'" + name + "' is not a parameter of this sweep" + did_you_mean(name, tuned));
    } else if (std::find(names.begin(), names.end(), name) == names.end()) {
      r.error(at, path,
              "'" + name + "' cannot change while a model trains (it shapes the model, its optimizer or its data); "
              "explore may change " + join_alternatives(names));
    } else if (!may_change.count(name)) {
      r.error(at, path,
              "'" + name + "' cannot be explored: it is constant (one value), or a `when` names it (which parameters a trial "
              "has must not change)");
    }
  }
  if (!r.ok()) return;
  auto budget = r.child(root, "", "budget", false);
  if (!budget || !r.child(*budget, "budget", "min", false)) {
    r.error(budget ? *budget : root, "budget.min",
            "population based training needs budget.min: the budget each generation trains before the worst "
            "members take the state of the best (Ray Tune's perturbation_interval)");
    return;
  }
  if (sweep.budget.min >= sweep.budget.max) {
    budget_error(r, root, false,
                 "budget.min " + std::to_string(sweep.budget.min) + " is budget.max: one generation, so population "
                 "based training would exploit nothing (that is method random); make budget.min a fraction of "
                 "budget.max");
    return;
  }
  if (sweep.search.burn_in_period >= sweep.budget.max) {
    auto at = search ? r.child(*search, "search", "burn_in_period", false) : std::nullopt;
    r.error(at ? *at : root, "search.burn_in_period",
            "a burn-in of " + std::to_string(sweep.search.burn_in_period) + " reaches budget.max " +
                std::to_string(sweep.budget.max) + ": no generation would exploit (that is method random)");
    return;
  }
  if (pbt_mutable(sweep).empty()) {
    std::string names;
    for (const auto& n : pbt_mutable_names()) names += (names.empty() ? "" : ", ") + n;
    auto at = search ? r.child(*search, "search", "method", false) : std::nullopt;
    r.error(at ? *at : root, "search.method",
            "population based training changes, between generations, the parameters a model can take up while it "
            "trains (" + names + "), and this sweep tunes none of them (a parameter a `when` names stays as drawn)");
    return;
  }
  constexpr std::int64_t kMostGenerations = 10000;
  const std::int64_t generations = (sweep.budget.max + sweep.budget.min - 1) / sweep.budget.min;
  if (generations > kMostGenerations) {
    budget_error(r, root, false,
                 "population based training would run " + std::to_string(generations) +
                     " generations (one every budget.min " + std::to_string(sweep.budget.min) +
                     " up to budget.max " + std::to_string(sweep.budget.max) + "); at most " +
                     std::to_string(kMostGenerations) + " (raise budget.min)");
  }
}

// Median stopping compares trials after every budget.min up to budget.max: a
// million steps of it is a typo (budget.min left at 1) that would take the
// scheduler's memory.
void check_median_steps(YamlReader& r, const YAML::Node& root, const SweepConfig& sweep) {
  constexpr std::int64_t kMostSteps = 10000;
  if (sweep.search.stopping == Stopping::kNone) return;
  const std::int64_t steps = (sweep.budget.max + sweep.budget.min - 1) / sweep.budget.min;
  if (steps <= kMostSteps) return;
  budget_error(r, root, false,
          to_string(sweep.search.stopping) + " stopping would compare the trials " + std::to_string(steps) + " times (after every budget.min " +
              std::to_string(sweep.budget.min) + " up to budget.max " + std::to_string(sweep.budget.max) +
              "); at most " + std::to_string(kMostSteps) + " (raise budget.min)");
}

// A step trains one whole batch, and a rung's budget in samples trains its
// nearest whole number of steps, at least one. Two rungs whose budgets round
// to the same steps would leave the later one nothing to train (the tuner
// would train it a step past its budget, and its results would not be the
// budget's): refused, at every batch size a trial may take. A table's rows
// are not known before it is read, and a step there may train fewer than a
// batch: read_sweep_table checks it, at the lines kept here.
void check_rung_steps(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  if (sweep.task.dataset == "csv") {
    // Where each metric is named: what the validation rows must allow (val_auc: two classes).
    auto mark = [&](const YAML::Node& item, const std::string& path) {
      if (item && item.IsMap() && item["name"]) {
        sweep.task.table.marks[path + ".name"] = {item["name"].Mark().line + 1, item["name"].Mark().column + 1};
      }
    };
    if (const YAML::Node metric = root["metric"]; metric && metric.IsMap()) mark(metric, "metric");
    for (const char* list : {"metric", "constraints"}) {
      const YAML::Node items = root[list];  // (a missing key's node is invalid: tested before use)
      for (std::size_t i = 0; items && items.IsSequence() && i < items.size(); ++i) {
        mark(items[i], std::string(list) + "[" + std::to_string(i) + "]");
      }
    }
    if (auto budget = r.child(root, "", "budget", false); budget && budget->IsMap()) {
      for (const char* key : {"min", "max"}) {
        if (auto n = r.child(*budget, "budget", key, false)) {
          sweep.task.table.marks[std::string("budget.") + key] = {n->Mark().line + 1, n->Mark().column + 1};
        }
      }
    }
    return;
  }
  if (auto problem = rung_steps_problem(sweep, known_train_examples(sweep).value_or(0))) {
    budget_error(r, root, problem->at_max, problem->message);
  }
}

// A batch of one example, where the model's batch norm normalises a channel
// over the batch alone (least_batch, catalog.h): refused. A larger batch size
// that leaves one example at an epoch's end is topped up instead (batch()).
void check_least_batch(YamlReader& r, const YAML::Node& root, const SweepConfig& sweep) {
  std::map<std::string, std::string> options;
  for (const auto& [key, value] : sweep.task.options) options[key] = search::to_string(value);
  // A shape option tuned (fuse: false) counts at each value a trial may take.
  for (const auto* tuned : sweep.parameter_branches("small_input")) {
    for (const auto& v : tuned->values) {
      if (search::to_string(v) == "false") options["small_input"] = "false";
    }
  }
  const auto sizes = batch_sizes(sweep);
  if (trainers::least_batch(sweep.task.model, options) < 2 || std::find(sizes.begin(), sizes.end(), 1) == sizes.end()) {
    return;
  }
  const std::string message = "a batch of 1 example: " + sweep.task.model + "'s batch norm normalises each channel "
                              "over the batch alone, which one example leaves nothing to normalise (PyTorch refuses it: "
                              "\"Expected more than 1 value per channel when training\"); a batch_size of at least 2";
  if (auto parameters = r.child(root, "", "parameters", false); parameters && parameters->IsMap()) {
    if (auto tuned = r.child(*parameters, "parameters", "batch_size", false)) {
      r.error(*tuned, "parameters.batch_size", message);
      return;
    }
  }
  auto task = r.child(root, "", "task", false);
  auto given = task && task->IsMap() ? r.child(*task, "task", "batch_size", false) : std::nullopt;
  r.error(given ? *given : task ? *task : root, "task.batch_size", message);
}

// Where `text` first stops being UTF-8 (a Latin-1 'ä' is one byte, 0xE4,
// that UTF-8 never has alone), or npos where it all is.
std::size_t first_non_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 && lead >= 0xc2 ? 2 : (lead >> 4) == 0xe ? 3
                               : (lead >> 3) == 0x1e && lead <= 0xf4                 ? 4
                                                                                     : 0;
    if (length == 0 || i + length > text.size()) return i;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return i;
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are no UTF-8 either.
    const auto second = length > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) || (lead == 0xf0 && second < 0x90) ||
        (lead == 0xf4 && second > 0x8f)) {
      return i;
    }
    i += length;
  }
  return std::string::npos;
}

// Where a quoted string opens and its line ends before its closing quote:
// YAML folds it on, through the keys below, to the next quote of its kind (or
// fails at some later line), so a missing quote reads as missing keys or an
// error elsewhere. No sweep value spans lines. Read as text, before YAML is:
// a quote opens where a value may start (a line's start, after "key: ", a
// "- " or "? " there, and in a flow list or mapping after "[", "{" or ","); a
// '#' after a space outside quotes begins a comment; a block scalar's lines
// (below a "|" or ">" value, more indented than its key) are its text.
namespace {

// What the parser's words most often mean in a sweep file, said after them
// ("end of map not found" alone tells a new user little).
std::string yaml_error_hint(const std::string& msg) {
  if (msg == YAML::ErrorMsg::END_OF_MAP) {
    return " (this line's indentation matches no level above it, or it starts a '- ' list item where a key belongs: "
           "a mapping's keys start in one column, and a list's items are indented under their key)";
  }
  if (msg == YAML::ErrorMsg::MAP_VALUE) {
    return " (a ':' where no key may start: a key indented deeper than the keys beside it, or a value holding ': ', "
           "which needs quotes)";
  }
  if (msg == YAML::ErrorMsg::END_OF_MAP_FLOW) return " (a {...} mapping opened above is not closed with '}')";
  if (msg == YAML::ErrorMsg::END_OF_SEQ_FLOW) return " (a [...] list opened above is not closed with ']')";
  if (msg == YAML::ErrorMsg::END_OF_SEQ) return " (a list's '- ' items start in one column)";
  if (msg == YAML::ErrorMsg::BLOCK_ENTRY) return " (a '- ' list item where a mapping's key was expected)";
  return "";
}

}  // namespace

std::optional<YAML::Mark> quote_left_open(const std::string& yaml) {
  int line = 0, flow = 0;  // flow: the [ and { open
  int block_indent = -1;   // inside a block scalar: its key's indentation
  for (std::size_t start = 0; start < yaml.size(); ++line) {
    const std::size_t end = std::min(yaml.find('\n', start), yaml.size());
    const std::size_t first = yaml.find_first_not_of(" \t\r", start);
    const int indent = static_cast<int>((first == std::string::npos ? end : std::min(first, end)) - start);
    if (block_indent >= 0 && (first == std::string::npos || first >= end || indent > block_indent)) {
      start = end + 1;
      continue;
    }
    block_indent = -1;
    bool may_start = true;  // at the line's start, a value may start
    char last = 0;          // the line's last character outside quotes and comments
    bool block = false;     // that character is a block scalar's indicator, at a value's start
    for (std::size_t i = start; i < end; ++i) {
      const char c = yaml[i];
      if (c == '#' && (i == start || yaml[i - 1] == ' ' || yaml[i - 1] == '\t')) break;
      if ((c == '\'' || c == '"') && may_start) {
        std::size_t j = i + 1;
        for (; j < end; ++j) {
          if (c == '"' && yaml[j] == '\\') {
            ++j;
          } else if (yaml[j] == c) {
            if (c == '\'' && j + 1 < end && yaml[j + 1] == '\'') {
              ++j;
            } else {
              break;
            }
          }
        }
        if (j >= end) {
          YAML::Mark mark;
          mark.pos = static_cast<int>(i);
          mark.line = line;
          mark.column = static_cast<int>(i - start);
          return mark;
        }
        i = j;
        may_start = false;
        last = c;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') continue;  // (spaces keep what may follow)
      const bool spaced = i + 1 == end || yaml[i + 1] == ' ' || yaml[i + 1] == '\t' || yaml[i + 1] == '\r';
      if (flow == 0 && (c == '|' || c == '>') && may_start) block = true;
      else if (!(block && (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-'))) block = false;
      last = c;
      if ((c == '[' || c == '{') && (may_start || flow > 0)) {
        ++flow;
        may_start = true;
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
        may_start = false;
      } else if (c == ',') {
        may_start = flow > 0;
      } else if (c == ':' && spaced) {
        may_start = true;
      } else if ((c == '-' || c == '?') && spaced && may_start) {
        may_start = true;  // a sequence entry or a complex key, where a value may start
      } else {
        may_start = false;
      }
    }
    if (block && last != 0) block_indent = indent;
    start = end + 1;
  }
  return std::nullopt;
}

SweepConfig load_sweep_string(const std::string& yaml, const std::string& source) {
  YamlReader r(source);
  YAML::Node root;
  // yaml-cpp decodes UTF-16 and UTF-32 by their byte-order marks or zero
  // bytes, and then reports positions and text that match nothing the user
  // sees: a sweep is UTF-8 (or ASCII) text.
  if (yaml.find('\0') != std::string::npos || yaml.rfind("\xff\xfe", 0) == 0 || yaml.rfind("\xfe\xff", 0) == 0) {
    r.error_at(YAML::Mark::null_mark(), "",
               "the file is not UTF-8 text (it holds zero bytes or a UTF-16 byte-order mark); save it as UTF-8");
    reject(r);
  }
  if (const std::size_t at = first_non_utf8(yaml); at != std::string::npos) {
    YAML::Mark mark;
    mark.pos = static_cast<int>(at);
    mark.line = static_cast<int>(std::count(yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    const std::size_t line_start = yaml.rfind('\n', at == 0 ? 0 : at - 1);
    mark.column = static_cast<int>(at - (line_start == std::string::npos || at == 0 ? 0 : line_start + 1));
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(yaml[at])));
    r.error_at(mark, "",
               std::string("the file is not UTF-8 text: byte ") + byte + " here is not UTF-8 (Latin-1 or Windows-1252 "
               "text, most likely); save it as UTF-8");
    reject(r);
  }
  // Lines that end in a carriage return alone (classic Mac OS) are one line
  // to YAML, which then reports a syntax error that names no cause.
  if (yaml.find('\r') != std::string::npos && yaml.find('\n') == std::string::npos) {
    r.error_at(YAML::Mark::null_mark(), "",
               "the file's lines end in a carriage return alone (classic Mac OS line endings); save it with LF "
               "or CRLF line endings");
    reject(r);
  }
  if (const auto open = quote_left_open(yaml)) {
    r.error_at(*open, "", "this quoted text has no closing quote on its line (YAML would read on through the lines "
                          "below it): close it");
    reject(r);
  }
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(yaml);
    if (documents.size() > 1) {
      r.error_at(documents[1].Mark(), "",
                 "the file holds " + std::to_string(documents.size()) +
                     " YAML documents (separated by ---); a sweep is one document");
      reject(r);
    }
    if (!documents.empty()) root = documents[0];
    apply_merge_keys(root);
  } catch (const YAML::DeepRecursion& e) {  // (whose own text says "bad file")
    r.error_at(e.mark, "",
               "not valid YAML: its lists and mappings nest " + std::to_string(e.depth()) +
                   " levels deep, more than the parser takes (a sweep nests a few)");
    reject(r);
  } catch (const YAML::Exception& e) {
    // (JSON is read as the YAML it is a part of; the parser's words are YAML's.)
    const bool json = source.size() >= 5 && source.compare(source.size() - 5, 5, ".json") == 0;
    r.error_at(e.mark, "", std::string(json ? "not valid JSON (read as YAML): " : "not valid YAML: ") + e.msg +
                               (json ? "" : yaml_error_hint(e.msg)));
    reject(r);
  }
  if (root.IsNull()) {
    r.error_at(YAML::Mark::null_mark(), "",
               "the file is empty; expected a sweep with name, task, metric, budget, search and "
               "parameters");
    reject(r);
  }
  if (!r.check_mapping(root, "",
                       {"name", "seed", "task", "metric", "budget", "search", "parameters",
                        "early_stopping", "fusion", "constraints"})) {
    if (!root.IsMap()) reject(r);
  }
  SweepConfig sweep;
  load_name(r, root, sweep);
  load_seed(r, root, sweep);
  const ModelSpec* model = load_task(r, root, sweep);
  load_metric(r, root, model, sweep);
  load_budget(r, root, sweep);
  load_search(r, root, sweep);
  if (auto params = r.child(root, "", "parameters", true)) {
    load_parameters(r, *params, model, sweep);
  }
  if (sweep.search.method != SearchMethod::kGrid) load_points(r, root, sweep);
  load_early_stopping(r, root, sweep);
  load_constraints(r, root, model, sweep);
  load_fusion(r, root, sweep);
  if (r.ok()) check_trial_count(r, root, sweep);
  if (r.ok()) check_median_steps(r, root, sweep);
  if (r.ok()) check_pbt(r, root, sweep);
  if (r.ok()) check_cmaes(r, root, sweep);
  if (r.ok()) check_objectives(r, root, sweep);
  if (r.ok()) check_rung_steps(r, root, sweep);
  if (r.ok()) check_least_batch(r, root, sweep);
  if (!r.ok()) reject(r);
  sweep.search.waves = trial_waves(sweep).count;  // as run will train it, whatever a later default
  std::sort(sweep.search.explore.begin(), sweep.search.explore.end());  // a set: its order changes no trial
  return sweep;
}

SweepConfig load_sweep_file(const std::string& path, std::string* text_read, std::size_t max_bytes) {
  struct stat info {};
  std::string problem;
  if (::stat(path.c_str(), &info) != 0) {
    problem = std::string("cannot read the sweep file: ") + std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    problem = "cannot read the sweep file: it is a directory";
    struct stat experiment {};
    if (::stat((path + "/sweep.json").c_str(), &experiment) == 0) {
      problem += " of an experiment (hfta-tune resume continues it, hfta-tune status shows it)";
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (problem.empty() && !in) {
    problem = std::string("cannot read the sweep file: ") + std::strerror(errno);
  }
  std::string text;
  if (problem.empty()) {
    char piece[1 << 16];
    while (text.size() <= max_bytes && in.read(piece, sizeof piece).gcount() > 0) {
      text.append(piece, static_cast<std::size_t>(in.gcount()));
    }
    if (text.size() > max_bytes) {
      problem = "the sweep file is larger than " + std::to_string(max_bytes >> 20) + " MiB: no sweep is (is it the right file?)";
    }
  }
  if (!problem.empty()) {
    Diagnostic d;
    d.file = path;
    d.message = problem;
    throw ConfigError({d});
  }
  if (text_read) *text_read = text;
  return load_sweep_string(text, path);
}

}  // namespace hfta::core
