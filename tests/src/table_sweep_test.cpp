// A sweep on a table of the user's own (task.dataset csv): how task.data
// loads, where its problems are said, and a run, a cut, a resume and a
// prediction from the exported model, as a user would go through them.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "../support/expect_rejected.h"
#include "../support/run_cli.h"
#include "../support/sweep_text.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/core/sweep_tables.h"

namespace hfta::core {
namespace {

using test::expect_rejected;
using test::line_of;
using test::sweep_yaml;

const std::string kTask =
    "task:\n"
    "  model: mlp\n"
    "  dataset: csv\n"
    "  batch_size: 16\n"
    "  data:\n"
    "    train: data/train.csv\n"
    "    test: /abs/test.csv\n"
    "    label: kind\n";

TEST(TableSweep, FilesAreReadFromTheSweepFilesDirectoryAndRecordedAsWritten) {
  const SweepConfig s = load_sweep_string(sweep_yaml({{"task", kTask}}), "/home/u/project/sweep.yaml");
  EXPECT_EQ(s.task.dataset, "csv");
  EXPECT_EQ(s.task.table.train, "data/train.csv");
  EXPECT_EQ(s.task.table.train_file, "/home/u/project/data/train.csv");
  EXPECT_EQ(s.task.table.test_file, "/abs/test.csv");
  EXPECT_EQ(s.task.table.label, "kind");
  EXPECT_EQ(s.task.table.marks.at("train").first, line_of(sweep_yaml({{"task", kTask}}), "train: data"));
  // sweep.json holds them as written: a copy of the sweep elsewhere (the
  // experiment's sweep.yaml) is the same sweep.
  const auto json = to_json(s);
  EXPECT_EQ(json.at("task").at("data"),
            nlohmann::json::parse(R"({"train": "data/train.csv", "test": "/abs/test.csv", "label": "kind"})"));
  const SweepConfig elsewhere = load_sweep_string(json.dump(), "/runs/x/sweep.json");
  EXPECT_EQ(elsewhere.task.table.train_file, "/runs/x/data/train.csv");
  EXPECT_EQ(elsewhere, s);
  // Through a pipe, from the working directory; ~/ from the home directory.
  EXPECT_EQ(load_sweep_string(sweep_yaml({{"task", kTask}}), "/dev/stdin").task.table.train_file, "data/train.csv");
  const char* was = std::getenv("HOME");
  const std::string home_was = was ? was : "";
  setenv("HOME", "/home/someone", 1);
  const std::string home = std::regex_replace(kTask, std::regex("data/train.csv"), "~/t.csv");
  EXPECT_EQ(load_sweep_string(sweep_yaml({{"task", home}}), "s.yaml").task.table.train_file, "/home/someone/t.csv");
  if (was) setenv("HOME", home_was.c_str(), 1); else unsetenv("HOME");
  // Before the table is read, the summary names the files and the defaults.
  EXPECT_NE(summarize(s).find("data        /home/u/project/data/train.csv, test /abs/test.csv (validation: a fifth of "
                              "its rows; label kind)"),
            std::string::npos)
      << summarize(s);
}

TEST(TableSweep, TaskDataIsForCsvAndCsvNeedsIt) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n"}}), "task.data", "model: mlp",
                  "missing required key 'data'");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  data: {train: t.csv}\n"}}), "task.data", "data:",
                  "names the CSV files of a table of your own, for dataset csv; dataset fashion_mnist (the model's) "
                  "is read from its own files: to train on the table, add dataset: csv");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: cnn\n  data: {train: t.csv}\n"}}), "task.data", "data:",
                  "dataset fashion_mnist (the model's) is read from its own files; model cnn does not train on tables "
                  "(mlp does)");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: fashion_mnist\n  data: {train: t.csv}\n"}}),
                  "task.data", "data:", "for dataset csv; dataset fashion_mnist is read from its own files");
  // A dataset refused is said once, there (task.data is for the one meant).
  for (const char* task : {"task:\n  model: cnn\n  dataset: csv\n  data: {train: t.csv}\n",
                           "task:\n  model: mlp\n  dataset: CSV\n  data: {train: t.csv}\n"}) {
    try {
      load_sweep_string(sweep_yaml({{"task", task}}), "sweep.yaml");
      ADD_FAILURE() << task;
    } catch (const ConfigError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      EXPECT_EQ(e.diagnostics().front().path, "task.dataset");
    }
  }
  expect_rejected(sweep_yaml({{"task", "task:\n  model: cnn\n  dataset: csv\n  data: {train: t.csv}\n"}}),
                  "task.dataset", "dataset: csv", "model cnn does not train on csv; it takes fashion_mnist");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n  data: {test: t.csv}\n"}}),
                  "task.data.train", "data:", "missing required key 'train'");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n  data: {train: ''}\n"}}),
                  "task.data.train", "data:", "an empty path");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n  data: {train: t.csv, lable: y}\n"}}),
                  "task.data.lable", "data:", "did you mean 'label'");
  expect_rejected(
      sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n  validation_size: 0.2\n  data: {train: t.csv}\n"}}),
      "task.validation_size", "validation_size", "a number of rows, not a share of them (0.2)");
  const SweepConfig rows = load_sweep_string(
      sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: csv\n  validation_size: 30\n  data: {train: t.csv}\n"}}));
  EXPECT_EQ(rows.task.validation_size, 30);
}

// A regression is asked for by its loss, on a table; its metrics are errors.
TEST(TableSweep, ARegressionIsAskedForByItsLossAndMeasuredByItsErrors) {
  const std::string task = kTask + "  loss: mse\n";
  const std::string rmse = "metric:\n  name: val_rmse\n  goal: minimize\n";
  const SweepConfig s = load_sweep_string(sweep_yaml({{"task", task}, {"metric", rmse}}));
  EXPECT_EQ(s.task.loss, "mse");
  for (const char* metric : {"val_mae", "val_r2", "val_loss", "train_loss"}) {
    const std::string goal = metric == std::string("val_r2") ? "maximize" : "minimize";
    EXPECT_NO_THROW(load_sweep_string(sweep_yaml(
        {{"task", task}, {"metric", "metric:\n  name: " + std::string(metric) + "\n  goal: " + goal + "\n"}})))
        << metric;
  }
  expect_rejected(sweep_yaml({{"task", task}}), "metric.name", "name: val_accuracy",
                  "val_accuracy counts classes; task.loss mse learns a number, measured by val_rmse, val_mae, val_r2, "
                  "val_loss or train_loss");
  expect_rejected(sweep_yaml({{"task", kTask}, {"metric", rmse}}), "metric.name", "name: val_rmse",
                  "val_rmse measures a regression, and task.loss cross_entropy learns classes: to predict a number, "
                  "set task.loss: mse (or l1, huber)");
  expect_rejected(sweep_yaml({{"metric", rmse}}), "metric.name", "name: val_rmse",
                  "val_rmse measures a regression, on a table of your own (task.dataset: csv and task.loss: mse, with "
                  "mlp); mlp on fashion_mnist reports val_accuracy, val_loss, train_loss, val_f1, val_balanced_accuracy, "
                  "val_auc or val_average_precision");
  // Another library's name for a loss is said as this one's; the metric then
  // is not blamed for the loss.
  expect_rejected(sweep_yaml({{"task", kTask + "  loss: mae\n"}, {"metric", rmse}}), "task.loss", "loss: mae",
                  "'mae' is not one of cross_entropy, mse, l1 or huber: the mean absolute error is l1 here");
  try {
    load_sweep_string(sweep_yaml({{"task", kTask + "  loss: mae\n"}, {"metric", rmse}}));
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
  }
  expect_rejected(sweep_yaml({{"task", kTask + "  loss: MSELoss\n"}, {"metric", rmse}}), "task.loss", "loss: MSELoss",
                  "PyTorch's MSELoss is mse here");
  expect_rejected(sweep_yaml({{"task", kTask + "  loss: reg:squarederror\n"}, {"metric", rmse}}), "task.loss",
                  "loss: reg:squarederror", "XGBoost's squared error is mse here");
  expect_rejected(sweep_yaml({{"task", task}, {"metric", "metric: {name: rmse, goal: minimize}\n"}}), "metric.name",
                  "name: rmse", "did you mean 'val_rmse'? (what is measured on the validation rows starts with val_)");
  expect_rejected(sweep_yaml({{"task", task}, {"metric", "metric: {name: r2_score, goal: maximize}\n"}}), "metric.name",
                  "name: r2_score", "did you mean 'val_r2'?");
  expect_rejected(sweep_yaml({{"task", task}, {"metric", "metric: {name: mse, goal: minimize}\n"}}), "metric.name",
                  "name: mse",
                  "the validation rows' mean squared error, on the standardised label, is val_loss under task.loss mse");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  loss: mse\n"}, {"metric", rmse}}), "task.loss", "loss: mse",
                  "mse learns a number from a table's column (regression): add task.dataset: csv and name the table "
                  "in task.data; fashion_mnist trains with cross_entropy");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: cnn\n  loss: huber\n"}}), "task.loss", "loss: huber",
                  "model cnn does not train on tables (mlp does)");
  // A metric every kind but a regression's and a GAN's has is no regression's (val_loss).
  expect_rejected(sweep_yaml({{"task", "task:\n  model: dcgan\n"}, {"metric", "metric: {name: val_loss, goal: minimize}\n"}}),
                  "metric.name", "name: val_loss", "'val_loss' is not one of val_fid, g_loss or d_loss");
  // R2 reaches 1 at best, and any negative value.
  expect_rejected(sweep_yaml({{"task", task}, {"metric", "metric:\n  name: val_r2\n  goal: maximize\n  target: 1.5\n"}}),
                  "metric.target", "target: 1.5", "val_r2 lies in (-infinity, 1]");
  EXPECT_NO_THROW(load_sweep_string(
      sweep_yaml({{"task", task}, {"metric", "metric:\n  name: val_r2\n  goal: maximize\n  target: -0.5\n"}})));
  // Class weights and class-balanced metrics are a classifier's.
  expect_rejected(sweep_yaml({{"task", task},
                              {"metric", rmse},
                              {"parameters", "parameters:\n  class_weight: {values: [none, balanced]}\n"}}),
                  "parameters.class_weight", "class_weight:",
                  "class_weight weighs a classifier's classes; task.loss mse learns a number, and no trial would read it");
  expect_rejected(sweep_yaml({{"task", task}, {"metric", "metric: {name: val_f1, goal: maximize}\n"}}), "metric.name",
                  "name: val_f1", "val_f1 counts classes; task.loss mse learns a number, measured by val_rmse");
  // Label smoothing smooths classes: a regression's trials would not read it.
  expect_rejected(sweep_yaml({{"task", task},
                              {"metric", rmse},
                              {"parameters", "parameters:\n  label_smoothing: {values: [0.0, 0.1]}\n"}}),
                  "parameters.label_smoothing", "label_smoothing:",
                  "label_smoothing smooths cross-entropy's classes; task.loss mse learns a number");
}

// A temporary directory holding a sweep file and its tables.
class TableFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hfta-table-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::create_directory(dir_ + "/data");
    setenv("HFTA_TUNE_RATES_UNTIMED", "1", 1);  // arrays sized by no clock (Cli's fixture says why)
  }
  void TearDown() override {
    unsetenv("HFTA_TUNE_RATES_UNTIMED");
    std::filesystem::remove_all(dir_);
  }

  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ + "/" + name) << text; }
  // An example's tables (configs/data/NAME_train.csv and NAME_test.csv) into dir_/data.
  void copy_tables(const std::string& name) const {
    for (const char* part : {"_train.csv", "_test.csv"}) {
      std::filesystem::copy_file(std::string(HFTA_SOURCE_DIR) + "/configs/data/" + name + part,
                                 dir_ + "/data/" + name + part, std::filesystem::copy_options::overwrite_existing);
    }
  }
  test::CliResult run(const std::string& args) const { return test::run_cli(args, dir_); }
  // `yaml` written as dir_/sweep.yaml and run into dir_/whole: the file's path, and the run.
  std::pair<std::string, test::CliResult> run_sweep(const std::string& yaml) const {
    write("sweep.yaml", yaml);
    return {dir_ + "/sweep.yaml", run("run " + dir_ + "/sweep.yaml --out " + dir_ + "/whole")};
  }

  // Two runs of one sweep: every trial's history the same, within float32's
  // rounding of `metric` (`relative` 0: exactly), and the best alike.
  static void expect_same_trials(const nlohmann::json& a, const nlohmann::json& b, const std::string& metric = "",
                                 double relative = 0) {
    ASSERT_EQ(a.at("trials").size(), b.at("trials").size());
    for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
      const auto& x = a.at("trials")[i].at("history");
      const auto& y = b.at("trials")[i].at("history");
      if (relative == 0) {
        EXPECT_EQ(x, y) << "trial " << i;
        continue;
      }
      ASSERT_EQ(x.size(), y.size());
      for (std::size_t k = 0; k < x.size(); ++k) {
        const double u = x[k].at(metric), v = y[k].at(metric);
        EXPECT_LE(std::fabs(u - v), relative * std::fabs(v)) << "trial " << i << " point " << k;
      }
    }
    if (relative == 0) EXPECT_EQ(a.at("best"), b.at("best"));
  }

  // scripts/predict_table.py on `rows` with trial `trial` of the experiment
  // `experiment` (in dir_): its exit code; what it wrote to stdout and stderr
  // goes to dir_/`name`.csv and dir_/`name`.txt.
  int predict(const std::string& experiment, const std::string& trial, const std::string& rows,
              const std::string& name) const {
    const std::string script = std::string(HFTA_SOURCE_DIR) + "/scripts/predict_table.py";
    return std::system(("/usr/bin/python3 " + script + " " + dir_ + "/" + experiment + " " + trial + " " + rows + " > " +
                        dir_ + "/" + name + ".csv 2> " + dir_ + "/" + name + ".txt")
                           .c_str());
  }
  static bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' 2>/dev/null") == 0; }

  // The ConfigError reading the sweep's table throws: its one diagnostic.
  Diagnostic refusal(const std::string& yaml) const {
    write("sweep.yaml", yaml);
    SweepConfig s = load_sweep_file(dir_ + "/sweep.yaml");
    try {
      read_sweep_table(s);
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.diagnostics().size(), 1u);
      return e.diagnostics().front();
    }
    ADD_FAILURE() << "read the table";
    return {};
  }

  std::string dir_;
};

TEST_F(TableFiles, ProblemsNameTheSweepsLineAndTheTablesRow) {
  write("data/train.csv", "a,b,kind\n1,2,x\n3,oops,y\n5,6,x\n7,8,y\n");
  write("data/good.csv", "a,b,kind\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,1,x\n");
  write("data/test.csv", "a,b,kind\n1,2,z\n");
  const std::string yaml = sweep_yaml({{"task", std::regex_replace(kTask, std::regex("/abs/test.csv"), "data/good.csv")}});
  const std::string good = std::regex_replace(yaml, std::regex("train: data/train.csv"), "train: data/good.csv");
  // At the sweep's line for the file, value or key at fault, with the table's own line.
  auto expect_at = [&](const std::string& sweep, const std::string& path, const std::string& needle,
                       const std::string& message) {
    SCOPED_TRACE(path);
    const Diagnostic d = refusal(sweep);
    EXPECT_EQ(d.path, path);
    EXPECT_EQ(d.line, line_of(sweep, needle));
    EXPECT_NE(d.message.find(message), std::string::npos) << d.message;
  };
  expect_at(yaml, "task.data.train", "train: data",
            dir_ + "/data/train.csv:3: column 'b' (column 2) holds 'oops', not a number: the column holds numbers "
                   "in 3 of its 4 rows; write this one as a plain number (no unit, thousands separator or currency "
                   "sign)");
  // The label: at task.data.label, with the column meant.
  expect_at(std::regex_replace(good, std::regex("label: kind"), "label: knd"), "task.data.label", "label: knd",
            "no column is named 'knd'; the columns: a, b, kind (did you mean 'kind'?)");
  // Rows held out beyond the table: at task.validation_size.
  expect_at(std::regex_replace(good, std::regex("  batch_size: 16\n"), "  batch_size: 16\n  validation_size: 5\n"),
            "task.validation_size", "validation_size: 5",
            "holds 5 rows of 2 classes; holding 5 out for validation leaves a class no row to train on");
  // A test table with a class the training rows never show.
  expect_at(std::regex_replace(good, std::regex("test: data/good.csv"), "test: data/test.csv"), "task.data.test",
            "test: data/test.csv", "test.csv:2: label z is no class of the training table (its classes: x, y)");
}

// A budget in samples on a table smaller than a batch: a step trains the
// whole table, so the rungs' steps are counted in its rows, not in batches
// (at batch_size 64, rungs to 20 and 60 samples would both be one step).
TEST_F(TableFiles, RungsInSamplesCountTheTablesRowsWhereTheyAreFewerThanABatch) {
  std::string rows = "a,b,kind\n";
  for (int i = 0; i < 20; ++i) rows += std::to_string(i) + "," + std::to_string(i % 3) + "," + (i % 2 ? "x\n" : "y\n");
  write("data/train.csv", rows);
  const std::string task = std::regex_replace(std::regex_replace(kTask, std::regex("    test: /abs/test.csv\n"), ""),
                                              std::regex("batch_size: 16"), "batch_size: 64");
  auto sweep = [&](int min, int max) {
    return sweep_yaml({{"task", task},
                       {"budget", "budget:\n  unit: samples\n  min: " + std::to_string(min) + "\n  max: " +
                                      std::to_string(max) + "\n"},
                       {"search", "search:\n  method: sha\n  eta: 3\n  trials: 3\n"}});
  };
  // 16 training rows (a fifth held out): 20, 60 and 180 samples are 1, 4 and 11 steps.
  write("sweep.yaml", sweep(20, 180));
  SweepConfig s = load_sweep_file(dir_ + "/sweep.yaml");
  EXPECT_NO_THROW(read_sweep_table(s));
  EXPECT_EQ(s.task.table.train_rows, 16);
  const auto plan = run("plan " + dir_ + "/sweep.yaml");
  EXPECT_EQ(plan.code, 0) << plan.err;
  // The table read, plan knows its rows: it notes the batch past them, as run does (once).
  const std::string past = "note: batch size 64 is larger than the 16 training examples: each step trains on all of them, once";
  EXPECT_NE(plan.out.find(past), std::string::npos) << plan.out;
  const auto ran = run("run " + dir_ + "/sweep.yaml --out " + dir_ + "/ran");
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find(past), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find(past), ran.out.rfind(past)) << ran.out;
  // 5 and 15 samples are both one step of the 16 rows: refused at budget.min, by every verb.
  const std::string refused = sweep(5, 15);
  const Diagnostic d = refusal(refused);
  EXPECT_EQ(d.path, "budget.min");
  EXPECT_EQ(d.line, line_of(refused, "min: 5"));
  EXPECT_EQ(d.message,
            "the rungs to 5 samples and 15 samples would both train 1 step of batch_size 64 (a step trains the whole "
            "table's 16 training rows, fewer than a batch): give budget.min at least what a step trains (16 samples), "
            "or count the budget in steps");
  for (const char* verb : {"validate", "plan", "run"}) {
    SCOPED_TRACE(verb);
    const auto r = run(std::string(verb) + " " + dir_ + "/sweep.yaml" + (verb == std::string("run") ? " --out " + dir_ + "/out" : ""));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("budget.min: the rungs to 5 samples"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out"));
}

TEST_F(TableFiles, ValidatePlanAndRunRefuseABadTableWritingNothing) {
  write("data/train.csv", "a,b,kind\n1,2,x\n3,,y\n");
  const std::string yaml = sweep_yaml({{"task", std::regex_replace(kTask, std::regex("    test: /abs/test.csv\n"), "")}});
  write("sweep.yaml", yaml);
  const std::string where = dir_ + "/sweep.yaml:" + std::to_string(line_of(yaml, "train: data")) + ":12: task.data.train: ";
  for (const char* verb : {"validate", "plan", "run"}) {
    SCOPED_TRACE(verb);
    const auto r = run(std::string(verb) + " " + dir_ + "/sweep.yaml" + (verb == std::string("run") ? " --out " + dir_ + "/out" : ""));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(where + dir_ + "/data/train.csv:3: column 'b' (column 2) holds '', not a number: a missing value?"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out"));
}

// The example's tables, tuned briefly: the run keeps the tables, a cut run
// resumes on its copy whatever becomes of the files, --fusion off trains the
// same numbers, and the exported best model scores the test table in PyTorch
// as the run did.
TEST_F(TableFiles, RunResumeFusionOffAndTheExportedModelAgree) {
  copy_tables("wine");
  const std::string yaml =
      "name: wine\nseed: 5\n"
      "task:\n  model: mlp\n  dataset: csv\n  batch_size: 16\n  options: {width: 8}\n"
      "  data: {train: data/wine_train.csv, test: data/wine_test.csv, label: cultivar}\n"
      "metric: {name: val_accuracy, goal: maximize}\n"
      "budget: {unit: steps, min: 4, max: 12}\n"
      "search: {method: hyperband, eta: 3}\n"
      "parameters:\n  lr: {distribution: log_uniform, min: 0.0001, max: 0.003}\n"
      "  depth: {values: [1, 2]}\n";
  write("sweep.yaml", yaml);
  const std::string sweep = dir_ + "/sweep.yaml";
  const auto planned = run("plan " + sweep);
  EXPECT_NE(planned.out.find("table " + dir_ + "/data/wine_train.csv, test " + dir_ + "/data/wine_test.csv: 114 rows"),
            std::string::npos)
      << planned.out;
  const auto whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("table data/wine_train.csv and data/wine_test.csv as kept in " + dir_ + "/whole/data: 114 "
                           "rows to train on, 28 to validate, 36 to test; 13 features; label cultivar, 3 classes\n"),
            std::string::npos)
      << whole.out;
  EXPECT_EQ(test::slurp(dir_ + "/whole/data/train.csv"), test::slurp(dir_ + "/data/wine_train.csv"));
  EXPECT_EQ(test::slurp(dir_ + "/whole/data/test.csv"), test::slurp(dir_ + "/data/wine_test.csv"));
  const auto table = nlohmann::json::parse(test::slurp(dir_ + "/whole/data/table.json"));
  EXPECT_EQ(table.at("classes"), nlohmann::json::parse(R"(["cultivar_1", "cultivar_2", "cultivar_3"])"));
  EXPECT_EQ(table.at("features").size(), 13u);
  EXPECT_EQ(table.at("features")[0], "alcohol");
  const auto results = nlohmann::json::parse(test::slurp(dir_ + "/whole/results.json"));
  EXPECT_EQ(results.at("data"), nlohmann::json::parse(
                                    R"({"train": "data/train.csv", "test": "data/test.csv", "table": "data/table.json"})"));

  // Cut after a few pieces of training; the files change and go before the resume.
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "3", 1);
  const auto cut = run("run " + sweep + " --out " + dir_ + "/cut --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(cut.code, 1) << cut.err;
  ASSERT_FALSE(std::filesystem::exists(dir_ + "/cut/results.json"));
  std::ofstream(dir_ + "/data/wine_train.csv", std::ios::app) << "1,1,1,1,1,1,1,1,1,1,1,1,1,cultivar_4\n";
  std::filesystem::remove(dir_ + "/data/wine_test.csv");
  const auto resumed = run("resume " + dir_ + "/cut");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_trials(nlohmann::json::parse(test::slurp(dir_ + "/cut/results.json")), results);
  // Without its copy, resume says what is gone.
  std::filesystem::remove(dir_ + "/cut/data/train.csv");
  std::filesystem::remove(dir_ + "/cut/results.json");
  const auto gone = run("resume " + dir_ + "/cut");
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find(dir_ + "/cut/data/train.csv is gone: run kept the sweep's table there"), std::string::npos)
      << gone.err;
  const auto status = run("status " + dir_ + "/cut");
  EXPECT_NE(status.out.find(dir_ + "/cut/data/train.csv is gone: run kept the sweep's table there"), std::string::npos)
      << status.out;
  // Nor with a copy changed from outside (one value of one row): the split
  // and the scaling would change under trials part-trained.
  std::string changed = test::slurp(dir_ + "/whole/data/train.csv");
  changed.replace(changed.find("14.22"), 5, "14.23");
  std::ofstream(dir_ + "/cut/data/train.csv") << changed;
  const auto altered = run("resume " + dir_ + "/cut");
  EXPECT_EQ(altered.code, 1);
  EXPECT_NE(altered.err.find(dir_ + "/cut/data/train.csv is not the table run kept (its size or CRC-32 differs from "
                                    "what data/table.json records)"),
            std::string::npos)
      << altered.err;
  // The experiment's own sweep.yaml reads the tables kept beside it.
  const auto own = run("validate " + dir_ + "/whole/sweep.yaml");
  EXPECT_EQ(own.code, 0) << own.err;
  EXPECT_NE(own.out.find("data        " + dir_ + "/whole/data/train.csv, test " + dir_ + "/whole/data/test.csv: 114 rows"),
            std::string::npos)
      << own.out;

  // Each trial alone: the same losses within float32's rounding.
  copy_tables("wine");  // (the originals back)
  // A folder of the user's named data/ is no table a run left: run refuses the --out.
  std::filesystem::create_directories(dir_ + "/project/data");
  write("project/data/train.csv", "theirs\n");
  const auto theirs = run("run " + sweep + " --out " + dir_ + "/project");
  EXPECT_EQ(theirs.code, 2);
  EXPECT_NE(theirs.err.find("holds other files (data)"), std::string::npos) << theirs.err;
  EXPECT_EQ(test::slurp(dir_ + "/project/data/train.csv"), "theirs\n");
  const auto alone = run("run " + sweep + " --out " + dir_ + "/alone --fusion off");
  ASSERT_EQ(alone.code, 0) << alone.err;
  expect_same_trials(results, nlohmann::json::parse(test::slurp(dir_ + "/alone/results.json")), "val_loss", 1e-4);

  // The best trial's state_dict.pt in PyTorch, fed the test rows as table.json
  // says, scores what the run measured on the test split.
  if (!python_has_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  const std::string best = results.at("best").at("id").dump();
  ASSERT_EQ(predict("whole", best, dir_ + "/whole/data/test.csv", "accuracy"), 0) << test::slurp(dir_ + "/accuracy.txt");
  std::smatch m;
  const std::string said = test::slurp(dir_ + "/accuracy.txt");
  ASSERT_TRUE(std::regex_search(said, m, std::regex("accuracy \\S+ \\((\\d+) of 36 rows\\)"))) << said;
  const double measured = results.at("best").at("test").at("accuracy");
  EXPECT_NEAR(std::stod(m[1].str()) / 36, measured, 1e-9);
  EXPECT_LT(measured, 1.0);  // (a short training: some rows wrong, so the check tells)
}


// The regression example's tables, tuned briefly: run says what it predicts,
// keeps how to undo the target's scaling, records errors in the label's units,
// resumes a cut run to the same numbers, trains the same alone, and the
// exported best model predicts in PyTorch what the run measured on the test rows.
TEST_F(TableFiles, ARegressionRunsResumesAndItsExportedModelPredictsInTheLabelsUnits) {
  copy_tables("diabetes");
  const std::string yaml =
      "name: diabetes\nseed: 5\n"
      "task:\n  model: mlp\n  dataset: csv\n  loss: mse\n  batch_size: 32\n  options: {width: 16}\n"
      "  data: {train: data/diabetes_train.csv, test: data/diabetes_test.csv, label: progression}\n"
      "metric: {name: val_rmse, goal: minimize}\n"
      "budget: {unit: steps, min: 4, max: 36}\n"
      "search: {method: hyperband, eta: 3}\n"
      "parameters:\n  optimizer: {value: adam}\n  lr: {distribution: log_uniform, min: 0.001, max: 0.03}\n"
      "  depth: {values: [1, 2]}\n";
  const auto [sweep, whole] = run_sweep(yaml);
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("as kept in " + dir_ + "/whole/data: 282 rows to train on, 71 to validate, 89 to test; 10 "
                           "features; label progression, a number to predict\n"),
            std::string::npos)
      << whole.out;
  const auto table = nlohmann::json::parse(test::slurp(dir_ + "/whole/data/table.json"));
  EXPECT_FALSE(table.contains("classes"));
  // The rows held out, by their lines in the training file (2 to 354).
  const auto held = table.at("validation_lines").get<std::vector<int>>();
  EXPECT_EQ(held.size(), 71u);
  EXPECT_TRUE(std::is_sorted(held.begin(), held.end()) && std::adjacent_find(held.begin(), held.end()) == held.end());
  EXPECT_TRUE(held.front() >= 2 && held.back() <= 354);
  EXPECT_GT(table.at("target_scale").get<double>(), 50);  // progression spreads over about 77
  EXPECT_GT(table.at("target_mean").get<double>(), 100);
  const auto results = nlohmann::json::parse(test::slurp(dir_ + "/whole/results.json"));
  for (const auto& trial : results.at("trials")) {
    for (const auto& point : trial.at("history")) {
      EXPECT_FALSE(point.contains("val_accuracy"));
      EXPECT_GT(point.at("val_rmse").get<double>(), 0);
      EXPECT_LE(point.at("val_mae").get<double>(), point.at("val_rmse").get<double>());
      EXPECT_LT(point.at("val_r2").get<double>(), 1);
    }
  }
  const auto& test = results.at("best").at("test");
  EXPECT_FALSE(test.contains("accuracy"));
  EXPECT_GT(test.at("rmse").get<double>(), 0);
  // Trained a little, the best model predicts the test rows better than the training mean.
  EXPECT_GT(test.at("r2").get<double>(), 0);
  EXPECT_NE(whole.out.find("RMSE " ), std::string::npos) << whole.out;

  // Cut, and resumed: the same numbers.
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "3", 1);
  const auto cut = run("run " + sweep + " --out " + dir_ + "/cut --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(cut.code, 1) << cut.err;
  ASSERT_FALSE(std::filesystem::exists(dir_ + "/cut/results.json"));
  const auto resumed = run("resume " + dir_ + "/cut");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_trials(nlohmann::json::parse(test::slurp(dir_ + "/cut/results.json")), results);

  // Each trial alone: the same errors within float32's rounding.
  const auto alone = run("run " + sweep + " --out " + dir_ + "/alone --fusion off");
  ASSERT_EQ(alone.code, 0) << alone.err;
  expect_same_trials(results, nlohmann::json::parse(test::slurp(dir_ + "/alone/results.json")), "val_rmse", 1e-4);

  // The best trial's state_dict.pt in PyTorch predicts the test rows, in the
  // label's units, with the errors the run measured.
  if (!python_has_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  const std::string best = results.at("best").at("id").dump();
  ASSERT_EQ(predict("whole", best, dir_ + "/whole/data/test.csv", "predicted"), 0) << test::slurp(dir_ + "/predicted.txt");
  std::smatch m;
  const std::string said = test::slurp(dir_ + "/predicted.txt");
  ASSERT_TRUE(std::regex_search(said, m, std::regex("rmse (\\S+) mae (\\S+) \\(89 rows\\)"))) << said;
  EXPECT_NEAR(std::stod(m[1].str()), test.at("rmse").get<double>(), 1e-3 * test.at("rmse").get<double>());
  EXPECT_NEAR(std::stod(m[2].str()), test.at("mae").get<double>(), 1e-3 * test.at("mae").get<double>());
  const std::string predicted = test::slurp(dir_ + "/predicted.csv");
  EXPECT_EQ(predicted.substr(0, predicted.find('\n')), "age,sex,bmi,bp,tc,ldl,hdl,tch,ltg,glu,progression,predicted");
  // New rows, some without a label: every row predicted, the errors over the labelled ones.
  std::string rows = test::slurp(dir_ + "/whole/data/test.csv");
  const std::size_t second = rows.find('\n', rows.find('\n') + 1);  // the end of the first data row
  rows.replace(rows.rfind(',', second) + 1, second - rows.rfind(',', second) - 1, "NA");
  write("some.csv", rows);
  ASSERT_EQ(predict("whole", best, dir_ + "/some.csv", "some-predicted"), 0) << test::slurp(dir_ + "/some-predicted.txt");
  EXPECT_NE(test::slurp(dir_ + "/some-predicted.txt").find("(88 rows; 1 without a number in 'progression' left out)"),
            std::string::npos)
      << test::slurp(dir_ + "/some-predicted.txt");
}

// Classes of unequal size (the breast cancer example's tables, 37% malignant):
// a sweep tuned for ROC AUC with balanced class weights among its parameters
// records F1, balanced accuracy and AUC at every evaluation and on the test
// rows, trains alone as fused, and the best trial's exported model, run in
// PyTorch, scores the test rows as the run measured them.
TEST_F(TableFiles, ClassesOfUnequalSizeAreTunedForAucWithBalancedWeightsAndScoredAsPyTorchScoresThem) {
  copy_tables("breast_cancer");
  const std::string yaml =
      "name: cancer\nseed: 3\n"
      "task:\n  model: mlp\n  dataset: csv\n  batch_size: 32\n  options: {width: 8}\n"
      "  data: {train: data/breast_cancer_train.csv, test: data/breast_cancer_test.csv, label: diagnosis}\n"
      "metric: {name: val_auc, goal: maximize}\n"
      "constraints: [{name: val_average_precision, min: 0.1}]\n"
      "budget: {unit: steps, max: 12}\n"
      "search: {method: random, trials: 4}\n"
      "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.01}\n"
      "  class_weight: {values: [none, balanced]}\n";
  const auto [sweep, whole] = run_sweep(yaml);
  ASSERT_EQ(whole.code, 0) << whole.err;
  const auto results = nlohmann::json::parse(test::slurp(dir_ + "/whole/results.json"));
  std::set<std::string> weights;
  for (const auto& trial : results.at("trials")) {
    weights.insert(trial.at("params").at("class_weight").get<std::string>());
    for (const auto& point : trial.at("history")) {
      for (const char* name : {"val_accuracy", "val_f1", "val_balanced_accuracy", "val_auc", "val_average_precision"}) {
        EXPECT_GT(point.at(name).get<double>(), 0) << name;
        EXPECT_LE(point.at(name).get<double>(), 1) << name;
      }
    }
    EXPECT_EQ(trial.at("metric"), trial.at("history").back().at("val_auc"));
  }
  EXPECT_EQ(weights, (std::set<std::string>{"balanced", "none"}));  // (seed 3 draws both)
  const auto& test = results.at("best").at("test");
  EXPECT_NE(whole.out.find(", AUC "), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find(", balanced accuracy "), std::string::npos) << whole.out;
  // The export's columns of these measures come last, after those a reader by position knew before.
  const auto csv = run("export " + dir_ + "/whole --format csv");
  EXPECT_NE(csv.out.find(",final_val_loss,feasible,model_params,final_val_auc,final_val_average_precision,"
                         "final_val_balanced_accuracy,final_val_f1\n"),
            std::string::npos)
      << csv.out.substr(0, csv.out.find('\n'));

  // Each trial alone: the same losses within float32's rounding.
  const auto alone = run("run " + sweep + " --out " + dir_ + "/alone --fusion off");
  ASSERT_EQ(alone.code, 0) << alone.err;
  const auto alone_results = nlohmann::json::parse(test::slurp(dir_ + "/alone/results.json"));
  expect_same_trials(results, alone_results, "val_loss", 1e-4);
  // (A rounding may reorder one malignant and one benign row: 1/(34 x 57) of AUC.)
  expect_same_trials(results, alone_results, "val_auc", 2e-3);

  if (!python_has_torch()) {
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  const std::string best = results.at("best").at("id").dump();
  ASSERT_EQ(predict("whole", best, dir_ + "/whole/data/test.csv", "scored"), 0) << test::slurp(dir_ + "/scored.txt");
  std::smatch m;
  const std::string said = test::slurp(dir_ + "/scored.txt");
  ASSERT_TRUE(std::regex_search(
      said, m,
      std::regex("accuracy (\\S+) \\(\\d+ of 113 rows\\); F1 (\\S+), balanced accuracy (\\S+), AUC (\\S+), "
                 "average precision (\\S+)")))
      << said;
  EXPECT_NEAR(std::stod(m[1].str()), test.at("accuracy").get<double>(), 1e-5);
  EXPECT_NEAR(std::stod(m[2].str()), test.at("f1").get<double>(), 1e-5);
  EXPECT_NEAR(std::stod(m[3].str()), test.at("balanced_accuracy").get<double>(), 1e-5);
  EXPECT_NEAR(std::stod(m[4].str()), test.at("auc").get<double>(), 1e-5);
  EXPECT_NEAR(std::stod(m[5].str()), test.at("average_precision").get<double>(), 1e-5);
  EXPECT_LT(test.at("balanced_accuracy").get<double>(), 1.0);  // (a short training: the check tells)
  const std::string scored = test::slurp(dir_ + "/scored.csv");
  const std::string header = scored.substr(0, scored.find('\n'));
  EXPECT_EQ(header.substr(header.rfind(",diagnosis,")), ",diagnosis,predicted,probability_benign,probability_malignant");
}

// ROC AUC needs validation rows of two classes: a split that holds one is
// refused where the sweep names val_auc (sklearn raises); a class the
// validation rows lack is noted where a class-balanced measure is named.
TEST_F(TableFiles, AucOnValidationRowsOfOneClassIsRefusedAndAClassTheyLackIsNoted) {
  std::string rare = "a,b,kind\n";
  for (int i = 0; i < 42; ++i) rare += std::to_string(i) + "," + std::to_string(i % 7) + "," + (i < 2 ? "pos" : "neg") + "\n";
  write("data/rare.csv", rare);
  const std::string sweep =
      "name: rare\nseed: 1\ntask:\n  model: mlp\n  dataset: csv\n  data: {train: data/rare.csv, label: kind}\n"
      "metric: {name: val_auc, goal: maximize}\nbudget: {unit: steps, max: 4}\nsearch: {method: random, trials: 2}\n"
      "parameters:\n  lr: {values: [0.01, 0.1]}\n";
  write("rare.yaml", sweep);
  for (const char* verb : {"validate", "plan", "run"}) {
    const std::string out = verb == std::string("run") ? " --out " + dir_ + "/rare-run" : "";
    const auto refused = run(std::string(verb) + " " + dir_ + "/rare.yaml" + out);
    EXPECT_EQ(refused.code, 2) << verb << refused.out;
    EXPECT_NE(refused.err.find("rare.yaml:" + std::to_string(test::line_of(sweep, "name: val_auc")) + ":16: metric.name: "
                               "the validation rows (8) hold one class of kind: ROC AUC ranks rows of two classes, so "
                               "val_auc would be undefined for every trial; hold out more rows with "
                               "task.validation_size"),
              std::string::npos)
        << verb << ": " << refused.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/rare-run"));
  // As a constraint too; where only F1 ranks, the missing class is noted instead.
  const std::string constrained = std::regex_replace(sweep, std::regex("metric: \\{name: val_auc"), "metric: {name: val_f1") +
                                  "constraints: [{name: val_auc, min: 0.5}]\n";
  write("constrained.yaml", constrained);
  const auto bound = run("validate " + dir_ + "/constrained.yaml");
  EXPECT_EQ(bound.code, 2);
  EXPECT_NE(bound.err.find("constraints[0].name: the validation rows (8) hold one class"), std::string::npos) << bound.err;
  write("precision.yaml", std::regex_replace(sweep, std::regex("val_auc"), "val_average_precision"));
  const auto precision = run("validate " + dir_ + "/precision.yaml");
  EXPECT_EQ(precision.code, 2);
  EXPECT_NE(precision.err.find("metric.name: the validation rows (8) hold one class of kind: average precision finds "
                               "one class among others, so val_average_precision would be 1 or undefined"),
            std::string::npos)
      << precision.err;
  write("f1.yaml", std::regex_replace(sweep, std::regex("val_auc"), "val_f1"));
  const auto noted = run("plan " + dir_ + "/f1.yaml");
  EXPECT_EQ(noted.code, 0) << noted.err;
  EXPECT_NE(noted.out.find("note: the validation rows hold no row of class 'pos' of label kind: val_balanced_accuracy, "
                           "val_auc and val_average_precision average over the other classes, and val_f1 counts it "
                           "only where a trial predicts it"),
            std::string::npos)
      << noted.out;
  // Test rows of one class: the sweep runs, the note says the test AUC cannot
  // be measured, and run and status both call it none (NaN held, null kept).
  std::string both = "a,b,kind\n", negatives = "a,b,kind\n";
  for (int i = 0; i < 40; ++i) both += std::to_string(i) + "," + std::to_string(i % 7) + "," + (i % 2 ? "pos" : "neg") + "\n";
  for (int i = 0; i < 5; ++i) negatives += std::to_string(i) + ",1,neg\n";
  write("data/both.csv", both);
  write("data/negatives.csv", negatives);
  write("one-test-class.yaml", std::regex_replace(sweep, std::regex("data: \\{train: data/rare.csv"),
                                                  "data: {train: data/both.csv, test: data/negatives.csv"));
  const std::string note = "note: the test table's rows (data/negatives.csv) hold one class of label kind: the best "
                           "trial's test AUC and average precision cannot be measured there (shown as none)";
  EXPECT_NE(run("plan " + dir_ + "/one-test-class.yaml").out.find(note), std::string::npos);
  const auto ran = run("run " + dir_ + "/one-test-class.yaml --out " + dir_ + "/one-test-class");
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find(", AUC none"), std::string::npos) << ran.out;
  EXPECT_NE(run("status " + dir_ + "/one-test-class").out.find(", AUC none"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir_ + "/one-test-class/results.json")).at("best").at("test").at("auc"),
            nullptr);
}

// plan's notes on a table: integer labels of many classes may be a
// measurement; a regression's one validation row makes every val_r2 0.
TEST_F(TableFiles, PlanNotesIntegerClassesThatMayBeANumberAndOneValidationRow) {
  std::string many = "x,y\n";
  for (int i = 0; i < 60; ++i) many += std::to_string(i) + "," + std::to_string(100 + i % 30) + "\n";
  write("data/many.csv", many);
  const std::string base = "name: t\ntask:\n  model: mlp\n  dataset: csv\n  batch_size: 8\n  data: {train: data/many.csv}\n"
                           "budget: {unit: steps, min: 2, max: 4}\nsearch: {method: random, trials: 2}\n"
                           "parameters:\n  lr: {values: [0.01, 0.1]}\n";
  write("classes.yaml", base + "metric: {name: val_accuracy, goal: maximize}\n");
  const auto classes = run("plan " + dir_ + "/classes.yaml");
  EXPECT_EQ(classes.code, 0) << classes.err;
  EXPECT_NE(classes.out.find("note: label y holds 30 different integers, trained as that many classes (task.loss "
                             "cross_entropy); if they are a measurement, set task.loss: mse to predict the number"),
            std::string::npos)
      << classes.out;
  write("data/three.csv", "x,y\n1,2.5\n2,3.5\n3,1\n");
  std::string one = std::regex_replace(base, std::regex("many.csv"), "three.csv");
  one = std::regex_replace(one, std::regex("  batch_size: 8\n"), "  batch_size: 8\n  loss: mse\n");
  write("one.yaml", one + "metric: {name: val_r2, goal: maximize}\n");
  const auto single = run("plan " + dir_ + "/one.yaml");
  EXPECT_EQ(single.code, 0) << single.err;
  EXPECT_NE(single.out.find("note: one validation row: val_r2 is 0 for every trial"), std::string::npos) << single.out;
  EXPECT_EQ(classes.out.find("one validation row"), std::string::npos);
  // validate says what plan notes of the sweep itself.
  const auto validated = run("validate " + dir_ + "/classes.yaml");
  EXPECT_NE(validated.out.find("note: label y holds 30 different integers"), std::string::npos) << validated.out;
  EXPECT_EQ(single.out.find("different integers"), std::string::npos);
}

}  // namespace
}  // namespace hfta::core
