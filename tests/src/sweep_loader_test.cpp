// Loading valid sweeps: defaults, every distribution, shorthands, conditions.
#include <filesystem>

#include <gtest/gtest.h>

#include "../support/sweep_text.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core {
namespace {

using search::Distribution;
using search::ParamValue;
using test::sweep_yaml;

SweepConfig load(const std::string& yaml) {
  try {
    return load_sweep_string(yaml, "sweep.yaml");
  } catch (const ConfigError& e) {
    ADD_FAILURE() << e.what();
    throw;
  }
}

TEST(SweepLoader, FillsDefaults) {
  const SweepConfig s = load(sweep_yaml());
  EXPECT_EQ(s.name, "test-sweep");
  EXPECT_EQ(s.seed, 3u);
  EXPECT_EQ(s.task.model, "mlp");
  EXPECT_EQ(s.task.dataset, "fashion_mnist");
  EXPECT_EQ(s.task.loss, "cross_entropy");
  EXPECT_EQ(s.task.batch_size, 32);
  // Every option of the model is present, with the catalog's defaults.
  EXPECT_EQ(s.task.options.at("depth"), ParamValue(std::int64_t{2}));
  EXPECT_EQ(s.task.options.at("activation"), ParamValue(std::string("relu")));
  EXPECT_EQ(s.task.options.at("dropout"), ParamValue(0.0));
  EXPECT_EQ(s.metric.name, "val_accuracy");
  EXPECT_EQ(s.metric.goal, Goal::kMaximize);
  EXPECT_EQ(s.budget.unit, BudgetUnit::kEpochs);
  EXPECT_EQ(s.budget.min, 1);
  EXPECT_EQ(s.budget.max, 9);
  EXPECT_EQ(s.search.method, SearchMethod::kHyperband);
  EXPECT_EQ(s.search.searcher, Searcher::kRandom);
  EXPECT_EQ(s.search.eta, 3);
  EXPECT_FALSE(s.early_stopping.enabled);
  EXPECT_EQ(s.fusion.enabled, FusionMode::kAuto);
  EXPECT_EQ(s.fusion.max_array, 64);
  EXPECT_DOUBLE_EQ(s.fusion.memory_fraction, 0.9);
  EXPECT_DOUBLE_EQ(s.fusion.min_gain, 0.1);
  EXPECT_EQ(s.task.validation_size, 0);  // the dataset's own
  EXPECT_EQ(load(sweep_yaml({{"task", "task:\n  model: mlp\n  validation_size: 5000\n"}})).task.validation_size, 5000);
  EXPECT_EQ(s.task.eval_steps, 0);  // each epoch
  EXPECT_EQ(load(sweep_yaml({{"task", "task:\n  model: mlp\n  eval_steps: 250\n"}})).task.eval_steps, 250);
}

TEST(SweepLoader, ReadsEveryDistribution) {
  const SweepConfig s = load(sweep_yaml({{"parameters", R"(parameters:
  lr: {distribution: uniform, min: 0.01, max: 0.2}
  weight_decay: {distribution: log_uniform, min: 1.0e-6, max: 1e-2}
  warmup: {distribution: int_uniform, min: 0, max: 50}
  step_size: {distribution: int_log_uniform, min: 1, max: 64}
  beta2: {distribution: quantized, min: 0.9, max: 0.999, q: 0.01, log: true}
  schedule: {distribution: choice, values: [constant, step]}
  label_smoothing: {distribution: const, value: 0.1}
  dropout: {distribution: grid, values: [0, 0.5]}
  nesterov: {values: [true, false]}
  momentum: {value: 0.9}
  eps: {value: 1.0e-7}
  optimizer: {values: [sgd, adam], fuse: false}
)"}}));
  ASSERT_EQ(s.parameters.size(), 12u);
  const auto* lr = s.find_parameter("lr");
  EXPECT_EQ(lr->distribution, Distribution::kUniform);
  EXPECT_DOUBLE_EQ(lr->min, 0.01);
  EXPECT_DOUBLE_EQ(lr->max, 0.2);
  EXPECT_TRUE(lr->fuse);
  EXPECT_EQ(s.find_parameter("weight_decay")->distribution, Distribution::kLogUniform);
  EXPECT_DOUBLE_EQ(s.find_parameter("weight_decay")->min, 1e-6);
  EXPECT_EQ(s.find_parameter("warmup")->distribution, Distribution::kIntUniform);
  EXPECT_EQ(s.find_parameter("step_size")->distribution, Distribution::kIntLogUniform);
  const auto* beta2 = s.find_parameter("beta2");
  EXPECT_EQ(beta2->distribution, Distribution::kQuantized);
  EXPECT_DOUBLE_EQ(beta2->q, 0.01);
  EXPECT_TRUE(beta2->log);
  const auto* schedule = s.find_parameter("schedule");
  EXPECT_EQ(schedule->distribution, Distribution::kChoice);
  EXPECT_EQ(schedule->values,
            (std::vector<ParamValue>{std::string("constant"), std::string("step")}));
  EXPECT_EQ(s.find_parameter("label_smoothing")->values, std::vector<ParamValue>{0.1});
  // Integers written for a real-valued option are stored as reals.
  EXPECT_EQ(s.find_parameter("dropout")->values, (std::vector<ParamValue>{0.0, 0.5}));
  EXPECT_EQ(s.find_parameter("dropout")->distribution, Distribution::kGrid);
  EXPECT_EQ(s.find_parameter("nesterov")->distribution, Distribution::kChoice);
  EXPECT_EQ(s.find_parameter("nesterov")->values, (std::vector<ParamValue>{true, false}));
  EXPECT_EQ(s.find_parameter("eps")->distribution, Distribution::kConst);
}

TEST(SweepLoader, MergeKeysJoinTheMappingsTheyName) {
  // YAML's merge key: a mapping, or a list of them (the earlier first), below the mapping's own keys.
  const SweepConfig s = load(sweep_yaml({{"parameters", R"(parameters:
  lr: &range {distribution: log_uniform, min: 0.001, max: 0.1}
  weight_decay:
    <<: *range
    min: 1.0e-5
  momentum:
    <<: [&unit {distribution: uniform, min: 0.0, max: 1.0}, *range]
    max: 0.9
  dropout: {<<: *unit, max: 0.5}
)"}}));
  auto param = [&](const std::string& name) {
    for (const auto& p : s.parameters) {
      if (p.name == name) return p;
    }
    ADD_FAILURE() << "no parameter " << name;
    return search::ParameterSpec{};
  };
  const auto wd = param("weight_decay");
  EXPECT_EQ(wd.distribution, Distribution::kLogUniform);
  EXPECT_DOUBLE_EQ(wd.min, 1e-5);
  EXPECT_DOUBLE_EQ(wd.max, 0.1);
  const auto m = param("momentum");
  EXPECT_EQ(m.distribution, Distribution::kUniform);
  EXPECT_DOUBLE_EQ(m.min, 0.0);
  EXPECT_DOUBLE_EQ(m.max, 0.9);
  EXPECT_EQ(param("dropout").distribution, Distribution::kUniform);
  EXPECT_DOUBLE_EQ(param("dropout").max, 0.5);
}

TEST(SweepLoader, ParametersAreSortedByNameWhateverTheFileOrder) {
  const auto a = load(sweep_yaml({{"parameters",
                                   "parameters:\n  lr: {values: [0.1]}\n  momentum: {values: [0.9]}\n"}}));
  const auto b = load(sweep_yaml({{"parameters",
                                   "parameters:\n  momentum: {values: [0.9]}\n  lr: {values: [0.1]}\n"}}));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.parameters.front().name, "lr");
}

TEST(SweepLoader, ConditionsTakeTheTypeOfTheParameterTheyName) {
  const SweepConfig s = load(sweep_yaml({{"parameters", R"(parameters:
  optimizer: {values: [sgd, adam], fuse: false}
  momentum: {distribution: uniform, min: 0, max: 0.9, when: {optimizer: sgd}}
  dropout: {values: [0, 0.5]}
  weight_decay: {values: [0.001], when: {dropout: [0], optimizer: [sgd, adam]}}
)"}}));
  const auto* momentum = s.find_parameter("momentum");
  ASSERT_EQ(momentum->when.size(), 1u);
  EXPECT_EQ(momentum->when[0].parameter, "optimizer");
  EXPECT_EQ(momentum->when[0].values, std::vector<ParamValue>{std::string("sgd")});
  const auto* wd = s.find_parameter("weight_decay");
  ASSERT_EQ(wd->when.size(), 2u);
  EXPECT_EQ(wd->when[0].values, std::vector<ParamValue>{0.0});  // matches dropout's real 0.0
  EXPECT_EQ(wd->when[1].values.size(), 2u);
}

TEST(SweepLoader, ModelOptionsAreTypedAndOverrideDefaults) {
  const SweepConfig s = load(sweep_yaml(
      {{"task", "task:\n  model: mlp\n  options:\n    width: 512\n    activation: gelu\n"
                "    dropout: 0\n"}}));
  EXPECT_EQ(s.task.options.at("width"), ParamValue(std::int64_t{512}));
  EXPECT_EQ(s.task.options.at("activation"), ParamValue(std::string("gelu")));
  EXPECT_EQ(s.task.options.at("dropout"), ParamValue(0.0));
}

TEST(SweepLoader, QuotedNumbersAreStrings) {
  const SweepConfig s = load(sweep_yaml({{"parameters",
                                          "parameters:\n  lr: {values: [0.1]}\n"
                                          "  schedule: {values: ['step', \"cosine\"]}\n"}}));
  EXPECT_EQ(s.find_parameter("schedule")->values[0], ParamValue(std::string("step")));
  // A quoted number is not a number: a real-valued option refuses it.
  EXPECT_THROW(load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  lr: {values: ['0.1']}\n"}})),
               ConfigError);
}

// PyTorch's MultiStepLR takes its milestones as a list: a list is one value,
// read as the text a string would give.
TEST(SweepLoader, MilestoneListsReadAsTheirText) {
  const SweepConfig s = load(sweep_yaml(
      {{"search", "search:\n  method: random\n  trials: 4\n  points_to_evaluate:\n    - {milestones: [0.3, 0.6]}\n"},
       {"parameters", "parameters:\n  schedule: {value: multistep}\n"
                      "  milestones: {values: [[0.3, 0.6], [5.0e-1, 0.75], \"0.8,0.9\"]}\n"}}));
  EXPECT_EQ(s.find_parameter("milestones")->values,
            (std::vector<search::ParamValue>{std::string("0.3,0.6"), std::string("0.5,0.75"), std::string("0.8,0.9")}));
  ASSERT_EQ(s.search.points.size(), 1u);
  EXPECT_EQ(s.search.points[0].at("milestones"), search::ParamValue(std::string("0.3,0.6")));
  const SweepConfig one = load(sweep_yaml(
      {{"parameters", "parameters:\n  schedule: {value: multistep}\n  milestones: {value: [0.25]}\n"}}));
  EXPECT_EQ(one.find_parameter("milestones")->values, (std::vector<search::ParamValue>{std::string("0.25")}));
  // A text of fractions reads as the same text a list gives, so each list is one value however written.
  const SweepConfig text = load(sweep_yaml(
      {{"parameters", "parameters:\n  schedule: {value: multistep}\n  milestones: {value: \"0.50, 7.5e-1\"}\n"
                      "  gamma: {values: [0.1, 0.5], when: {milestones: [[0.5, 0.75]]}}\n"}}));
  EXPECT_EQ(text.find_parameter("milestones")->values, (std::vector<search::ParamValue>{std::string("0.5,0.75")}));
  EXPECT_EQ(text.find_parameter("gamma")->when.at(0).values, (std::vector<search::ParamValue>{std::string("0.5,0.75")}));
}

TEST(SweepLoader, MetricTargetIsOptional) {
  EXPECT_FALSE(load(sweep_yaml()).metric.target.has_value());
  const SweepConfig s = load(sweep_yaml({{"metric", "metric: {name: val_loss, goal: minimize, target: 0.35}\n"}}));
  EXPECT_EQ(s.metric.target, 0.35);
}

TEST(SweepLoader, ShapeParametersLoadWithFuseFalse) {
  const SweepConfig s = load(sweep_yaml(
      {{"parameters", "parameters:\n  width: {values: [64, 128], fuse: false}\n"
                      "  depth: {value: 3}\n"}}));
  EXPECT_FALSE(s.find_parameter("width")->fuse);
  // A constant shape option takes one value, so it never splits arrays.
  EXPECT_TRUE(s.find_parameter("depth")->fuse);
}

TEST(SweepLoader, EachSearchMethod) {
  auto method = [&](const std::string& text) { return load(sweep_yaml({{"search", text}})).search; };
  const auto random = method("search:\n  method: random\n  trials: 20\n  stopping: median\n");
  EXPECT_EQ(random.method, SearchMethod::kRandom);
  EXPECT_EQ(random.trials, 20);
  EXPECT_EQ(random.stopping, Stopping::kMedian);
  // The rule's settings: Vizier's by default (grace budget.min, three others, the median).
  EXPECT_EQ(random.grace_period, 1);
  EXPECT_EQ(random.min_samples, 3);
  EXPECT_EQ(random.percentile, 50);
  const auto percentile = load(sweep_yaml({{"budget", "budget:\n  unit: epochs\n  min: 2\n  max: 9\n"},
                                           {"search", "search:\n  method: random\n  trials: 20\n  stopping: percentile\n"
                                                      "  percentile: 25\n  min_samples: 5\n"}}))
                              .search;
  EXPECT_EQ(percentile.stopping, Stopping::kPercentile);
  EXPECT_EQ(percentile.grace_period, 2);  // budget.min
  EXPECT_EQ(percentile.min_samples, 5);
  EXPECT_EQ(percentile.percentile, 25);
  EXPECT_EQ(method("search:\n  method: random\n  trials: 20\n  stopping: median\n  grace_period: 3\n").grace_period, 3);
  EXPECT_EQ(method("search:\n  method: hyperband\n  searcher: qmc\n").searcher, Searcher::kQmc);
  EXPECT_EQ(method("search:\n  method: random\n  trials: 8\n  searcher: qmc\n").searcher, Searcher::kQmc);
  const auto sha = method("search:\n  method: sha\n  trials: 27\n  eta: 3\n  searcher: tpe\n");
  EXPECT_EQ(sha.method, SearchMethod::kSha);
  EXPECT_EQ(sha.searcher, Searcher::kTpe);
  EXPECT_TRUE(method("search:\n  method: hyperband\n").align_brackets);
  EXPECT_FALSE(method("search:\n  method: hyperband\n  align_brackets: false\n").align_brackets);
  EXPECT_EQ(method("search:\n  method: hyperband\n").iterations, 1);
  EXPECT_EQ(method("search:\n  method: hyperband\n  iterations: 4\n").iterations, 4);
  const auto asha = method("search:\n  method: asha\n  trials: 8\n  promotion_wait: 0.5\n");
  EXPECT_DOUBLE_EQ(asha.promotion_wait, 0.5);
  auto grid_sweep = load(sweep_yaml({{"search", "search:\n  method: grid\n  repeats: 2\n"},
                                     {"parameters", "parameters:\n  lr: {distribution: grid, values: [0.1, 0.01]}\n"}}));
  EXPECT_EQ(grid_sweep.search.searcher, Searcher::kGrid);
  EXPECT_EQ(grid_sweep.search.repeats, 2);
}

// TPE on methods that start trials together starts them in waves, so it learns
// from the earlier ones: as given, or as many (up to four) as give each wave the
// parameters + 2 results TPE models (one parameter here: 3).
TEST(SweepLoader, TpeStartsNewTrialsInWaves) {
  auto waves = [&](const std::string& text) { return trial_waves(load(sweep_yaml({{"search", text}}))); };
  EXPECT_EQ(waves("search: {method: sha, trials: 27, searcher: tpe}\n"), 4);
  EXPECT_EQ(waves("search: {method: asha, trials: 8, searcher: tpe}\n"), 2);
  EXPECT_EQ(waves("search: {method: random, trials: 5, searcher: tpe}\n"), 1);
  EXPECT_EQ(waves("search: {method: sha, trials: 27, searcher: tpe, waves: 9}\n"), 9);
  EXPECT_EQ(waves("search: {method: sha, trials: 27, searcher: tpe, waves: 1}\n"), 1);
  EXPECT_EQ(waves("search: {method: sha, trials: 27}\n"), 1);  // random search: all at once
  EXPECT_EQ(waves("search: {method: random, trials: 27, searcher: tpe, stopping: median}\n"), 4);
  EXPECT_EQ(waves("search: {method: hyperband, searcher: tpe}\n"), 1);  // it learns across brackets
  // Resolved as the sweep is read, so sweep.json records the count run trains with.
  EXPECT_EQ(load(sweep_yaml({{"search", "search: {method: sha, trials: 27, searcher: tpe, waves: 9}\n"}})).search.waves, 9);
  EXPECT_EQ(load(sweep_yaml({{"search", "search: {method: sha, trials: 27, searcher: tpe}\n"}})).search.waves, 4);
}

TEST(SweepLoader, PointsToEvaluateAreReadAsTheirParametersDrawThem) {
  const SweepConfig s = load(sweep_yaml(
      {{"search", "search:\n  method: hyperband\n  points_to_evaluate:\n    - {lr: 1, optimizer: sgd, momentum: 0.9}\n"
                  "    - {warmup: 20.0, dropout: 0}\n"},
       {"parameters", "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 1}\n"
                      "  optimizer: {values: [sgd, adam], fuse: false}\n"
                      "  momentum: {distribution: uniform, min: 0, max: 0.95, when: {optimizer: sgd}}\n"
                      "  warmup: {distribution: quantized, min: 0, max: 100, q: 10}\n"
                      "  dropout: {values: [0.0, 0.5]}\n"}}));
  ASSERT_EQ(s.search.points.size(), 2u);
  // Typed as each parameter draws its values, so a point's trial records them alike.
  EXPECT_EQ(s.search.points[0], (search::Config{{"lr", 1.0}, {"optimizer", std::string("sgd")}, {"momentum", 0.9}}));
  EXPECT_EQ(s.search.points[1], (search::Config{{"warmup", std::int64_t{20}}, {"dropout", 0.0}}));
  // A constant's value decides a condition without the point naming it.
  const SweepConfig constant = load(sweep_yaml(
      {{"search", "search:\n  method: random\n  trials: 2\n  points_to_evaluate: [{momentum: 0.5}]\n"},
       {"parameters", "parameters:\n  optimizer: {value: sgd}\n"
                      "  momentum: {distribution: uniform, min: 0, max: 0.95, when: {optimizer: sgd}}\n"}}));
  EXPECT_EQ(constant.search.points.at(0), (search::Config{{"momentum", 0.5}}));
  // TPE's default waves leave every point in the first: 12 trials of one
  // parameter make 4 waves of 3, but 4 points make 3 waves of 4.
  const auto tpe = [](const std::string& points) {
    return load(sweep_yaml({{"search", "search:\n  method: sha\n  searcher: tpe\n  trials: 12\n" + points}}));
  };
  EXPECT_EQ(tpe("").search.waves, 4);
  EXPECT_EQ(tpe("  points_to_evaluate: [{lr: 0.01}, {lr: 0.02}, {lr: 0.03}, {lr: 0.04}]\n").search.waves, 3);
}

// validate's task line: an option a parameter tunes reads "tuned", not the
// task's value no trial trains with.
TEST(SweepLoader, TheSummaryCallsAnOptionAParameterSetsTuned) {
  const SweepConfig s = load_sweep_string(
      sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 32\n  options: {width: 256}\n"},
                  {"parameters", "parameters:\n  lr: {value: 0.1}\n  width: {values: [16, 64]}\n"}}),
      "sweep.yaml");
  EXPECT_NE(summarize(s).find("(activation=relu, depth=2, dropout=0, width=tuned)"), std::string::npos) << summarize(s);
  // A constant parameter sets every trial's: its value.
  const SweepConfig fixed = load_sweep_string(
      sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 32\n  options: {width: 256}\n"},
                  {"parameters", "parameters:\n  lr: {value: 0.1}\n  width: {value: 16}\n"}}),
      "sweep.yaml");
  EXPECT_NE(summarize(fixed).find("(activation=relu, depth=2, dropout=0, width=16)"), std::string::npos)
      << summarize(fixed);
}

TEST(SweepLoader, EarlyStoppingAndFusion) {
  const SweepConfig s = load(sweep_yaml(
      {{"early_stopping", "early_stopping:\n  patience: 5\n  min_delta: 0.01\n  divergence: 20\n"},
       {"fusion", "fusion:\n  enabled: 'off'\n  max_array: 4\n  memory_fraction: 0.5\n  min_gain: 0.25\n"}}));
  EXPECT_TRUE(s.early_stopping.enabled);
  EXPECT_EQ(s.early_stopping.patience, 5);
  EXPECT_DOUBLE_EQ(s.early_stopping.min_delta, 0.01);
  EXPECT_DOUBLE_EQ(s.early_stopping.divergence, 20);
  EXPECT_EQ(s.fusion.enabled, FusionMode::kOff);
  EXPECT_EQ(s.fusion.max_array, 4);
  EXPECT_DOUBLE_EQ(s.fusion.memory_fraction, 0.5);
  EXPECT_DOUBLE_EQ(s.fusion.min_gain, 0.25);
  // A key named `enabled` invites a boolean: read as auto and off.
  EXPECT_EQ(load(sweep_yaml({{"fusion", "fusion:\n  enabled: false\n"}})).fusion.enabled, FusionMode::kOff);
  EXPECT_EQ(load(sweep_yaml({{"fusion", "fusion:\n  enabled: True\n"}})).fusion.enabled, FusionMode::kAuto);
}

TEST(SweepLoader, ExplicitTagsAndTinyNumbers) {
  const SweepConfig s = load(sweep_yaml({{"parameters",
                                          "parameters:\n  schedule: {values: [!!str step]}\n"
                                          "  lr: {distribution: uniform, min: 1e-320, max: !!float 1}\n"}}));
  EXPECT_EQ(s.find_parameter("schedule")->values[0], ParamValue(std::string("step")));
  EXPECT_GT(s.find_parameter("lr")->min, 0.0);
  EXPECT_EQ(s.find_parameter("lr")->max, 1.0);
}

TEST(SweepLoader, ASingleValueRangeNeedsNoFuseFalse) {
  const SweepConfig s = load(sweep_yaml(
      {{"parameters", "parameters:\n  batch_size: {distribution: int_uniform, min: 32, max: 32}\n"}}));
  EXPECT_TRUE(s.find_parameter("batch_size")->fuse);
}

TEST(SweepLoader, ConditionsAreSortedByName) {
  const SweepConfig s = load(sweep_yaml({{"parameters", R"(parameters:
  optimizer: {values: [sgd, adam], fuse: false}
  schedule: {values: [step, cosine]}
  momentum: {values: [0.9], when: {schedule: step, optimizer: sgd}}
)"}}));
  const auto& when = s.find_parameter("momentum")->when;
  ASSERT_EQ(when.size(), 2u);
  EXPECT_EQ(when[0].parameter, "optimizer");
  EXPECT_EQ(when[1].parameter, "schedule");
}

TEST(SweepLoader, EveryShippedConfigIsValid) {
  int configs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HFTA_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_NO_THROW(load_sweep_file(entry.path().string())) << entry.path();
    ++configs;
  }
  EXPECT_GE(configs, 10);  // the quickstart, one per model of the zoo, the overhead-bound MLP, every key
}

}  // namespace
}  // namespace hfta::core
