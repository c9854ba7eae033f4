// The canonical JSON form loads back to an equal sweep, for every distribution.
#include <gtest/gtest.h>

#include <dirent.h>

#include "../support/sweep_text.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core {
namespace {

using test::sweep_yaml;

// JSON is YAML: the canonical text goes through the same loader.
void expect_round_trip(const SweepConfig& sweep) {
  const std::string text = to_json(sweep).dump(2);
  SweepConfig again;
  try {
    again = load_sweep_string(text, "canonical.json");
  } catch (const ConfigError& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EXPECT_EQ(again, sweep) << text;
  EXPECT_EQ(to_json(again), to_json(sweep));
}

TEST(SweepJson, RoundTripsEveryDistribution) {
  const std::vector<std::string> parameters = {
      "lr: {distribution: uniform, min: 0.0123456789, max: 0.2}",
      "lr: {distribution: log_uniform, min: 1.0e-7, max: 0.3}",
      "warmup: {distribution: int_uniform, min: 0, max: 100}",
      // With what reads them (a parameter no trial reads is refused).
      "step_size: {distribution: int_log_uniform, min: 1, max: 1000}\n  schedule: {value: step}",
      "beta1: {distribution: quantized, min: 0.5, max: 0.95, q: 0.05}\n  optimizer: {value: adam}",
      "beta1: {distribution: quantized, min: 0.5, max: 0.95, q: 0.05, log: true}\n  optimizer: {value: adam}",
      "warmup: {distribution: quantized, min: 0, max: 100, q: 10}",
      "schedule: {distribution: choice, values: [constant, step, cosine]}",
      "nesterov: {distribution: choice, values: [true, false]}\n  momentum: {value: 0.9}",
      "label_smoothing: {distribution: const, value: 0.05}",
      "optimizer: {distribution: const, value: adam}",
      "dropout: {distribution: grid, values: [0, 0.25, 0.5]}",
      "width: {distribution: grid, values: [64, 256], fuse: false}",
      "warmup: {distribution: int_uniform, min: 0, max: 1000000000000}",
  };
  for (const auto& p : parameters) {
    SCOPED_TRACE(p);
    expect_round_trip(load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  " + p + "\n"}})));
  }
}

TEST(SweepJson, RoundTripsConditionsAndEverySection) {
  const SweepConfig s = load_sweep_string(sweep_yaml(
      {{"task", "task:\n  model: mlp\n  validation_size: 5000\n  eval_steps: 300\n"},
       {"search", "search:\n  method: asha\n  trials: 30\n  eta: 4\n  promotion_wait: 1.5\n"},
       {"parameters", "parameters:\n  optimizer: {values: [sgd, adam], fuse: false}\n"
                      "  schedule: {values: [step, cosine]}\n"
                      "  momentum: {distribution: uniform, min: 0, max: 0.9,"
                      " when: {schedule: step, optimizer: sgd}}\n"},
       {"early_stopping", "early_stopping:\n  patience: 2\n"},
       {"fusion", "fusion:\n  enabled: 'off'\n  max_array: 7\n  min_gain: 0.3\n"}}));
  expect_round_trip(s);
}

TEST(SweepJson, RoundTripsChoiceProbabilities) {
  const SweepConfig s = load_sweep_string(sweep_yaml(
      {{"parameters", "parameters:\n  momentum: {values: [0, 0.5, 0.9], probabilities: [0.2, 0.3, 0.5]}\n"}}));
  ASSERT_EQ(s.parameters.size(), 1u);
  EXPECT_EQ(s.parameters[0].distribution, search::Distribution::kChoice);  // W&B's shorthand
  EXPECT_EQ(s.parameters[0].probabilities, (std::vector<double>{0.2, 0.3, 0.5}));
  EXPECT_EQ(to_json(s)["parameters"]["momentum"]["probabilities"], nlohmann::json({0.2, 0.3, 0.5}));
  EXPECT_EQ(describe(s.parameters[0]), "choice {0, 0.5, 0.9} with probabilities {0.2, 0.3, 0.5}");
  expect_round_trip(s);
}

TEST(SweepJson, RoundTripsAMetricTarget) {
  const SweepConfig s = load_sweep_string(sweep_yaml({{"metric", "metric: {name: val_accuracy, goal: maximize, target: 0.9}\n"}}));
  EXPECT_EQ(to_json(s)["metric"]["target"], 0.9);
  expect_round_trip(s);
  EXPECT_FALSE(to_json(load_sweep_string(sweep_yaml()))["metric"].contains("target"));
}

TEST(SweepJson, RoundTripsEachSearchMethod) {
  // (Also at budget.min = budget.max, where grace_period is budget.min, the one step.)
  expect_round_trip(load_sweep_string(sweep_yaml({{"search", "search:\n  method: random\n  trials: 5\n  stopping: median\n"},
                                                  {"budget", "budget:\n  unit: epochs\n  max: 1\n"}})));
  for (const std::string search : {"search:\n  method: random\n  trials: 5\n  stopping: median\n",
                                   "search:\n  method: random\n  trials: 5\n  stopping: median\n  grace_period: 4\n",
                                   "search:\n  method: random\n  trials: 2\n  stopping: median\n",
                                   "search:\n  method: random\n  trials: 5\n  stopping: percentile\n  percentile: 20\n"
                                   "  min_samples: 2\n",
                                   "search:\n  method: sha\n  trials: 9\n  searcher: tpe\n",
                                   "search:\n  method: hyperband\n  searcher: tpe\n  multivariate: true\n",
                                   "search:\n  method: asha\n  trials: 9\n  searcher: qmc\n",
                                   "search:\n  method: hyperband\n  eta: 2\n",
                                   "search:\n  method: hyperband\n  align_brackets: false\n",
                                   "search:\n  method: hyperband\n  iterations: 3\n"}) {
    SCOPED_TRACE(search);
    expect_round_trip(load_sweep_string(sweep_yaml({{"search", search}})));
  }
}

TEST(SweepJson, RoundTripsEveryShippedConfig) {
  const std::string dir = std::string(HFTA_SOURCE_DIR) + "/configs";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  int count = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 5) != ".yaml") continue;
    SCOPED_TRACE(name);
    expect_round_trip(load_sweep_file(dir + "/" + name));
    ++count;
  }
  closedir(d);
  EXPECT_GE(count, 2);
}

TEST(SweepJson, ValuesKeepTheirTypes) {
  EXPECT_TRUE(to_json(search::ParamValue(true)).is_boolean());
  EXPECT_TRUE(to_json(search::ParamValue(std::int64_t{3})).is_number_integer());
  EXPECT_TRUE(to_json(search::ParamValue(3.0)).is_number_float());
  EXPECT_TRUE(to_json(search::ParamValue(std::string("3"))).is_string());
}

}  // namespace
}  // namespace hfta::core
