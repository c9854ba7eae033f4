// Several objectives and constraints as a sweep states them: metric as a list (Optuna's
// directions), what it refuses, and how validate and sweep.json show it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../support/expect_rejected.h"
#include "../support/sweep_text.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/suspect_settings.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core {
namespace {

using test::expect_rejected;
using test::sweep_yaml;

const std::string kTwo =
    "metric:\n"
    "  - {name: val_accuracy, goal: maximize}\n"
    "  - {name: params, goal: minimize}\n";

TEST(MultiObjectiveSweep, LoadsAListOfObjectivesTheFirstOfWhichIsTheMetric) {
  const SweepConfig s = load_sweep_string(sweep_yaml({{"metric", kTwo}}), "sweep.yaml");
  ASSERT_EQ(s.objectives.size(), 2u);
  EXPECT_EQ(s.metric.name, "val_accuracy");
  EXPECT_EQ(s.objectives[1].name, "params");
  EXPECT_EQ(s.objectives[1].goal, Goal::kMinimize);
  EXPECT_EQ(s.goals().objectives, (std::vector<Goal>{Goal::kMaximize, Goal::kMinimize}));
  EXPECT_NE(summarize(s).find("metric      val_accuracy (maximize) and params (minimize): 2 objectives, trials "
                              "ranked by Pareto front"),
            std::string::npos)
      << summarize(s);
  // The canonical form loads back as the same sweep (what resume compares).
  const auto json = to_json(s);
  EXPECT_EQ(json.at("metric"), nlohmann::json::parse(R"([{"name": "val_accuracy", "goal": "maximize"},
                                                          {"name": "params", "goal": "minimize"}])"));
  const std::string plan = to_text(make_plan(s, true, "cpu", 1e9), s);
  EXPECT_NE(plan.find("note: 2 objectives (val_accuracy, params): rungs promote by Pareto front (then crowding "
                      "distance); results.json lists the Pareto front of the trials that finish training"),
            std::string::npos)
      << plan;
  EXPECT_EQ(to_json(make_plan(s, true, "cpu", 1e9), s).at("objectives"), json.at("metric"));
  // Three measured ones.
  const SweepConfig three = load_sweep_string(
      sweep_yaml({{"metric", "metric:\n  - {name: val_loss, goal: minimize}\n  - {name: train_loss, goal: minimize}\n"
                             "  - {name: params, goal: minimize}\n"}}),
      "sweep.yaml");
  EXPECT_EQ(three.objectives.size(), 3u);
  EXPECT_FALSE(load_sweep_string(sweep_yaml(), "sweep.yaml").goals().several());
  EXPECT_NE(s, load_sweep_string(sweep_yaml(), "sweep.yaml"));
}

// Notes, not errors: a size no parameter changes, and a goal against its objective.
TEST(MultiObjectiveSweep, NotesAConstantSizeAndAGoalBackwards) {
  const auto notes = [](const std::string& metric, const std::string& parameters) {
    std::string all;
    for (const auto& n : suspect_settings(load_sweep_string(sweep_yaml({{"metric", metric}, {"parameters", parameters}}),
                                                            "sweep.yaml"))) {
      all += n + "\n";
    }
    return all;
  };
  const std::string lr = "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n";
  const std::string width = lr + "  width: {values: [16, 32]}\n";
  EXPECT_NE(notes(kTwo, lr).find("note: params, an objective, is 269322 in every trial"), std::string::npos) << notes(kTwo, lr);
  // A shape option that changes no parameter count is no trade-off either.
  const std::string activation = lr + "  activation: {values: [relu, gelu]}\n";
  EXPECT_NE(notes(kTwo, activation).find("note: params, an objective, is 269322 in every trial"), std::string::npos);
  EXPECT_EQ(notes(kTwo, width), "");
  EXPECT_NE(notes("metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: maximize}\n", width)
                .find("note: params is better lower, and metric[1].goal maximize makes the best trial the worst model"),
            std::string::npos);
}

TEST(MultiObjectiveSweep, RefusesWhatOneListCannotMean) {
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: val_accuracy, goal: maximize}\n"
                                         "  - {name: val_accuracy, goal: minimize}\n"}}),
                  "metric[1].name", "val_accuracy, goal: minimize", "'val_accuracy' is already an objective");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: params, goal: minimize}\n"
                                         "  - {name: val_accuracy, goal: maximize}\n"}}),
                  "metric[0].name", "params", "put a measured metric first");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: val_accuracy, goal: maximize}\n"
                                         "  - {name: val_acc, goal: maximize}\n"}}),
                  "metric[1].name", "val_acc,", "is not one of val_accuracy, val_loss, train_loss, val_f1, val_balanced_accuracy, val_auc, "
                  "val_average_precision or params");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: val_accuracy, goal: maximize, target: 0.9}\n"
                                         "  - {name: params, goal: minimize}\n"}}),
                  "metric[0].target", "target", "a sweep of several objectives has none");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params}\n"}}),
                  "metric[1].goal", "{name: params}", "missing required key 'goal'");
  expect_rejected(sweep_yaml({{"metric", "metric: []\n"}}), "metric", "metric", "a list of 2 to 4 such mappings");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  - {name: val_loss, goal: minimize}\n"}}), "metric", "- {name",
                  "got a list of 1 (one metric is a mapping: drop the '-')");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  name: params\n  goal: minimize\n"}}), "metric.name", "params",
                  "write metric as a list");
}

TEST(MultiObjectiveSweep, RefusesMethodsThatRankOneMetric) {
  expect_rejected(sweep_yaml({{"metric", kTwo},
                              {"search", "search:\n  method: random\n  trials: 8\n  stopping: median\n"}}),
                  "search.stopping", "stopping", "the median stopping rule compares one metric");
  expect_rejected(sweep_yaml({{"metric", kTwo},
                              {"search", "search:\n  method: pbt\n  population: 4\n"},
                              {"parameters", "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"}}),
                  "search.method", "pbt", "several objectives need random, grid, hyperband, sha or asha");
  // TPE takes them (as Optuna's MOTPE), as do the rung schedulers.
  for (const char* search : {"search:\n  method: asha\n  trials: 9\n  searcher: tpe\n", "search:\n  method: grid\n"}) {
    EXPECT_NO_THROW(load_sweep_string(
        sweep_yaml({{"metric", kTwo}, {"search", search}, {"parameters", "parameters:\n  lr: {values: [0.1, 0.01]}\n"}}),
        "sweep.yaml"))
        << search;
  }
}

}  // namespace
}  // namespace hfta::core

namespace hfta::core {
namespace {

const std::string kSmall = "constraints:\n  - {name: params, max: 20000}\n  - {name: val_loss, min: 0.1, max: 2.5}\n";

TEST(ConstrainedSweep, LoadsBoundsAndSaysThem) {
  const SweepConfig s = load_sweep_string(sweep_yaml({{"constraints", kSmall}}), "sweep.yaml");
  ASSERT_EQ(s.constraints.size(), 2u);
  EXPECT_EQ(s.constraints[0].name, "params");
  EXPECT_EQ(s.constraints[0].max, 20000);
  EXPECT_FALSE(s.constraints[0].min);
  EXPECT_EQ(s.constraints[1].min, 0.1);
  // Relative to the bound: 10% over a max, 50% under a min; NaN breaks it infinitely.
  EXPECT_DOUBLE_EQ(s.constraints[0].violation(22000), 0.1);
  EXPECT_EQ(s.constraints[0].violation(20000), 0);
  EXPECT_DOUBLE_EQ(s.constraints[1].violation(0.05), 0.5);
  EXPECT_TRUE(std::isinf(s.constraints[1].violation(NAN)));
  EXPECT_NE(summarize(s).find("constraints params <= 20000, 0.1 <= val_loss <= 2.5"), std::string::npos) << summarize(s);
  EXPECT_EQ(to_json(s).at("constraints"),
            nlohmann::json::parse(R"([{"name": "params", "max": 20000.0}, {"name": "val_loss", "min": 0.1, "max": 2.5}])"));
  EXPECT_NE(s, load_sweep_string(sweep_yaml(), "sweep.yaml"));
}

// A size bound that some shapes of the space break, or all: said before training.
TEST(ConstrainedSweep, NotesShapesThatBreakASizeBound) {
  const auto notes = [](const std::string& bound) {
    std::string all;
    const std::string parameters = "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"
                                   "  width: {values: [16, 32]}\n  depth: {values: [1, 2]}\n";
    for (const auto& n : suspect_settings(load_sweep_string(
             sweep_yaml({{"constraints", "constraints:\n  - " + bound + "\n"}, {"parameters", parameters}}), "sweep.yaml"))) {
      all += n + "\n";
    }
    return all;
  };
  // 784 w + w + (depth - 1)(w^2 + w) + 10 w + 10: 12730, 13002, 25450 and 26506.
  EXPECT_EQ(notes("{name: params, max: 20000}"),
            "note: 2 of the space's 4 shapes break constraints[0] (params <= 20000; the shapes have 12730 to 26506 "
            "parameters): their trials train and rank after every trial within it (restrict the space to skip them)\n");
  EXPECT_EQ(notes("{name: params, min: 30000}"),
            "note: no shape of the space meets constraints[0] (30000 <= params; the shapes have 12730 to 26506 "
            "parameters): every trial ranks by its violation, and none is best\n");
  EXPECT_EQ(notes("{name: params, max: 30000}"), "");
}

TEST(ConstrainedSweep, RefusesBoundsThatMeanNothing) {
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: params}\n"}}), "constraints[0]", "{name: params}",
                  "give max, min or both");
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: val_loss, min: 2, max: 1}\n"}}),
                  "constraints[0].min", "min: 2", "min must be below max");
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: params, max: 9}\n  - {name: params, min: 1}\n"}}),
                  "constraints[1].name", "params, min", "'params' is bounded already");
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: val_fid, max: 9}\n"}}), "constraints[0].name",
                  "val_fid",
                  "is not one of val_accuracy, val_loss, train_loss, val_f1, val_balanced_accuracy, val_auc, "
                  "val_average_precision or params");
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: val_accuracy, min: 90}\n"}}),
                  "constraints[0].min", "min: 90", "val_accuracy lies in [0, 1] (a bound of 90% is 0.9)");
  expect_rejected(sweep_yaml({{"constraints", "constraints:\n  - {name: params, max: -1}\n"}}),
                  "constraints[0].max", "max: -1", "params lies in [0, infinity)");
  expect_rejected(sweep_yaml({{"constraints", "constraints: {name: params, max: 9}\n"}}), "constraints", "constraints",
                  "expected a list of 1 to 8 bounds");
  expect_rejected(sweep_yaml({{"constraints", kSmall},
                              {"search", "search:\n  method: random\n  trials: 8\n  stopping: median\n"}}),
                  "search.stopping", "stopping", "the median stopping rule compares the metric whatever the constraints");
}

}  // namespace
}  // namespace hfta::core
