// results.json's "importance": which results it judges, and how it says why it cannot.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../support/sweep_text.h"
#include "hfta/core/sweep_importance.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/search/param_importance.h"

namespace hfta::core {
namespace {

using test::sweep_yaml;

const std::string kSpace =
    "parameters:\n"
    "  lr: {distribution: log_uniform, min: 0.0001, max: 0.1}\n"
    "  dropout: {distribution: uniform, min: 0.0, max: 0.5}\n";

SweepConfig sweep(Goal goal = Goal::kMaximize) {
  SweepConfig s = load_sweep_string(sweep_yaml({{"parameters", kSpace}}), "sweep.yaml");
  s.metric.goal = goal;
  return s;
}

// Trial t with lr and dropout from the sweep's space; `metrics` its results by budget.
TrialRecord trial(const SweepConfig& s, std::int64_t t, std::map<double, double> metrics) {
  TrialRecord r;
  r.id = t;
  r.params = search::SearchSpace(s.parameters).sample(s.seed, t);
  r.rung_metrics = std::move(metrics);
  return r;
}

double lr_of(const TrialRecord& r) { return std::log10(std::get<double>(r.params.at("lr"))); }

TEST(SweepImportance, JudgesTheLargestBudgetThatEightTrialsReachedByTheirResultsThere) {
  const SweepConfig s = sweep();
  std::vector<TrialRecord> trials;
  // 27 trials at budget 1 (their result: dropout's), 9 of them at 3 and 3 at 9 (lr's).
  for (std::int64_t t = 0; t < 27; ++t) {
    TrialRecord r = trial(s, t, {});
    r.rung_metrics[1] = std::get<double>(r.params.at("dropout"));
    if (t < 9) r.rung_metrics[3] = -lr_of(r);
    if (t < 3) r.rung_metrics[9] = 0.9;
    trials.push_back(r);
  }
  const auto j = importance_json(s, trials);
  EXPECT_EQ(j.at("method"), "fanova");
  EXPECT_EQ(j.at("metric"), "val_accuracy");
  EXPECT_EQ(j.at("unit"), "epochs");
  EXPECT_EQ(j.at("left_out"), nlohmann::json::array());
  EXPECT_EQ(j.at("budget"), 3.0);
  EXPECT_EQ(j.at("results"), 9);
  EXPECT_FALSE(j.contains("why"));
  ASSERT_EQ(j.at("params").size(), 2u);
  EXPECT_EQ(j.at("params")[0].at("name"), "lr");
  // The numbers are param_importance's over those nine results, with the sweep's seed.
  std::vector<search::Config> configs;
  std::vector<double> values;
  for (std::int64_t t = 0; t < 9; ++t) {
    configs.push_back(trials[static_cast<std::size_t>(t)].params);
    values.push_back(trials[static_cast<std::size_t>(t)].rung_metrics.at(3));
  }
  std::string why;
  const auto direct = search::param_importance(s.parameters, configs, values, s.seed, why);
  ASSERT_TRUE(direct.has_value()) << why;
  const auto& [name, share] = direct->params[0];
  EXPECT_EQ(j.at("params")[0].at("name"), name);
  EXPECT_EQ(j.at("params")[0].at("importance"), share);
  EXPECT_EQ(j.at("main_effects"), direct->main_effects);
}

TEST(SweepImportance, ADivergedResultCountsAsTheWorstThereByTheGoal) {
  for (Goal goal : {Goal::kMaximize, Goal::kMinimize}) {
    const SweepConfig s = sweep(goal);
    std::vector<TrialRecord> with_nan, with_worst;
    for (std::int64_t t = 0; t < 12; ++t) {
      const double v = lr_of(trial(s, t, {}));
      with_nan.push_back(trial(s, t, {{9, t == 4 ? NAN : v}}));
      with_worst.push_back(trial(s, t, {{9, v}}));
    }
    double worst = with_worst[0].rung_metrics[9];
    for (std::size_t t = 0; t < 12; ++t) {
      if (t == 4) continue;
      const double v = with_worst[t].rung_metrics[9];
      worst = goal == Goal::kMaximize ? std::min(worst, v) : std::max(worst, v);
    }
    with_worst[4].rung_metrics[9] = worst;
    EXPECT_EQ(importance_json(s, with_nan), importance_json(s, with_worst));
  }
}

TEST(SweepImportance, JudgesASeededSampleOfAtMostFiveThousandResults) {
  const SweepConfig s = sweep();
  std::vector<TrialRecord> trials;
  for (std::int64_t t = 0; t < 5200; ++t) {
    TrialRecord r = trial(s, t, {});
    r.rung_metrics[9] = -lr_of(r);
    trials.push_back(r);
  }
  const auto j = importance_json(s, trials);
  EXPECT_EQ(j.at("results"), 5000);
  EXPECT_EQ(j.at("sampled_from"), 5200);
  EXPECT_EQ(j.at("params")[0].at("name"), "lr");
  EXPECT_EQ(importance_json(s, trials), j);  // the same sample every time
  trials.resize(5000);
  EXPECT_FALSE(importance_json(s, trials).contains("sampled_from"));
}

TEST(SweepImportance, NeedsTwiceAsManyResultsAsVaryingParametersWhereThatIsMoreThanEight) {
  SweepConfig s = sweep();
  EXPECT_EQ(importance_results_needed(s), 8u);
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    search::ParameterSpec p = s.parameters[0];
    p.name = name;
    s.parameters.push_back(p);
  }
  search::ParameterSpec constant;
  constant.name = "optimizer";
  constant.values = {std::string("adam")};
  s.parameters.push_back(constant);  // (const: not counted)
  EXPECT_EQ(importance_results_needed(s), 14u);
}

TEST(SweepImportance, SaysWhyWhereItCannotJudge) {
  const SweepConfig s = sweep();
  std::vector<TrialRecord> few;
  for (std::int64_t t = 0; t < 7; ++t) few.push_back(trial(s, t, {{1, 0.5 + 0.01 * static_cast<double>(t)}}));
  few.push_back(trial(s, 7, {}));  // failed in its first rung: no result
  auto j = importance_json(s, few);
  EXPECT_TRUE(j.at("params").empty());
  EXPECT_EQ(j.at("budget"), nullptr);
  EXPECT_EQ(j.at("why"), "it needs results of 8 trials at one budget; the most at any is 7");
  EXPECT_EQ(importance_json(s, {}).at("why"), "it needs results of 8 trials at one budget; no trial has a result");

  std::vector<TrialRecord> diverged, flat;
  for (std::int64_t t = 0; t < 8; ++t) {
    diverged.push_back(trial(s, t, {{1, NAN}}));
    flat.push_back(trial(s, t, {{1, 0.25}}));
  }
  EXPECT_EQ(importance_json(s, diverged).at("why"), "every result at 1 epoch diverged");
  j = importance_json(s, flat);
  EXPECT_EQ(j.at("why"), "the metric is the same in every result");
  EXPECT_EQ(j.at("budget"), 1.0);
  EXPECT_EQ(j.at("results"), 8);

  SweepConfig pbt = s;
  pbt.search.method = SearchMethod::kPbt;
  EXPECT_NE(importance_json(pbt, flat).at("why").get<std::string>().find("population based training"), std::string::npos);
}

}  // namespace
}  // namespace hfta::core
