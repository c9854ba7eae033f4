// A parameter written as a list of branches, one per condition (lr per
// optimizer): loaded, refused where branches may meet, sampled from the branch
// that holds, and kept through points to evaluate and the canonical JSON.
#include <gtest/gtest.h>

#include "../support/expect_rejected.h"
#include "../support/sweep_text.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_summary.h"

namespace hfta::core {
namespace {

using test::expect_rejected;
using test::sweep_yaml;

const char* kBranches =
    "parameters:\n"
    "  optimizer: {values: [sgd, adam, adamw]}\n"
    "  lr:\n"
    "    - {distribution: log_uniform, min: 0.05, max: 0.5, when: {optimizer: sgd}}\n"
    "    - {distribution: log_uniform, min: 0.0001, max: 0.001, when: {optimizer: [adam, adamw]}}\n"
    "  momentum:\n"
    "    - {distribution: uniform, min: 0.8, max: 0.95, when: {optimizer: sgd}}\n";

std::string with_parameters(const std::string& parameters, const std::string& search = "") {
  std::map<std::string, std::string> sections = {{"parameters", parameters}};
  if (!search.empty()) sections["search"] = search;
  return sweep_yaml(sections);
}

TEST(ParameterBranches, LoadInTheirOrderWithTheirConditions) {
  const SweepConfig sweep = load_sweep_string(with_parameters(kBranches), "sweep.yaml");
  const auto lr = sweep.parameter_branches("lr");
  ASSERT_EQ(lr.size(), 2u);
  EXPECT_EQ(lr[0]->branch, 0);
  EXPECT_EQ(lr[0]->min, 0.05);
  EXPECT_EQ(lr[1]->branch, 1);
  EXPECT_EQ(lr[1]->max, 0.001);
  ASSERT_EQ(lr[1]->when.size(), 1u);
  EXPECT_EQ(lr[1]->when[0].values.size(), 2u);
  EXPECT_EQ(parameter_path(*lr[1]), "parameters.lr[1]");
  EXPECT_EQ(sweep.parameter_branches("momentum").at(0)->branch, 0);  // a list of one is a branch too
  EXPECT_EQ(sweep.find_parameter("optimizer")->branch, -1);
  // validate shows each branch as written, and counts parameters by name.
  const std::string summary = summarize(sweep);
  EXPECT_NE(summary.find("parameters  3\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("lr[1]"), std::string::npos) << summary;
}

TEST(ParameterBranches, EachTrialDrawsFromTheBranchThatHolds) {
  for (const char* searcher : {"random", "qmc"}) {
    SCOPED_TRACE(searcher);
    const SweepConfig sweep = load_sweep_string(
        with_parameters(kBranches, std::string("search:\n  method: random\n  trials: 60\n  searcher: ") + searcher + "\n"),
        "sweep.yaml");
    const search::SearchSpace space = make_search_space(sweep);
    std::map<std::string, int> seen;
    for (std::int64_t t = 0; t < 60; ++t) {
      const search::Config c = space.sample(sweep.seed, t);
      const std::string optimizer = search::to_string(c.at("optimizer"));
      const double lr = search::as_double(c.at("lr"));
      ++seen[optimizer];
      if (optimizer == "sgd") {
        EXPECT_TRUE(lr >= 0.05 && lr <= 0.5) << lr;
        EXPECT_TRUE(c.count("momentum"));
      } else {
        EXPECT_TRUE(lr >= 0.0001 && lr <= 0.001) << optimizer << " " << lr;
        EXPECT_FALSE(c.count("momentum"));
      }
    }
    EXPECT_EQ(seen.size(), 3u);
  }
}

TEST(ParameterBranches, RoundTripThroughTheCanonicalJson) {
  const SweepConfig sweep = load_sweep_string(with_parameters(kBranches), "sweep.yaml");
  const auto json = to_json(sweep);
  ASSERT_TRUE(json["parameters"]["lr"].is_array()) << json.dump(2);
  EXPECT_EQ(json["parameters"]["lr"].size(), 2u);
  const SweepConfig again = load_sweep_string(json.dump(2), "sweep.json");
  EXPECT_EQ(again, sweep);
}

TEST(ParameterBranches, BranchesThatMayMeetAreRefused) {
  const std::string yaml = with_parameters(
      "parameters:\n"
      "  optimizer: {values: [sgd, adam]}\n"
      "  schedule: {values: [constant, cosine]}\n"
      "  lr:\n"
      "    - {distribution: log_uniform, min: 0.05, max: 0.5, when: {optimizer: sgd}}\n"
      "    - {distribution: log_uniform, min: 0.0001, max: 0.001, when: {schedule: cosine}}\n");
  expect_rejected(yaml, "parameters.lr[1].when", "when: {schedule: cosine}", "may hold in the same trial as parameters.lr[0]");
  // Overlapping values of one parameter.
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam, adamw]}\n"
                                  "  lr:\n"
                                  "    - {value: 0.1, when: {optimizer: [sgd, adam]}}\n"
                                  "    - {value: 0.001, when: {optimizer: [adam, adamw]}}\n"),
                  "parameters.lr[1].when", "value: 0.001", "two values");
}

TEST(ParameterBranches, EachBranchNeedsAConditionAndAMapping) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  lr:\n"
                                  "    - {distribution: log_uniform, min: 0.05, max: 0.5, when: {optimizer: sgd}}\n"
                                  "    - {distribution: log_uniform, min: 0.0001, max: 0.001}\n"),
                  "parameters.lr[1]", "max: 0.001}", "needs a when");
  expect_rejected(with_parameters("parameters:\n  lr: [0.1, 0.01]\n"), "parameters.lr[0]", "[0.1, 0.01]",
                  "got '0.1' in a list; to choose among values, write values: [...]");
  expect_rejected(with_parameters("parameters:\n  lr: []\n"), "parameters.lr", "[]", "or a list of such mappings");
}

TEST(ParameterBranches, GridsAndConditionsOnABranchedParameterAreRefused) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  lr:\n"
                                  "    - {distribution: grid, values: [0.1, 0.2], when: {optimizer: sgd}}\n"
                                  "    - {distribution: grid, values: [0.001], when: {optimizer: adam}}\n"),
                  "parameters.lr[0]", "grid, values: [0.1", "a grid cannot have branches");
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  schedule:\n"
                                  "    - {values: [step, cosine], when: {optimizer: sgd}}\n"
                                  "    - {values: [cosine], when: {optimizer: adam}}\n"
                                  "  gamma: {values: [0.5], when: {schedule: step}}\n"),
                  "parameters.gamma.when.schedule", "schedule: step", "'schedule' has branches");
}

TEST(ParameterBranches, EachBranchIsCheckedAgainstWhatItSetsAtItsOwnLine) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, rmsprop]}\n"
                                  "  momentum:\n"
                                  "    - {distribution: uniform, min: 0.5, max: 0.9, when: {optimizer: sgd}}\n"
                                  "    - {distribution: uniform, min: 0.5, max: 1.5, when: {optimizer: rmsprop}}\n"),
                  "parameters.momentum[1]", "max: 1.5", "leaves the valid values");
  // beta1 only under sgd: no trial reads it.
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  beta1:\n"
                                  "    - {value: 0.8, when: {optimizer: sgd}}\n"
                                  "    - {value: 0.9, when: {optimizer: adam}}\n"),
                  "parameters.beta1[0]", "value: 0.8", "is read only with optimizer");
}

TEST(ParameterBranches, NesterovLooksAtEveryBranchOfMomentum) {
  const std::string nesterov_with = "  nesterov: {values: [true, false], when: {optimizer: sgd}}\n";
  // sgd's momentum is above 0 wherever nesterov is: accepted, though rmsprop's may be 0.
  EXPECT_NO_THROW(load_sweep_string(
      with_parameters("parameters:\n"
                      "  optimizer: {values: [sgd, rmsprop]}\n"
                      "  momentum:\n"
                      "    - {distribution: uniform, min: 0.5, max: 0.9, when: {optimizer: sgd}}\n"
                      "    - {values: [0, 0.5], when: {optimizer: rmsprop}}\n" +
                      nesterov_with),
      "sweep.yaml"));
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, rmsprop]}\n"
                                  "  momentum:\n"
                                  "    - {values: [0, 0.9], when: {optimizer: sgd}}\n"
                                  "    - {values: [0.5], when: {optimizer: rmsprop}}\n" +
                                  nesterov_with),
                  "parameters.nesterov", "nesterov:", "momentum may be 0");
}

TEST(ParameterBranches, ABranchWhoseWhenIsRefusedIsTheOneProblem) {
  for (const char* when : {"when: {}", "when: 5", "when: {schedule: cosine}", "when: {lr: 0.1}"}) {
    SCOPED_TRACE(when);
    const std::string yaml = with_parameters(std::string("parameters:\n"
                                                         "  optimizer: {values: [sgd, adam]}\n"
                                                         "  lr:\n"
                                                         "    - {value: 0.1, when: {optimizer: sgd}}\n"
                                                         "    - {value: 0.001, ") + when + "}\n");
    try {
      load_sweep_string(yaml, "sweep.yaml");
      FAIL() << "accepted:\n" << yaml;
    } catch (const ConfigError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      EXPECT_EQ(e.diagnostics()[0].path.rfind("parameters.lr[1].when", 0), 0u) << e.what();
    }
  }
}

// The checks that pair settings leave out a name whose condition was refused.
TEST(ParameterBranches, ARefusedConditionOnABranchedParameterIsTheOneProblem) {
  const std::string task =
      "task:\n  model: transformer_lm\n  batch_size: 8\n  options: {d_model: 96, heads: 3, layers: 2}\n";
  const std::string yaml = sweep_yaml({{"task", task},
                                       {"metric", "metric:\n  name: val_loss\n  goal: minimize\n"},
                                       {"parameters",
                                        "parameters:\n"
                                        "  optimizer: {values: [sgd, adam]}\n"
                                        "  layers: {values: [2, 4]}\n"
                                        "  heads:\n"
                                        "    - {values: [8], when: {optimizer: sgd}}\n"
                                        "    - {values: [3], when: {optimizer: adam, d_model: 96}}\n"
                                        "  d_model:\n"
                                        "    - {values: [128], when: {layers: 2}}\n"
                                        "    - {values: [96], when: {layers: 4}}\n"}});
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].path, "parameters.heads[1].when.d_model") << e.what();
  }
}

TEST(ParameterBranches, BranchesOfOneNameShareTheirFuse) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  lr:\n"
                                  "    - {distribution: log_uniform, min: 0.05, max: 0.5, fuse: false, when: {optimizer: sgd}}\n"
                                  "    - {distribution: log_uniform, min: 0.0001, max: 0.001, when: {optimizer: adam}}\n"),
                  "parameters.lr[1].fuse", "max: 0.001,", "give every branch the same fuse");
}

TEST(ParameterBranches, ANamePerOptimizerAsOptunaCodeWritesItPointsToBranches) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  sgd_lr: {distribution: log_uniform, min: 0.05, max: 0.5}\n"),
                  "parameters.sgd_lr", "sgd_lr", "a lr for optimizer sgd is a branch of lr: lr: [{..., when: {optimizer: sgd}}");
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  momentum_sgd: {distribution: uniform, min: 0.5, max: 0.9}\n"),
                  "parameters.momentum_sgd", "momentum_sgd", "a momentum for optimizer sgd is a branch of momentum");
}

TEST(ParameterBranches, AnUnknownNameOrAnItemNoMappingIsNamedWhereItIs) {
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  lrr:\n"
                                  "    - {value: 0.1, when: {optimizer: sgd}}\n"),
                  "parameters.lrr", "lrr:", "did you mean 'lr'?");
  expect_rejected(with_parameters("parameters:\n"
                                  "  optimizer: {values: [sgd, adam]}\n"
                                  "  lr:\n"
                                  "    - {value: 0.1, when: {optimizer: sgd}}\n"
                                  "    - 0.001\n"),
                  "parameters.lr[1]", "- 0.001", "got '0.001' in a list");
}

// Branches that between them cover every value of what they are conditioned
// on leave no trial at the default: the checks that pair settings see that.
TEST(ParameterBranches, BranchesCoveringEveryTrialLeaveNoDefault) {
  // Momentum is above 0 under either optimizer wherever nesterov may be true.
  EXPECT_NO_THROW(load_sweep_string(with_parameters("parameters:\n"
                                                    "  optimizer: {values: [sgd, rmsprop]}\n"
                                                    "  nesterov: {values: [true, false]}\n"
                                                    "  momentum:\n"
                                                    "    - {distribution: uniform, min: 0.5, max: 0.9, when: {optimizer: sgd}}\n"
                                                    "    - {distribution: uniform, min: 0.1, max: 0.5, when: {optimizer: rmsprop}}\n"),
                                    "sweep.yaml"));
  // Every trial has 4, 8 or 16 heads, never the task's 3.
  const std::string task = "task:\n  model: transformer_lm\n  batch_size: 8\n  options: {d_model: 96, heads: 3}\n";
  const std::string heads = "parameters:\n"
                            "  layers: {values: [2, 4]}\n"
                            "  d_model: {values: [128, 256]}\n"
                            "  heads:\n"
                            "    - {values: [4, 8], when: {layers: 2}}\n"
                            "    - {values: [16], when: {layers: 4}}\n";
  const std::string metric = "metric:\n  name: val_loss\n  goal: minimize\n";
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"task", task}, {"metric", metric}, {"parameters", heads}}), "sweep.yaml"));
  // A branch whose heads do not divide a d_model it meets is still refused, at the branch.
  std::string bad = heads;
  bad.replace(bad.find("[16]"), 4, "[12]");
  bad.replace(bad.find("[128, 256]"), 10, "[128, 96]");
  expect_rejected(sweep_yaml({{"task", task}, {"metric", metric}, {"parameters", bad}}), "parameters.heads[1]", "[12]",
                  "12 heads do not divide d_model 128");
  // Optimizer's branches hold adam or adamw only: momentum is read in no trial.
  expect_rejected(with_parameters("parameters:\n"
                                  "  batch_size: {values: [64, 128]}\n"
                                  "  optimizer:\n"
                                  "    - {value: adam, when: {batch_size: 64}}\n"
                                  "    - {value: adamw, when: {batch_size: 128}}\n"
                                  "  momentum: {distribution: uniform, min: 0.1, max: 0.9}\n"),
                  "parameters.momentum", "momentum:", "is read only with optimizer");
}

TEST(ParameterBranches, APointIsJudgedByTheBranchThatHoldsInIt) {
  const std::string parameters = kBranches;
  auto search_with = [](const std::string& points) {
    return "search:\n  method: random\n  trials: 4\n  points_to_evaluate:\n" + points;
  };
  const SweepConfig sweep = load_sweep_string(
      with_parameters(parameters, search_with("    - {optimizer: sgd, lr: 0.1}\n    - {optimizer: adam, lr: 0.0003}\n")),
      "sweep.yaml");
  ASSERT_EQ(sweep.search.points.size(), 2u);
  const search::Config first = make_search_space(sweep).sample(sweep.seed, 0, sweep.search.points[0]);
  EXPECT_EQ(search::as_double(first.at("lr")), 0.1);
  EXPECT_TRUE(first.count("momentum"));
  // 0.1 is sgd's, not adam's.
  const std::string outside = with_parameters(parameters, search_with("    - {optimizer: adam, lr: 0.1}\n"));
  expect_rejected(outside, "search.points_to_evaluate[0].lr", "lr: 0.1", "the branch parameters.lr[1] holds");
  // Which branch holds is the point's to say.
  const std::string undecided = with_parameters(parameters, search_with("    - {lr: 0.1}\n"));
  expect_rejected(undecided, "search.points_to_evaluate[0].lr", "lr: 0.1",
                  "which branch of lr holds depends on optimizer, which this point leaves to be drawn: set it");
}

}  // namespace
}  // namespace hfta::core
