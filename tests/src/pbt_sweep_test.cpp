// Population based training as a sweep states it: search.method pbt, its keys,
// what it refuses, and how validate, plan and sweep.json show it.
#include <gtest/gtest.h>

#include <string>

#include "../support/expect_rejected.h"
#include "../support/sweep_text.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core {
namespace {

using test::expect_rejected;
using test::sweep_yaml;

const std::string kPbt = "search:\n  method: pbt\n  population: 8\n";
const std::string kParameters =
    "parameters:\n"
    "  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"
    "  momentum: {distribution: uniform, min: 0.0, max: 0.9}\n"
    "  width: {values: [32, 64], fuse: false}\n";

TEST(PbtSweep, LoadsWithRayTunesDefaultsAndPlansGenerations) {
  const SweepConfig s = load_sweep_string(sweep_yaml({{"search", kPbt}, {"parameters", kParameters}}), "sweep.yaml");
  EXPECT_EQ(s.search.method, SearchMethod::kPbt);
  EXPECT_EQ(s.search.population, 8);
  EXPECT_EQ(s.search.quantile_fraction, 0.25);
  EXPECT_EQ(s.search.resample_probability, 0.25);
  EXPECT_EQ(s.search.perturbation_factors, (std::vector<double>{1.2, 0.8}));
  // What may change mid-training is explored; the width shapes the model, and stays.
  EXPECT_EQ(pbt_mutable(s), (std::set<std::string>{"lr", "momentum"}));
  EXPECT_EQ(rung_budgets(s), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const auto brackets = make_scheduler(s)->plan();
  ASSERT_EQ(brackets.size(), 1u);
  EXPECT_EQ(brackets[0].rungs.size(), 9u);
  EXPECT_EQ(brackets[0].rungs[0].n, 8);
  const std::string text = to_text(make_plan(s, true, "cpu", 1e9), s);
  EXPECT_NE(text.find("plan for 'test-sweep': pbt, budget"), std::string::npos) << text;
  EXPECT_NE(text.find("generation 0: 8 trials to 1 epoch"), std::string::npos) << text;
  EXPECT_NE(text.find("population of 8, in generations\n  generation 0:"), std::string::npos) << text;
  EXPECT_NE(text.find("total budget: 72 epochs (the population to budget.max)"), std::string::npos) << text;
  EXPECT_NE(text.find("trains its 8 members together, 1 epoch a generation; after each, the worst 2 (those that "
                      "stopped or diverged counted worst, and all of them replaced) take the state of one of the best 2 "
                      "as new trials, with lr, momentum explored: about 24 trials in all"),
            std::string::npos)
      << text;
  EXPECT_NE(summarize(s).find("pbt, population 8, random searcher"), std::string::npos) << summarize(s);
  const auto json = to_json(make_plan(s, true, "cpu", 1e9), s);
  EXPECT_EQ(json.at("pbt"), nlohmann::json({{"population", 8},
                                            {"replaced_per_generation", 2},
                                            {"trials", 24},
                                            {"explored", {"lr", "momentum"}},
                                            {"burn_in_period", 0}}));
  // Its total, as the text says: the population to budget.max (not the sum
  // of the generations' cumulative budgets, 8 x (1 + ... + 9) = 360).
  EXPECT_EQ(json.at("total_budget"), 72.0);
  EXPECT_EQ(json.at("trained_budget"), 72.0);
}

TEST(PbtSweep, SweepJsonLoadsBackEqual) {
  const SweepConfig s = load_sweep_string(
      sweep_yaml({{"search", "search:\n  method: pbt\n  population: 6\n  searcher: qmc\n  quantile_fraction: 0.5\n"
                             "  resample_probability: 0\n  perturbation_factors: [1.5, 1, 0.5]\n  burn_in_period: 4\n"},
                  {"parameters", kParameters}}),
      "sweep.yaml");
  EXPECT_EQ(s.search.perturbation_factors, (std::vector<double>{1.5, 1, 0.5}));
  EXPECT_EQ(s.search.burn_in_period, 4);
  const SweepConfig again = load_sweep_string(to_json(s).dump(), "sweep.json");
  EXPECT_EQ(again, s);
  SweepConfig other = s;
  other.search.perturbation_factors = {1.2, 0.8};
  EXPECT_NE(other, s);  // resume names the edit
}

TEST(PbtSweep, RefusesWhatItCannotRunAtItsLine) {
  const std::string params = kParameters;
  expect_rejected(sweep_yaml({{"search", "search:\n  method: pbt\n"}, {"parameters", params}}), "search.population",
                  "method: pbt", "missing");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: pbt\n  population: 1\n"}, {"parameters", params}}),
                  "search.population", "population: 1", "expected an integer in [2,");
  expect_rejected(sweep_yaml({{"search", kPbt + "  quantile_fraction: 0.6\n"}, {"parameters", params}}),
                  "search.quantile_fraction", "quantile_fraction", "expected a share in (0, 0.5]");
  expect_rejected(sweep_yaml({{"search", kPbt + "  resample_probability: 2\n"}, {"parameters", params}}),
                  "search.resample_probability", "resample_probability", "expected a probability in [0, 1]");
  expect_rejected(sweep_yaml({{"search", kPbt + "  perturbation_factors: [1.2, -1]\n"}, {"parameters", params}}),
                  "search.perturbation_factors[1]", "perturbation_factors", "expected a list of positive numbers");
  expect_rejected(sweep_yaml({{"search", kPbt + "  perturbation_factors: 1.2\n"}, {"parameters", params}}),
                  "search.perturbation_factors", "perturbation_factors", "expected a list of positive numbers");
  expect_rejected(sweep_yaml({{"search", kPbt + "  searcher: tpe\n"}, {"parameters", params}}), "search.searcher",
                  "searcher: tpe", "with searcher random or qmc");
  expect_rejected(sweep_yaml({{"search", kPbt + "  trials: 20\n"}, {"parameters", params}}), "search.trials",
                  "trials: 20", "trains search.population members");
  expect_rejected(sweep_yaml({{"search", kPbt + "  eta: 3\n"}, {"parameters", params}}), "search.eta", "eta: 3",
                  "'eta' is not used by method pbt");
  expect_rejected(
      sweep_yaml({{"search", kPbt}, {"parameters", params + "  dropout: {distribution: grid, values: [0.0, 0.1]}\n"}}),
      "parameters.dropout", "dropout:", "a grid is searched by method grid");
  // Nothing it could explore: the width shapes the model, and the optimizer
  // and lr per optimizer decide which parameters a trial has.
  expect_rejected(sweep_yaml({{"search", kPbt},
                              {"parameters", "parameters:\n  width: {values: [32, 64]}\n"
                                             "  optimizer: {values: [sgd, adam]}\n"
                                             "  dropout: {value: 0.1}\n"}}),
                  "search.method", "method: pbt", "this sweep tunes none of them");
  expect_rejected(sweep_yaml({{"search", kPbt},
                              {"budget", "budget:\n  unit: steps\n  min: 1\n  max: 100000\n"},
                              {"parameters", params}}),
                  "budget.min", "min: 1", "population based training would run 100000 generations");
  expect_rejected(sweep_yaml({{"search", kPbt}, {"budget", "budget:\n  unit: steps\n  max: 5000\n"}, {"parameters", params}}),
                  "budget.min", "unit: steps", "population based training needs budget.min");
  expect_rejected(sweep_yaml({{"search", kPbt}, {"budget", "budget:\n  min: 9\n  max: 9\n"}, {"parameters", params}}),
                  "budget.min", "min: 9", "one generation, so population based training would exploit nothing");
  expect_rejected(sweep_yaml({{"search", kPbt + "  perturbation_factors: []\n"}, {"parameters", params}}),
                  "search.perturbation_factors", "perturbation_factors", "got an empty list");
  expect_rejected(sweep_yaml({{"search", kPbt + "  burn_in_period: 9\n"}, {"parameters", params}}),
                  "search.burn_in_period", "burn_in_period", "no generation would exploit");
  // Generations in samples that round to the same steps.
  expect_rejected(sweep_yaml({{"search", kPbt},
                              {"budget", "budget:\n  unit: samples\n  min: 20\n  max: 60\n"},
                              {"parameters", params}}),
                  "budget.min", "min: 20", "population based training's generations to 20 samples and 40 samples");
  // Points: at most one per member.
  expect_rejected(sweep_yaml({{"search", "search:\n  method: pbt\n  population: 2\n  points_to_evaluate:\n"
                                         "    - {lr: 0.01}\n    - {lr: 0.02}\n    - {lr: 0.03}\n"},
                              {"parameters", params}}),
                  "search.points_to_evaluate[2]", "lr: 0.03", "raise search.population");
}

TEST(PbtSweep, SearchExploreChoosesWhatChangesAsRayTunesHyperparamMutations) {
  const SweepConfig s =
      load_sweep_string(sweep_yaml({{"search", kPbt + "  explore: [momentum]\n"}, {"parameters", kParameters}}), "sweep.yaml");
  EXPECT_EQ(s.search.explore, (std::vector<std::string>{"momentum"}));
  EXPECT_EQ(pbt_mutable(s), (std::set<std::string>{"momentum"}));  // lr keeps each lineage's first draw
  EXPECT_EQ(load_sweep_string(to_json(s).dump(), "sweep.json"), s);
  const std::string params = kParameters + "  label_smoothing: {value: 0.1}\n";
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: [lr, momentom]\n"}, {"parameters", params}}),
                  "search.explore[1]", "explore:", "'momentom' is not a parameter of this sweep (did you mean 'momentum'?)");
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: [width]\n"}, {"parameters", params}}), "search.explore[0]",
                  "explore:", "'width' cannot change while a model trains");
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: [label_smoothing]\n"}, {"parameters", params}}),
                  "search.explore[0]", "explore:", "it is constant (one value), or a `when` names it");
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: [dropout]\n"},
                              {"parameters", params + "  dropout: {values: [0.1]}\n"}}),
                  "search.explore[0]", "explore:", "it is constant (one value)");
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: []\n"}, {"parameters", params}}), "search.explore",
                  "explore:", "got an empty list");
  // A set: written in another order, the same sweep (resume takes it).
  EXPECT_EQ(load_sweep_string(sweep_yaml({{"search", kPbt + "  explore: [momentum, lr]\n"}, {"parameters", params}}), "a"),
            load_sweep_string(sweep_yaml({{"search", kPbt + "  explore: [lr, momentum]\n"}, {"parameters", params}}), "a"));
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: [lr, lr]\n"}, {"parameters", params}}), "search.explore[1]",
                  "explore:", "'lr' is listed twice");
  expect_rejected(sweep_yaml({{"search", kPbt + "  explore: lr\n"}, {"parameters", params}}), "search.explore",
                  "explore:", "expected a list of the parameters explore may change");
}

TEST(PbtSweep, AParameterAWhenNamesIsNotExplored) {
  const SweepConfig s = load_sweep_string(
      sweep_yaml({{"search", kPbt},
                  {"parameters", "parameters:\n  dropout: {values: [0.0, 0.2]}\n"
                                 "  momentum: {distribution: uniform, min: 0.0, max: 0.9, when: {dropout: 0.2}}\n"}}),
      "sweep.yaml");
  EXPECT_EQ(pbt_mutable(s), (std::set<std::string>{"momentum"}));
}

}  // namespace
}  // namespace hfta::core
