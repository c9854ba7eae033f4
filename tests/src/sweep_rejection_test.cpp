// One test per rejection rule: every invalid sweep is refused with a message
// that names the YAML path, the line, and what was expected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <tuple>

#include "../support/expect_rejected.h"
#include "../support/sweep_text.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/tuner.h"

namespace hfta::core {
namespace {

using test::expect_rejected;
using test::sweep_yaml;

TEST(SweepRejection, UnknownTopLevelKeySuggestsTheRightOne) {
  const auto yaml = sweep_yaml({{"extra", "serach:\n  method: random\n"}});
  expect_rejected(yaml, "serach", "serach:", "did you mean 'search'?");
}

TEST(SweepRejection, UnknownNestedKeySuggestsTheRightOne) {
  const auto yaml = sweep_yaml({{"fusion", "fusion:\n  max_arry: 8\n"}});
  expect_rejected(yaml, "fusion.max_arry", "max_arry", "did you mean 'max_array'?");
}

TEST(SweepRejection, UnknownDistributionFieldIsNamed) {
  const auto yaml = sweep_yaml(
      {{"parameters", "parameters:\n  lr:\n    distribution: uniform\n    min: 0.1\n    max: 0.2\n"
                      "    maximum: 3\n"}});
  expect_rejected(yaml, "parameters.lr.maximum", "maximum", "unknown key 'maximum'");
}

TEST(SweepRejection, APlainValueWhereAParameterGoesSaysHowToFixIt) {
  // As W&B and Hydra sweeps fix a value; here a distribution's mapping says it.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  optimizer: adam\n"}}), "parameters.optimizer", "adam",
                  "a fixed value is written optimizer: {value: adam}");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  dropout: \"0.5: x\"\n"}}), "parameters.dropout", "0.5",
                  "a fixed value is written dropout: {value: \"0.5: x\"}");
}

TEST(SweepRejection, AMisspeltDistributionValuesOrValueKeyIsNamed) {
  // Without its kind, the parameter's other keys cannot be checked: the typo is what to say.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribuiton: log_uniform\n    min: 0.1\n"
                                             "    max: 0.2\n"}}),
                  "parameters.lr.distribuiton", "distribuiton", "unknown key 'distribuiton' (did you mean 'distribution'?)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    vaules: [0.1, 0.2]\n"}}), "parameters.lr.vaules",
                  "vaules", "did you mean 'values'?");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    min: 0.125\n    max: 0.25\n"}}),
                  "parameters.lr.distribution", "min: 0.125", "missing 'distribution'");
}

TEST(SweepRejection, AFileLargerThanAnySweepIsRefusedUnread) {
  const std::string path = ::testing::TempDir() + "/huge-sweep.yaml";
  {
    std::ofstream out(path);
    out << sweep_yaml({});
    const std::string comment = "#" + std::string(1023, 'x') + "\n";
    for (int i = 0; i < 17 * 1024; ++i) out << comment;
  }
  try {
    load_sweep_file(path);
    FAIL() << "accepted a 17 MiB file";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 16 MiB"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(SweepRejection, ListsOfManyValuesAreCheckedForRepeatsByKey) {
  // 20,000 values (each compared with every other took seconds); 2 and 2.0 are one value.
  std::string values;
  for (int i = 0; i < 20000; ++i) values += std::to_string(i) + ", ";
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [" + values + "2.0, -0.0]\n"}});
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted repeated values";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.lr.values[20000]: the value 2 is listed twice (as values[2])"),
              std::string::npos)
        << std::string(e.what()).substr(0, 2000);
    EXPECT_NE(std::string(e.what()).find("parameters.lr.values[20001]: the value -0 is listed twice (as values[0])"),
              std::string::npos);
  }
}

TEST(SweepRejection, UnknownParameterSuggestsAHyperparameter) {
  const auto yaml = sweep_yaml(
      {{"parameters", "parameters:\n  lrr:\n    distribution: uniform\n    min: 0.1\n    max: 0.2\n"}});
  expect_rejected(yaml, "parameters.lrr", "lrr", "did you mean 'lr'?");
}

TEST(SweepRejection, TooManyTrialsAreRefusedBeforeAnyPlanning) {
  // A budget in samples with budget.min left at 1: Hyperband would start 66
  // million trials (the planner ran out of memory).
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  max: 60000000\n"}}), "budget.max", "max: 60000000",
                  "start 66739725 trials; at most 1000000 (raise budget.min");
  std::string grid = "parameters:\n";
  for (const char* name : {"lr", "momentum", "weight_decay", "dampening", "label_smoothing", "grad_clip", "dropout"}) {
    grid += std::string("  ") + name + ": {distribution: grid, values: [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1]}\n";
  }
  expect_rejected(sweep_yaml({{"search", "search:\n  method: grid\n"}, {"parameters", grid}}), "parameters",
                  "  lr: {distribution: grid", "come to 10000000 trials; at most 1000000");
}

TEST(SweepRejection, ABatchOfOneWhereBatchNormNormalisesOverTheBatchAlone) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: pointnet\n  batch_size: 1\n"}}), "task.batch_size",
                  "batch_size", "a batch of 1 example: pointnet's batch norm normalises each channel over the batch alone");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mobilenet_v3_small\n"},
                              {"parameters", "parameters:\n  lr: {value: 0.1}\n  batch_size: {values: [1, 32]}\n"}}),
                  "parameters.batch_size", "batch_size: {values", "a batch of 1 example: mobilenet_v3_small's");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: resnet18\n  batch_size: 1\n  options: {small_input: false}\n"}}),
                  "task.batch_size", "batch_size", "a batch of 1 example: resnet18's");
  // Where a batch norm sees more than the batch (a small input's 4x4 maps), one example trains.
  EXPECT_NO_THROW(core::load_sweep_string(sweep_yaml({{"task", "task:\n  model: resnet18\n  batch_size: 1\n"}}), "s.yaml"));
}

TEST(SweepRejection, ValidationSizeOutsideItsDatasetsRangeOrOnText) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  validation_size: 55000\n"}}), "task.validation_size",
                  "validation_size", "expected an integer in [1, 50000] (Fashion-MNIST training images held out");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: pointnet\n  validation_size: 0\n"}}), "task.validation_size",
                  "validation_size", "generated validation clouds");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: transformer_lm\n  validation_size: 100\n"}}),
                  "task.validation_size", "validation_size", "dataset text has a fixed split");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  eval_steps: 0\n"}}), "task.eval_steps", "eval_steps",
                  "training steps between evaluations");
}

TEST(SweepRejection, WavesNeedTpeAndAtMostTheTrials) {
  expect_rejected(sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  waves: 3\n"}}), "search.waves",
                  "waves:", "waves are for searcher: tpe");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  searcher: qmc\n  waves: 3\n"}}),
                  "search.waves", "waves:", "random and qmc search propose the same trials whatever the results");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  searcher: sobol\n"}}), "search.searcher",
                  "sobol", "(quasi-random sampling is searcher: qmc here (a scrambled Halton sequence))");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: asha\n  trials: 9\n  searcher: tpe\n  waves: 10\n"}}),
                  "search.waves", "waves:", "at most search.trials (9) waves, got 10");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  searcher: tpe\n  waves: 0\n"}}),
                  "search.waves", "waves:", "expected an integer in [1, 1000]");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: hyperband\n  searcher: tpe\n  waves: 2\n"}}),
                  "search.waves", "waves:", "not used by method hyperband");
}

TEST(SweepRejection, CmaEsNeedsOneBracketOneObjectiveAndANumericRange) {
  auto search = [](const std::string& keys) { return sweep_yaml({{"search", "search:\n" + keys}}); };
  expect_rejected(search("  method: hyperband\n  searcher: cmaes\n"), "search.searcher", "cmaes",
                  "Hyperband's brackets start their trials at different budgets: write method sha, asha (one bracket) or random");
  expect_rejected(search("  method: pbt\n  population: 8\n  searcher: cmaes\n"), "search.searcher", "cmaes",
                  "draws its population with searcher random or qmc");
  expect_rejected(search("  method: asha\n  trials: 9\n  population: 4\n"), "search.population", "population",
                  "the size of CMA-ES's generations (searcher: cmaes)");
  expect_rejected(search("  method: asha\n  trials: 9\n  searcher: cmaes\n  population: 3\n"), "search.population",
                  "population", "expected an integer in [4, 1000000]");
  expect_rejected(search("  method: sha\n  trials: 9\n  searcher: cmaes\n  waves: 3\n"), "search.waves", "waves:",
                  "CMA-ES starts each generation (search.population trials) as a wave of its own");
  expect_rejected(search("  method: sha\n  trials: 9\n  searcher: cma-es\n"), "search.searcher", "cma-es",
                  "CMA-ES is searcher: cmaes here");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: random\n  trials: 9\n  searcher: cmaes\n"},
                              {"metric", "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: minimize}\n"}}),
                  "search.searcher", "cmaes", "CMA-ES ranks a generation by one value");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: random\n  trials: 9\n  searcher: cmaes\n"},
                              {"parameters", "parameters:\n  lr: {values: [0.1, 0.01]}\n"}}),
                  "search.searcher", "cmaes", "CMA-ES searches numeric ranges");
  // Accepted: the population defaults to Hansen's, 4 + floor(3 ln 1) for the one parameter.
  const auto sweep = core::load_sweep_string(search("  method: random\n  trials: 9\n  searcher: cmaes\n"), "sweep.yaml");
  EXPECT_EQ(sweep.search.population, 4);
}

TEST(SweepRejection, MultivariateIsTpes) {
  auto search = [](const std::string& keys) { return sweep_yaml({{"search", "search:\n" + keys}}); };
  expect_rejected(search("  method: sha\n  trials: 9\n  searcher: gp\n  multivariate: true\n"), "search.multivariate",
                  "multivariate", "multivariate is an option of searcher: tpe (Optuna's multivariate TPE), not of searcher gp: set searcher: tpe, or leave it out");
  expect_rejected(search("  method: sha\n  trials: 9\n  multivariate: true\n"), "search.multivariate", "multivariate",
                  "not of searcher random");
  // (false is every other searcher's way anyway.)
  EXPECT_FALSE(core::load_sweep_string(search("  method: sha\n  trials: 9\n  searcher: gp\n  multivariate: false\n"),
                                       "sweep.yaml")
                   .search.multivariate);
  expect_rejected(search("  method: sha\n  trials: 9\n  searcher: tpe\n  multivariate: yes please\n"),
                  "search.multivariate", "multivariate", "true or false");
  expect_rejected(search("  method: pbt\n  population: 4\n  multivariate: true\n"), "search.multivariate",
                  "multivariate", "not used by method pbt");
  EXPECT_TRUE(core::load_sweep_string(search("  method: asha\n  trials: 9\n  searcher: tpe\n  multivariate: true\n"),
                                      "sweep.yaml")
                  .search.multivariate);
}

TEST(SweepRejection, GaussianProcessNeedsOneObjectiveAndNoPbt) {
  expect_rejected(sweep_yaml({{"search", "search:\n  method: pbt\n  population: 8\n  searcher: gp\n"}}),
                  "search.searcher", "gp", "draws its population with searcher random or qmc");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: random\n  trials: 9\n  searcher: gp\n"},
                              {"metric", "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: minimize}\n"}}),
                  "search.searcher", "gp", "the Gaussian process models one value");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  searcher: bayesopt\n"}}),
                  "search.searcher", "bayesopt", "Bayesian optimisation with a Gaussian process is searcher: gp here");
  // Waves as TPE's.
  const auto sweep = core::load_sweep_string(
      sweep_yaml({{"search", "search:\n  method: asha\n  trials: 9\n  searcher: gp\n  waves: 3\n"}}), "sweep.yaml");
  EXPECT_EQ(sweep.search.waves, 3);
}

TEST(SweepRejection, PointsToEvaluateHoldOnlyValuesTheirParametersCouldTake) {
  const std::string params =
      "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"
      "  optimizer: {values: [sgd, adam], fuse: false}\n"
      "  momentum: {distribution: uniform, min: 0, max: 0.9, when: {optimizer: sgd}}\n"
      "  width: {distribution: int_uniform, min: 16, max: 64, fuse: false}\n";
  auto with_points = [&](const std::string& search, const std::string& points) {
    return sweep_yaml({{"search", search + "  points_to_evaluate:\n" + points}, {"parameters", params}});
  };
  const std::string sha = "search:\n  method: sha\n  trials: 3\n";
  expect_rejected(with_points(sha, "    - {lr: 0.5}\n"), "search.points_to_evaluate[0].lr", "lr: 0.5",
                  "expected a value in [0.001, 0.1], got 0.5");
  expect_rejected(with_points(sha, "    - {lr: 0.01}\n    - {optimizer: sdg}\n"),
                  "search.points_to_evaluate[1].optimizer", "optimizer: sdg",
                  "expected one of {'sgd', 'adam'}, got the string 'sdg' (did you mean 'sgd'?)");
  expect_rejected(with_points(sha, "    - {width: 24.5}\n"), "search.points_to_evaluate[0].width", "width: 24.5",
                  "expected an integer, got 24.5");
  expect_rejected(with_points(sha, "    - {width: 24.0}\n"), "search.points_to_evaluate[0].width", "width: 24.0",
                  "expected an integer, got number 24.0 (written with a decimal point or an exponent: write 24)");
  expect_rejected(with_points(sha, "    - {lr: fast}\n"), "search.points_to_evaluate[0].lr", "lr: fast",
                  "expected a number, got the string 'fast'");
  expect_rejected(with_points(sha, "    - {lrr: 0.01}\n"), "search.points_to_evaluate[0].lrr", "lrr",
                  "'lrr' is not a parameter of this sweep (did you mean 'lr'?)");
  // A conditional parameter needs the values that make it exist in the point.
  expect_rejected(with_points(sha, "    - {momentum: 0.5}\n"), "search.points_to_evaluate[0].momentum", "momentum: 0.5",
                  "momentum exists only when optimizer is sgd: set optimizer in this point too");
  expect_rejected(with_points(sha, "    - {optimizer: adam, momentum: 0.5}\n"), "search.points_to_evaluate[0].momentum",
                  "momentum: 0.5", "in this point optimizer is adam");
  expect_rejected(with_points(sha, "    - {lr: '0.01'}\n"), "search.points_to_evaluate[0].lr", "lr: '0.01'",
                  "got the string '0.01' (quoted, so a string: write it without quotes)");
  expect_rejected(with_points(sha, "    - {width: 32}\n    - {lr: 0.01, width: 20, lr: 0.02}\n"),
                  "search.points_to_evaluate[1].lr", "lr: 0.02", "duplicate key 'lr'");
  // A constant counts where its own condition holds, and only there.
  expect_rejected(sweep_yaml({{"search", sha + "  points_to_evaluate: [{optimizer: adam, step_size: 3}]\n"},
                              {"parameters", params + "  schedule: {value: step, when: {optimizer: sgd}}\n"
                                                      "  step_size: {distribution: int_uniform, min: 1, max: 5, when: {schedule: step}}\n"}}),
                  "search.points_to_evaluate[0].step_size", "points_to_evaluate: [{optimizer: adam",
                  "step_size exists only when schedule is step, and schedule does not exist in this point (schedule "
                  "exists only when optimizer is sgd, and in this point optimizer is adam)");
  expect_rejected(with_points(sha, "    - [lr, 0.01]\n"), "search.points_to_evaluate[0]", "[lr, 0.01]",
                  "expected a mapping from parameter names to values");
  expect_rejected(sweep_yaml({{"search", sha + "  points_to_evaluate: {lr: 0.01}\n"}, {"parameters", params}}),
                  "search.points_to_evaluate", "points_to_evaluate", "expected a list of points");
  // Each point is a trial: no more of them than the sweep starts.
  expect_rejected(with_points(sha, "    - {lr: 0.01}\n    - {lr: 0.02}\n    - {lr: 0.03}\n    - {lr: 0.04}\n"),
                  "search.points_to_evaluate[3]", "lr: 0.04", "4 points, but the sweep starts 3 trials (search.trials)");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  min: 1\n  max: 3\n"},
                              {"search", "search:\n  method: hyperband\n  eta: 3\n  points_to_evaluate:\n" +
                                             std::string(6, ' ') + "[{lr: 0.01}, {lr: 0.01}, {lr: 0.01}, {lr: 0.01}, {lr: 0.01}, {lr: 0.01}]\n"},
                              {"parameters", params}}),
                  "search.points_to_evaluate[5]", "[{lr: 0.01}", "starts 5 trials (Hyperband's brackets)");
  // Grid search's trials are its grid's points.
  expect_rejected(sweep_yaml({{"search", "search:\n  method: grid\n  points_to_evaluate: [{lr: 0.01}]\n"},
                              {"parameters", "parameters:\n  lr: {values: [0.01, 0.1]}\n"}}),
                  "search.points_to_evaluate", "points_to_evaluate", "not used by method grid");
}

TEST(SweepRejection, NesterovWithoutMomentumOrWithDampening) {
  // As PyTorch's SGD refuses it; continuous momentum ranges, or nesterov
  // sampled only with momentum above 0, are taken.
  const std::string lr = "parameters:\n  lr: {value: 0.1}\n";
  expect_rejected(sweep_yaml({{"parameters", lr + "  nesterov: {value: true}\n"}}), "parameters.nesterov", "nesterov:",
                  "momentum is 0 in every trial (its default)");
  expect_rejected(sweep_yaml({{"parameters", lr + "  nesterov: {values: [true, false]}\n  momentum: {values: [0, 0.9]}\n"}}),
                  "parameters.nesterov", "nesterov:", "momentum may be 0");
  expect_rejected(sweep_yaml({{"parameters", lr + "  nesterov: {value: true}\n  momentum: {value: 0.9}\n"
                                                   "  dampening: {distribution: uniform, min: 0, max: 0.5}\n"}}),
                  "parameters.nesterov", "nesterov:", "dampening may be other than 0");
  // Momentum absent from nesterov's sgd trials (its default, 0, there), and a
  // quantized momentum whose grid holds 0.
  expect_rejected(sweep_yaml({{"parameters", lr + "  optimizer: {values: [sgd, rmsprop], fuse: false}\n"
                                                   "  momentum: {values: [0.9], when: {optimizer: [rmsprop]}}\n"
                                                   "  nesterov: {value: true, when: {optimizer: [sgd]}}\n"}}),
                  "parameters.nesterov", "nesterov:", "momentum may be 0");
  expect_rejected(sweep_yaml({{"parameters", lr + "  nesterov: {value: true}\n"
                                                   "  momentum: {distribution: quantized, min: 0, max: 0.9, q: 0.3}\n"}}),
                  "parameters.nesterov", "nesterov:", "momentum may be 0");
  for (const std::string ok : {"  nesterov: {value: true}\n  momentum: {distribution: uniform, min: 0, max: 0.9}\n",
                               "  nesterov: {values: [true, false], when: {momentum: [0.9]}}\n  momentum: {values: [0, 0.9]}\n",
                               "  nesterov: {value: false}\n",
                               // Dampening only where nesterov is false, as the refusal advises.
                               "  momentum: {values: [0.9]}\n  nesterov: {values: [true, false]}\n"
                               "  dampening: {values: [0.1], when: {nesterov: [false]}}\n",
                               "  optimizer: {values: [sgd, adam], fuse: false}\n  momentum: {value: 0.9, when: {optimizer: [sgd]}}\n"
                               "  nesterov: {values: [true, false], when: {optimizer: [sgd]}}\n",
                               // Nesterov's own condition on a momentum that is itself conditional.
                               "  optimizer: {values: [sgd, adam], fuse: false}\n"
                               "  momentum: {values: [0.5, 0.9], when: {optimizer: [sgd]}}\n"
                               "  nesterov: {values: [true, false], when: {momentum: [0.9]}}\n"}) {
    EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"parameters", lr + ok}}), "sweep.yaml")) << ok;
  }
}

TEST(SweepRejection, AFractionOfABudgetUnitSaysWhichFinerUnitCountsIt) {
  expect_rejected(sweep_yaml({{"budget", "budget:\n  min: 0.5\n  max: 9\n"}}), "budget.min", "min: 0.5",
                  "expected a whole number of epochs, got 0.5; a part of an epoch is a whole number of steps or samples "
                  "(budget.unit: steps)");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: steps\n  min: 10\n  max: 90.5\n"}}), "budget.max",
                  "max: 90.5", "expected a whole number of steps, got 90.5; a part of a step is a whole number of samples");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 64\n  max: 1e3\n"}}), "budget.max",
                  "max: 1e3", "expected an integer");  // (a whole number written as a float: read_int's own words)
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 64.5\n  max: 1000\n"}}), "budget.min",
                  "min: 64.5", "expected a whole number of samples, got 64.5");
}

TEST(SweepRejection, RungsInSamplesThatWouldTrainTheSameSteps) {
  // Batch 32: rungs of 5.33, 16 and 48 samples all train one step.
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 5\n  max: 48\n"}}), "budget.min",
                  "min: 5", "the rungs to 5.33333 samples and 16 samples would both train 1 step of batch_size 32");
  // budget.min left at 1: named at budget.max.
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  max: 81\n"}}), "budget.max", "max: 81",
                  "give budget.min at least one batch (32 samples)");
  // The largest batch a trial may take decides, for every rung method.
  for (const std::string method : {"sha\n  trials: 9", "asha\n  trials: 9", "hyperband"}) {
    expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 48\n  max: 432\n"},
                                {"search", "search:\n  method: " + method + "\n  eta: 3\n"},
                                {"parameters", "parameters:\n  lr: {value: 0.1}\n"
                                               "  batch_size: {values: [16, 128], fuse: false}\n"}}),
                    "budget.min", "min: 48", "of batch_size 128 (a step");
  }
  // Rungs under a batch that each train a step more, a single rung, or steps as the unit, are taken.
  for (const std::string& budget : {"budget:\n  unit: samples\n  min: 16\n  max: 144\n",
                                    "budget:\n  unit: steps\n  min: 1\n  max: 9\n"}) {
    EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"budget", budget}}), "sweep.yaml")) << budget;
  }
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"budget", "budget:\n  unit: samples\n  max: 5\n"},
                                                {"search", "search:\n  method: random\n  trials: 2\n"}}),
                                    "sweep.yaml"));
  // A batch_size its `when` may leave out: the task's batch (256) decides.
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 100\n  max: 900\n"},
                              {"task", "task:\n  model: mlp\n  batch_size: 256\n"},
                              {"parameters", "parameters:\n  optimizer: {values: [sgd, adam], fuse: false}\n"
                                             "  batch_size: {values: [16, 32], fuse: false, when: {optimizer: [sgd]}}\n"}}),
                  "budget.min", "min: 100", "of batch_size 256");
  // A quantized batch_size takes 32, 64 and 96, never its max of 100.
  EXPECT_NO_THROW(load_sweep_string(
      sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 48\n  max: 144\n"},
                  {"parameters", "parameters:\n  batch_size: {distribution: quantized, min: 32, max: 100, q: 32, "
                                 "fuse: false}\n"}}),
      "sweep.yaml"));
  // Median stopping's steps (budget.min apart, then the rest of budget.max).
  const std::string median = "search:\n  method: random\n  trials: 4\n  stopping: median\n";
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 16\n  max: 160\n"}, {"search", median}}),
                  "budget.min", "min: 16", "median stopping's steps to 16 samples and 32 samples would both train 1 step");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 1000\n  max: 2010\n"},
                              {"search", median}, {"task", "task:\n  model: mlp\n  batch_size: 64\n"}}),
                  "budget.max", "max: 2010", "make budget.max a multiple of budget.min");
  EXPECT_NO_THROW(load_sweep_string(
      sweep_yaml({{"budget", "budget:\n  unit: samples\n  min: 1000\n  max: 2000\n"}, {"search", median}}),
      "sweep.yaml"));
}

TEST(SweepRejection, OptionsThatShapeTheDatasetAreNotParameters) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: pointnet\n"},
                              {"parameters", "parameters:\n  lr: {value: 0.1}\n  points: {values: [64, 128], fuse: false}\n"}}),
                  "parameters.points", "  points: {", "it shapes the dataset every trial of the sweep shares");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: bert\n  options: {size: tiny}\n"},
                              {"metric", "metric:\n  name: val_loss\n  goal: minimize\n"},
                              {"parameters", "parameters:\n  lr: {value: 0.1}\n  mask_prob: {values: [0.1, 0.2]}\n"}}),
                  "parameters.mask_prob", "  mask_prob: {", "set it under task.options");
  // A sweep built in code skips the loader: the tuner refuses it too.
  SweepConfig sweep = load_sweep_string(sweep_yaml({{"task", "task:\n  model: pointnet\n"}}), "sweep.yaml");
  EXPECT_TRUE(not_trainable_yet(sweep).empty());
  search::ParameterSpec points;
  points.name = "points";
  points.values = {search::ParamValue(std::int64_t{64})};
  sweep.parameters.push_back(points);
  const auto refused = not_trainable_yet(sweep);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused.front().find("parameters.points: it shapes the dataset"), std::string::npos) << refused.front();
}

TEST(SweepRejection, MedianStoppingOverTenThousandSteps) {
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: steps\n  max: 100000000000\n"},
                              {"search", "search:\n  method: random\n  trials: 2\n  stopping: median\n"}}),
                  "budget.max", "max: 100000000000", "median stopping would compare the trials 100000000000 times");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: steps\n  max: 100000000000\n"},
                              {"search", "search:\n  method: random\n  trials: 2\n  stopping: percentile\n"
                                         "  percentile: 10\n"}}),
                  "budget.max", "max: 100000000000", "percentile stopping would compare the trials");
}

// The stopping rule's keys: only with a rule, each in its range, and none
// that would leave the rule nothing to stop.
TEST(SweepRejection, StoppingRuleSettings) {
  auto random = [](const std::string& rest) {
    return sweep_yaml({{"budget", "budget:\n  unit: epochs\n  min: 2\n  max: 9\n"},
                       {"search", "search:\n  method: random\n  trials: 10\n" + rest}});
  };
  expect_rejected(random("  grace_period: 4\n"), "search.grace_period", "grace_period",
                  "'grace_period' is the stopping rule's; it needs stopping: median or percentile");
  expect_rejected(random("  stopping: none\n  min_samples: 4\n"), "search.min_samples", "min_samples",
                  "'min_samples' is the stopping rule's");
  expect_rejected(random("  stopping: median\n  percentile: 25\n"), "search.percentile", "percentile",
                  "stopping: median compares with the median (percentile 50); for another share write stopping: "
                  "percentile");
  expect_rejected(random("  stopping: percentile\n"), "search.percentile", "method: random",
                  "missing required key 'percentile'");
  for (const char* bad : {"0", "100.5", "-3"}) {
    SCOPED_TRACE(bad);
    expect_rejected(random(std::string("  stopping: percentile\n  percentile: ") + bad + "\n"), "search.percentile",
                    "percentile: ", "expected a percentage in (0, 100]");
  }
  expect_rejected(random("  stopping: median\n  grace_period: 9\n"), "search.grace_period", "grace_period",
                  "expected a grace_period below budget.max (9), got 9: the rule stops trials before budget.max, so "
                  "none would stop");
  expect_rejected(random("  stopping: median\n  grace_period: 100\n"), "search.grace_period", "grace_period",
                  "expected a grace_period below budget.max (9), got 100");
  // Steps of 3 to 8 epochs compare at 3, 6 and 8: a grace past 6 leaves only 8.
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: epochs\n  min: 3\n  max: 8\n"},
                              {"search", "search:\n  method: random\n  trials: 10\n  stopping: median\n"
                                         "  grace_period: 7\n"}}),
                  "search.grace_period", "grace_period",
                  "the first of these at or past grace_period 7 is budget.max, where stopping saves nothing: "
                  "expected a grace_period of at most 6");
  // A bad stopping value is the one error: nothing is said of the rule's keys.
  try {
    load_sweep_string(random("  stopping: medain\n  grace_period: 4\n"), "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].path, "search.stopping");
  }
  expect_rejected(random("  stopping: median\n  grace_period: 0\n"), "search.grace_period", "grace_period",
                  "expected an integer in [1, ");
  expect_rejected(random("  stopping: percentile\n  percentile: 30\n  min_samples: 0\n"), "search.min_samples",
                  "min_samples", "expected an integer in [1, 1000000]");
}

TEST(SweepRejection, MetricTargetsTheMetricCannotReach) {
  auto target = [](const std::string& name, const std::string& goal, const std::string& value) {
    return sweep_yaml({{"metric", "metric:\n  name: " + name + "\n  goal: " + goal + "\n  target: " + value + "\n"}});
  };
  expect_rejected(target("val_accuracy", "maximize", "90"), "metric.target", "target:",
                  "expected a value val_accuracy can reach, got '90': val_accuracy lies in [0, 1] (a target of 90% is 0.9)");
  expect_rejected(target("val_loss", "minimize", "-0.1"), "metric.target", "target:",
                  "val_loss lies in [0, infinity)");
  expect_rejected(target("val_accuracy", "maximize", "high"), "metric.target", "target:", "expected a finite number");
  // A language model's perplexity is at least 1.
  expect_rejected(sweep_yaml({{"task", "task:\n  model: transformer_lm\n  batch_size: 8\n"},
                              {"metric", "metric:\n  name: val_perplexity\n  goal: minimize\n  target: 0.5\n"}}),
                  "metric.target", "target:", "val_perplexity lies in [1, infinity)");
}

TEST(SweepRejection, UnknownModelOptionSuggestsTheRightOne) {
  const auto yaml = sweep_yaml({{"task", "task:\n  model: mlp\n  options:\n    widht: 64\n"}});
  expect_rejected(yaml, "task.options.widht", "widht", "did you mean 'width'?");
}

TEST(SweepRejection, UnknownEnumValueSuggestsTheRightOne) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: hyperbnd\n"}});
  expect_rejected(yaml, "search.method", "hyperbnd", "did you mean 'hyperband'?");
}

TEST(SweepRejection, DuplicateKey) {
  const auto yaml = sweep_yaml({{"seed", "seed: 1\nseed: 2\n"}});
  expect_rejected(yaml, "seed", "seed: 2", "duplicate key");
}

TEST(SweepRejection, WrongTypeForInteger) {
  const auto yaml = sweep_yaml({{"seed", "seed: abc\n"}});
  expect_rejected(yaml, "seed", "seed:", "expected an integer");
}

TEST(SweepRejection, WrongTypeForNumber) {
  const auto yaml = sweep_yaml(
      {{"parameters", "parameters:\n  lr:\n    distribution: uniform\n    min: small\n    max: 0.2\n"}});
  expect_rejected(yaml, "parameters.lr.min", "min: small", "expected a finite number");
  // A quoted number is a string, and the message says why it was refused.
  const auto quoted = sweep_yaml(
      {{"parameters", "parameters:\n  lr:\n    distribution: uniform\n    min: '0.001'\n    max: 0.2\n"}});
  expect_rejected(quoted, "parameters.lr.min", "min: '0.001'", "got '0.001' (quoted, so a string");
  expect_rejected(sweep_yaml({{"seed", "seed: \"3\"\n"}}), "seed", "seed:", "(quoted, so a string");
  // In a parameter's values too, where the value is checked against the option.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [\"0.01\"]\n"}}), "parameters.lr.values[0]",
                  "values:", "got string 0.01 (quoted, so a string: write it without quotes)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  nesterov:\n    value: 'true'\n"}}), "parameters.nesterov.value",
                  "value:", "(quoted, so a string: write it without quotes)");
}

TEST(SweepRejection, WrongTypeMappingWhereScalar) {
  const auto yaml = sweep_yaml({{"name", "name:\n  first: x\n"}});
  expect_rejected(yaml, "name", "first", "expected a string, got a mapping");
}

TEST(SweepRejection, WrongTypeScalarWhereMapping) {
  const auto yaml = sweep_yaml({{"budget", "budget: 9\n"}});
  expect_rejected(yaml, "budget", "budget:", "expected a mapping");
}

TEST(SweepRejection, WrongTypeForBoolean) {
  const auto yaml = sweep_yaml(
      {{"parameters", "parameters:\n  lr:\n    distribution: uniform\n    min: 0.1\n    max: 0.2\n"
                      "    fuse: maybe\n"}});
  expect_rejected(yaml, "parameters.lr.fuse", "maybe", "expected true or false");
}

TEST(SweepRejection, IntegerDistributionWithRealBounds) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  warmup:\n    distribution: int_uniform\n"
                                 "    min: 0.5\n    max: 10\n"}});
  expect_rejected(yaml, "parameters.warmup.min", "min: 0.5", "expected an integer");
}

TEST(SweepRejection, RealDistributionForIntegerOption) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  warmup:\n    distribution: uniform\n"
                                 "    min: 0\n    max: 10\n"}});
  expect_rejected(yaml, "parameters.warmup", "warmup:", "is an integer");
}

TEST(SweepRejection, ChoiceValueOfWrongType) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    distribution: choice\n"
                                 "    values: [0.1, fast]\n"}});
  expect_rejected(yaml, "parameters.lr.values[1]", "values:", "expected number");
}

TEST(SweepRejection, NonFiniteValuesAreNamedAsNumbersNotStrings) {
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  momentum:\n    values: [0.5, .NaN]\n"}}),
                  "parameters.momentum.values[1]", "values:", "expected a finite value, got .NaN (not a number)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [-.inf, 0.1]\n"}}),
                  "parameters.lr.values[0]", "values:", "expected a finite value, got -.inf (infinity)");
}

TEST(SweepRejection, ChoiceValueOutsideTheOptionsRange) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  momentum:\n    values: [0.9, 1.5]\n"}});
  expect_rejected(yaml, "parameters.momentum.values[1]", "values:", "in [0, 1)");
}

TEST(SweepRejection, MilestonesThatAreNotIncreasingFractions) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr: {value: 0.1}\n  milestones:\n    values: [\"0.3,0.6\", \"0.8,0.5\"]\n"}});
  expect_rejected(yaml, "parameters.milestones.values[1]", "values:", "increasing list of fractions in (0, 1)");
}

// Milestones written as lists (PyTorch's MultiStepLR takes a list): each list is one value.
TEST(SweepRejection, MilestoneListsThatAreNotIncreasingFractions) {
  auto milestones = [](const std::string& field) {
    return sweep_yaml({{"parameters", "parameters:\n  schedule: {value: multistep}\n  milestones:\n    " + field + "\n"}});
  };
  expect_rejected(milestones("values: [[0.3, 0.6], [0.8, 0.5]]"), "parameters.milestones.values[1]", "values:",
                  "increasing list of fractions in (0, 1), as [0.5, 0.75] or \"0.5,0.75\" for 'milestones' "
                  "(multistep schedule: where, as fractions of the full budget, the learning rate is multiplied by "
                  "gamma), got [0.8,0.5]");
  expect_rejected(milestones("value: [0.5, 1.5]"), "parameters.milestones.value", "value: [0.5, 1.5]", "got [0.5,1.5]");
  // A condition lists values: a list of numbers is two values, not one list.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  schedule: {value: multistep}\n"
                                             "  milestones: {values: [[0.3, 0.6], [0.5, 0.75]]}\n"
                                             "  gamma: {values: [0.1, 0.5], when: {milestones: [0.3, 0.6]}}\n"}}),
                  "parameters.gamma.when.milestones", "when:",
                  "'milestones' never takes the value 0.3 (a list of milestones is one value: write when: {milestones: "
                  "[[0.3, 0.6]]}, a list of such lists for several); it takes");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  milestones: {distribution: uniform, min: 0.1, max: 0.9}\n"}}),
                  "parameters.milestones", "milestones:",
                  "uniform samples numbers, but training hyperparameter 'milestones' is a list of fractions: use choice or grid");
  expect_rejected(milestones("value: [0.5, late]"), "parameters.milestones.value[1]", "value: [0.5, late]", "expected a finite number, got");
  expect_rejected(milestones("value: []"), "parameters.milestones.value", "value: []",
                  "expected at least one number in the list, got an empty list");
  // Two numbers listed are two values, neither a list.
  expect_rejected(milestones("values: [0.5, 0.75]"), "parameters.milestones.values[0]", "values:",
                  "got number 0.5 (a list is one value: value: [0.5, 0.75], or values: [[0.3, 0.6], [0.5, 0.75]] to "
                  "tune it)");
}

TEST(SweepRejection, RangeOutsideTheOptionsRange) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  momentum:\n    distribution: uniform\n"
                                 "    min: 0.5\n    max: 1.2\n"}});
  expect_rejected(yaml, "parameters.momentum", "momentum:", "leaves the valid values");
}

TEST(SweepRejection, MinGreaterThanMaxInParameter) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    distribution: uniform\n"
                                 "    min: 0.5\n    max: 0.1\n"}});
  expect_rejected(yaml, "parameters.lr.min", "min: 0.5", "greater than max");
}

TEST(SweepRejection, MinGreaterThanMaxInBudget) {
  const auto yaml = sweep_yaml({{"budget", "budget:\n  min: 10\n  max: 3\n"}});
  expect_rejected(yaml, "budget.min", "min: 10", "greater than max");
}

TEST(SweepRejection, LogUniformWithZeroMin) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    distribution: log_uniform\n"
                                 "    min: 0\n    max: 0.1\n"}});
  expect_rejected(yaml, "parameters.lr.min", "min: 0", "min must be > 0");
}

TEST(SweepRejection, LogUniformWithNegativeMin) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  weight_decay:\n    distribution: log_uniform\n"
                                 "    min: -1\n    max: 0.1\n"}});
  expect_rejected(yaml, "parameters.weight_decay.min", "min: -1", "min must be > 0");
}

TEST(SweepRejection, IntLogUniformWithZeroMin) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  warmup:\n    distribution: int_log_uniform\n"
                                 "    min: 0\n    max: 10\n"}});
  expect_rejected(yaml, "parameters.warmup.min", "min: 0", "min must be > 0");
}

TEST(SweepRejection, QuantizedWithoutPositiveStep) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    distribution: quantized\n"
                                 "    min: 0.1\n    max: 0.5\n    q: 0\n"}});
  expect_rejected(yaml, "parameters.lr.q", "q: 0", "q > 0");
}

TEST(SweepRejection, QuantizedStepLargerThanTheRange) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    distribution: quantized\n"
                                 "    min: 0.1\n    max: 0.5\n    q: 1\n"}});
  expect_rejected(yaml, "parameters.lr.q", "q: 1", "only min could be drawn");
}

TEST(SweepRejection, AnErrorInAMergedMappingNamesWhereItWasMergedAndTheLineOfTheValue) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr: &range {distribution: log_uniform, min: -1, max: 0.1}\n"
                                 "  weight_decay:\n    <<: *range\n    max: 0.01\n"}});
  expect_rejected(yaml, "parameters.weight_decay.min", "min: -1", "min must be > 0");
}

TEST(SweepRejection, AMergeKeyThatIsNotMergedSaysHowMergesAreWritten) {
  const std::string how = "a merge key '<<' that is not merged: a mapping takes one '<<', of a mapping (<<: *a) or a "
                          "list of them (<<: [*a, *b])";
  expect_rejected(sweep_yaml({{"fusion", "fusion:\n  <<: 3\n"}}), "fusion.<<", "<<", how);
  // Two in one mapping: the first is merged, the second named.
  const auto twice = sweep_yaml({{"parameters", "parameters:\n  lr: &a {distribution: log_uniform, min: 0.01, max: 0.1}\n"
                                                "  momentum: &b {value: 0.9}\n"
                                                "  weight_decay:\n    <<: *a\n    <<: *b\n"}});
  expect_rejected(twice, "parameters.weight_decay.<<", "<<: *b", how);
}

TEST(SweepRejection, AliasesNamingAliasesAreWalkedOnce) {
  // Ten levels of ten aliases each: 10^10 paths, one node each level.
  std::string bomb = "x0: &x0 [1, 2]\n";
  for (int level = 1; level <= 10; ++level) {
    const std::string prev = "*x" + std::to_string(level - 1);
    bomb += "x" + std::to_string(level) + ": &x" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", " : "") + prev;
    bomb += "]\n";
  }
  expect_rejected(sweep_yaml({{"x0", bomb}}), "x0", "x0:", "unknown key 'x0'");
}

TEST(SweepRejection, QuantizedStepThatSpansTheRangeExactlyIsAccepted) {
  // 0.3 - 0.1 is 0.19999999999999998 in floating point: still two values, 0.1 and 0.3.
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"parameters",
                                                  "parameters:\n  lr:\n    distribution: quantized\n"
                                                  "    min: 0.1\n    max: 0.3\n    q: 0.2\n"}}),
                                    "sweep.yaml"));
}

TEST(SweepRejection, EtaBelowTwo) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: hyperband\n  eta: 1\n"}});
  expect_rejected(yaml, "search.eta", "eta: 1", "at least 2");
}

TEST(SweepRejection, EmptyChoice) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    distribution: choice\n"
                                 "    values: []\n    fuse: false\n"}});
  expect_rejected(yaml, "parameters.optimizer.values", "values:", "at least one value");
}

TEST(SweepRejection, DuplicateChoiceValue) {
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [0.1, 0.1]\n"}});
  expect_rejected(yaml, "parameters.lr.values[1]", "values:", "listed twice (as values[0])");
  // A value listed thrice is two problems, each named once, against the first listing.
  try {
    load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [0.1, 0.2, 0.1, 1.0e-1]\n"}}),
                      "sweep.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("values[2]: the value 0.1 is listed twice (as values[0])"), std::string::npos) << what;
    EXPECT_NE(what.find("values[3]: the value 0.1 is listed twice (as values[0])"), std::string::npos) << what;
    EXPECT_EQ(e.diagnostics().size(), 2u) << what;
  }
}

TEST(SweepRejection, MissingMetric) {
  const auto yaml = sweep_yaml({{"metric", ""}});
  expect_rejected(yaml, "metric", "name:", "missing required key 'metric'");
}

TEST(SweepRejection, MissingSearchOrParametersBesidePointsToEvaluate) {
  // (Points to evaluate are read beside both: a missing one is reported, not thrown over.)
  expect_rejected(sweep_yaml({{"search", ""}}), "search", "name:", "missing required key 'search'");
  expect_rejected(sweep_yaml({{"parameters", ""},
                              {"search", "search:\n  method: random\n  trials: 3\n  points_to_evaluate: [{lr: 0.1}]\n"}}),
                  "parameters", "name:", "missing required key 'parameters'");
  try {  // and only there: the point's lr is not called unknown
    load_sweep_string(sweep_yaml({{"parameters", ""},
                                  {"search", "search:\n  method: random\n  trials: 3\n  points_to_evaluate: [{lr: 0.1}]\n"}}),
                      "sweep.yaml");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
  }
}

TEST(SweepRejection, MissingMetricName) {
  const auto yaml = sweep_yaml({{"metric", "metric:\n  goal: minimize\n"}});
  expect_rejected(yaml, "metric.name", "goal:", "missing required key 'name'");
}

TEST(SweepRejection, MetricTheModelDoesNotReport) {
  const auto yaml = sweep_yaml({{"metric", "metric:\n  name: val_perplexity\n  goal: minimize\n"}});
  expect_rejected(yaml, "metric.name", "val_perplexity", "is not one of val_accuracy");
}

TEST(SweepRejection, HeadsThatDoNotDivideTheModelWidth) {
  const auto yaml = sweep_yaml({{"task", "task:\n  model: transformer_lm\n  options:\n    d_model: 64\n    heads: 3\n"},
                                {"metric", "metric:\n  name: val_perplexity\n  goal: minimize\n"}});
  expect_rejected(yaml, "task.options.heads", "heads: 3", "3 heads do not divide d_model 64 evenly");
  // As parameters, every pair a trial may take (conditions on each other followed).
  auto lm = [](const std::string& params) {
    return sweep_yaml({{"task", "task:\n  model: transformer_lm\n  options:\n    d_model: 64\n    heads: 4\n"},
                       {"metric", "metric:\n  name: val_perplexity\n  goal: minimize\n"},
                       {"parameters", "parameters:\n  lr: {value: 0.01}\n" + params}});
  };
  expect_rejected(lm("  heads: {values: [3, 4], fuse: false}\n"), "parameters.heads", "  heads: {",
                  "3 heads do not divide d_model 64 evenly, and a trial may take both");
  expect_rejected(lm("  d_model: {distribution: int_uniform, min: 60, max: 64, fuse: false}\n"), "parameters.d_model",
                  "  d_model: {", "4 heads do not divide d_model 61 evenly");
  expect_rejected(lm("  d_model: {values: [48, 64], fuse: false}\n  heads: {values: [32], fuse: false}\n"),
                  "parameters.heads", "  heads: {", "32 heads do not divide d_model 48");
  // heads 3 left out where the task's 4 would not divide: once without d_model's 96, once with a third condition.
  expect_rejected(lm("  d_model: {values: [64, 96], fuse: false}\n  heads: {values: [3], fuse: false}\n"),
                  "parameters.heads", "  heads: {", "3 heads do not divide d_model 64");
  expect_rejected(lm("  optimizer: {values: [sgd, adam], fuse: false}\n"
                     "  d_model: {values: [96], fuse: false, when: {optimizer: [sgd]}}\n"
                     "  heads: {values: [3], fuse: false, when: {optimizer: [adam]}}\n"),
                  "parameters.heads", "  heads: {", "3 heads do not divide d_model 64");
  for (const std::string ok : {"  heads: {values: [1, 2, 4, 8], fuse: false}\n",
                               "  d_model: {distribution: quantized, min: 32, max: 128, q: 16, fuse: false}\n",
                               "  d_model: {values: [64, 96], fuse: false}\n"
                               "  heads: {values: [3], fuse: false, when: {d_model: [96]}}\n",
                               "  heads: {values: [2, 8], fuse: false}\n"
                               "  d_model: {values: [48], fuse: false, when: {heads: [2]}}\n",
                               // Both on one third parameter: sgd trials take (96, 3), adam ones the task's (64, 4).
                               "  optimizer: {values: [sgd, adam], fuse: false}\n"
                               "  d_model: {values: [96], fuse: false, when: {optimizer: [sgd]}}\n"
                               "  heads: {values: [3], fuse: false, when: {optimizer: [sgd]}}\n"}) {
    EXPECT_NO_THROW(load_sweep_string(lm(ok), "sweep.yaml")) << ok;
  }
}

TEST(SweepRejection, MissingMetricGoal) {
  const auto yaml = sweep_yaml({{"metric", "metric:\n  name: val_loss\n"}});
  expect_rejected(yaml, "metric.goal", "name: val_loss", "missing required key 'goal'");
}

TEST(SweepRejection, DatasetTheModelCannotUse) {
  const auto yaml = sweep_yaml({{"task", "task:\n  model: mlp\n  dataset: text\n"}});
  expect_rejected(yaml, "task.dataset", "dataset: text", "does not train on text");
}

TEST(SweepRejection, KeyTheMethodDoesNotUse) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: random\n  trials: 4\n  eta: 3\n"}});
  expect_rejected(yaml, "search.eta", "eta: 3", "not used by method random");
}

TEST(SweepRejection, UnknownSearchKeyListsWhatTheMethodTakes) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: hyperband\n  etta: 3\n"}});
  expect_rejected(yaml, "search.etta", "etta", "(did you mean 'eta'?); expected method, searcher, eta, align_brackets, iterations, multivariate, points_to_evaluate or warm_start");
}

TEST(SweepRejection, BracketAlignmentOutsideHyperbandOrNotABoolean) {
  const auto sha = sweep_yaml({{"search", "search:\n  method: sha\n  trials: 9\n  align_brackets: true\n"}});
  expect_rejected(sha, "search.align_brackets", "align_brackets: true", "not used by method sha");
  const auto word = sweep_yaml({{"search", "search:\n  method: hyperband\n  align_brackets: sometimes\n"}});
  expect_rejected(word, "search.align_brackets", "align_brackets: sometimes", "true or false");
}

TEST(SweepRejection, IterationsOutsideHyperbandOrOutOfRange) {
  const auto asha = sweep_yaml({{"search", "search:\n  method: asha\n  trials: 9\n  iterations: 2\n"}});
  expect_rejected(asha, "search.iterations", "iterations: 2", "not used by method asha");
  for (const char* n : {"0", "1001", "2.0"}) {
    const auto bad = sweep_yaml({{"search", std::string("search:\n  method: hyperband\n  iterations: ") + n + "\n"}});
    expect_rejected(bad, "search.iterations", std::string("iterations: ") + n, n == std::string("2.0") ? "write 2" : "1000");
  }
  // Trials under Hyperband point to its passes.
  const auto trials = sweep_yaml({{"search", "search:\n  method: hyperband\n  trials: 50\n"}});
  expect_rejected(trials, "search.trials", "trials: 50", "repeat its brackets with search.iterations");
  // Every pass's trials count: 5 brackets of 17 trials (9 epochs, eta 3), 1000 times, stay
  // within a million; 9,071 a pass (6000 steps from 1, eta 2) do not.
  load_sweep_string(sweep_yaml({{"search", "search:\n  method: hyperband\n  iterations: 1000\n"}}), "sweep.yaml");
  expect_rejected(sweep_yaml({{"budget", "budget:\n  unit: steps\n  min: 1\n  max: 6000\n"},
                              {"search", "search:\n  method: hyperband\n  eta: 2\n  iterations: 1000\n"}}),
                  "search.iterations", "iterations: 1000",
                  "at eta 2, 1000 iterations, start 9071000 trials; at most 1000000 (raise budget.min, lower "
                  "budget.max, or run fewer search.iterations)");
}

TEST(SweepRejection, ChoiceProbabilitiesOnePerValueAboveZeroSummingToOne) {
  struct Case {
    std::string parameter, path, expected;
  };
  const std::string at = "parameters.momentum.probabilities";
  const std::vector<Case> cases = {
      {"{values: [0.5, 0.9], probabilities: [1.0]}", at, "expected a list of 2 numbers, one for each of values, got 1 items"},
      {"{values: [0.5, 0.9], probabilities: 0.5}", at, "expected a list of 2 numbers"},
      {"{values: [0.5, 0.9], probabilities: [0.5, 0.25]}", at, "the probabilities sum to 0.75, not 1"},
      {"{values: [0.5, 0.9], probabilities: [1, 0]}", at + "[1]", "expected a probability in (0, 1], got 0 (a value never drawn"},
      {"{values: [0.5, 0.9], probabilities: [0.5, half]}", at + "[1]", "expected a finite number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.parameter);
    expect_rejected(sweep_yaml({{"parameters", "parameters:\n  momentum: " + c.parameter + "\n"}}), c.path,
                    "momentum:", c.expected);
  }
  // A grid has no chances; nor has a choice under grid search, which trains every value.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr: {distribution: grid, values: [0.1, 0.01], "
                                             "probabilities: [0.5, 0.5]}\n"}}),
                  "parameters.lr.probabilities", "probabilities", "unknown key 'probabilities'");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: grid\n"},
                              {"parameters", "parameters:\n  lr:\n    values: [0.1, 0.01]\n"
                                             "    probabilities: [0.9, 0.1]\n"}}),
                  "parameters.lr.probabilities", "probabilities: [0.9", "probabilities play no part");
}

TEST(SweepRejection, RandomSearchWithoutTrials) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: random\n"}});
  expect_rejected(yaml, "search.trials", "method: random", "missing required key 'trials'");
}

TEST(SweepRejection, GridSearchOverAContinuousRange) {
  const auto yaml = sweep_yaml({{"search", "search:\n  method: grid\n"}});
  expect_rejected(yaml, "parameters.lr", "  lr:", "grid search takes only listed values (grid, choice or const), and 'lr' is");
}

TEST(SweepRejection, AWarmUpInStepsAndAsARatioBoth) {
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  warmup: {values: [0, 100]}\n"
                                               "  warmup_ratio: {values: [0.05, 0.1]}\n"}});
  expect_rejected(yaml, "parameters.warmup_ratio", "warmup_ratio:", "keep one of them");
  // Conditions that never hold together keep them apart; ones that may, do not.
  const std::string apart = "parameters:\n  schedule: {values: [cosine, step]}\n  step_size: {values: [10], when: {schedule: step}}\n"
                            "  warmup: {values: [0, 100], when: {schedule: cosine}}\n";
  load_sweep_string(sweep_yaml({{"parameters", apart + "  warmup_ratio: {values: [0.1], when: {schedule: step}}\n"}}));
  expect_rejected(sweep_yaml({{"parameters", apart + "  warmup_ratio: {values: [0.1], when: {schedule: [cosine, step]}}\n"}}),
                  "parameters.warmup_ratio", "warmup_ratio:", "a trial may have both");
  load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  warmup_ratio: {distribution: uniform, min: 0, max: 0.2}\n"}}));
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  warmup_ratio: {value: 1.0}\n"}}),
                  "parameters.warmup_ratio.value", "warmup_ratio:", "expected number in [0, 1)");
}

TEST(SweepRejection, FlipsAndCropsAreForImageModelsAndCropsUpToEightPixels) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: cnn\n  options: {crop: 9}\n"}}), "task.options.crop", "crop: 9",
                  "in [0, 8]");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  options: {flip: true}\n"}}), "task.options.flip",
                  "flip: true", "flip");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: cnn\n"},
                              {"parameters", "parameters:\n  crop:\n    values: [0, 2]\n    fuse: true\n"}}),
                  "parameters.crop.fuse", "fuse: true", "write 'fuse: false', or leave fuse out");
}

TEST(SweepRejection, ShapeParameterWithFuseTrue) {
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  width:\n    values: [64, 128]\n    fuse: true\n"}});
  expect_rejected(yaml, "parameters.width.fuse", "fuse: true", "write 'fuse: false', or leave fuse out");
  // Left out, it is inferred: trials of different widths never share an array.
  const auto inferred = load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  width:\n    values: [64, 128]\n"
                                                                     "  lr: {values: [0.1, 0.01]}\n"}}));
  for (const auto& p : inferred.parameters) EXPECT_EQ(p.fuse, p.name != "width") << p.name;
  // One value changes no shape between trials: it fuses.
  EXPECT_TRUE(load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  width: {values: [64]}\n"}})).parameters[0].fuse);
  // Unless a condition leaves it out of some trials, which keep the default width.
  const auto some = load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  schedule: {values: [constant, step]}\n"
                                                                 "  step_size: {values: [10], when: {schedule: step}}\n"
                                                                 "  width: {value: 64, when: {schedule: step}}\n"}}));
  EXPECT_FALSE(some.find_parameter("width")->fuse);
  EXPECT_TRUE(some.find_parameter("step_size")->fuse);
}

TEST(SweepRejection, ConditionOnUnknownParameter) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    values: [0.1]\n"
                                 "    when: {optimiser: adam}\n"}});
  expect_rejected(yaml, "parameters.lr.when.optimiser", "optimiser", "no parameter 'optimiser'");
}

// Conditions on a setting left at its default, and lr under one_cycle, say what to write.
TEST(SweepRejection, ConditionOnADefaultAndLrUnderOneCycleSayWhatToWrite) {
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  momentum:\n    values: [0.9]\n"
                                             "    when: {optimizer: sgd}\n"}}),
                  "parameters.momentum.when.optimizer", "when:",
                  "no parameter 'optimizer' (optimizer is not tuned, so it has one value in every trial: a condition "
                  "needs it among the parameters, taking the values the condition names; or drop the condition)");
  // The condition is the one problem (not also "beta1 is read only with adam").
  try {
    load_sweep_string(sweep_yaml({{"parameters", "parameters:\n  beta1:\n    values: [0.9]\n"
                                                 "    when: {optimizer: adam}\n"}}),
                      "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
  }
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [0.1]\n"
                                             "  schedule: {value: one_cycle}\n"}}),
                  "parameters.lr", "lr:", "or remove 'lr' (one_cycle's learning rate is max_lr: tune that)");
}

TEST(SweepRejection, ConditionOnValueNeverTaken) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    values: [sgd, adam]\n"
                                 "    fuse: false\n  momentum:\n    values: [0.9]\n"
                                 "    when: {optimizer: rmsprop}\n"}});
  expect_rejected(yaml, "parameters.momentum.when.optimizer", "when:", "never takes the value");
  // That value is the one problem: not also "momentum is read only with sgd ..." at the parameter.
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
  }
  // A misspelt value gets a did-you-mean; a number quoted, the quotes named.
  const std::pair<std::string, std::string> cases[] = {
      {"optimizer:\n    values: [sgd, adam]\n    fuse: false\n  momentum:\n    values: [0.9]\n"
       "    when: {optimizer: sdg}\n",
       "never takes the value sdg (did you mean 'sgd'?); it takes sgd or adam"},
      {"depth:\n    values: [1, 2]\n    fuse: false\n  momentum:\n    values: [0.9]\n    when: {depth: '2'}\n",
       "never takes the value '2' (a quoted string: write 2 without quotes); it takes 1 or 2"}};
  for (const auto& [parameters, expected] : cases) {
    const std::string on = parameters.substr(0, parameters.find(':'));
    expect_rejected(sweep_yaml({{"parameters", "parameters:\n  " + parameters}}), "parameters.momentum.when." + on,
                    "when:", expected);
  }
}

TEST(SweepRejection, HyperparameterNoTrialsOptimizerReads) {
  // Under the default optimizer (sgd), rho would be sampled and change nothing.
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr:\n    values: [0.1]\n"
                                 "  rho:\n    distribution: uniform\n    min: 0.1\n    max: 0.9\n"}});
  expect_rejected(yaml, "parameters.rho", "rho:", "read only with optimizer adadelta, but optimizer is sgd");
  // Nor where the optimizer is tuned, but never to one that reads it.
  const auto tuned = sweep_yaml({{"parameters",
                                  "parameters:\n  optimizer:\n    values: [adam, adagrad]\n    fuse: false\n"
                                  "  momentum:\n    values: [0.9]\n"}});
  expect_rejected(tuned, "parameters.momentum", "momentum:", "optimizer takes only adagrad or adam");
  // Nor under a condition that keeps it from the optimizers that read it.
  const auto conditioned = sweep_yaml({{"parameters",
                                        "parameters:\n  optimizer:\n    values: [sgd, adam]\n    fuse: false\n"
                                        "  beta1:\n    values: [0.8]\n    when: {optimizer: sgd}\n"}});
  expect_rejected(conditioned, "parameters.beta1", "beta1:", "where beta1 is sampled");
  // One-cycle runs from max_lr: lr is read by the other schedules only.
  const auto one_cycle = sweep_yaml({{"parameters",
                                      "parameters:\n  schedule:\n    value: one_cycle\n"
                                      "  lr:\n    values: [0.1, 0.01]\n"}});
  expect_rejected(one_cycle, "parameters.lr", "lr:", "read only with schedule");
  const auto step = sweep_yaml({{"parameters",
                                 "parameters:\n  schedule:\n    value: step\n  t_max:\n    values: [50, 100]\n"}});
  expect_rejected(step, "parameters.t_max", "t_max:", "read only with schedule cosine or linear, but schedule takes only step");
}

TEST(SweepRejection, HyperparameterSomeTrialsReadIsAccepted) {
  // Momentum is read by the sgd trials, and by none of the adam ones: accepted.
  load_sweep_string(sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    values: [sgd, adam]\n    fuse: false\n"
                                 "  momentum:\n    values: [0.9]\n"
                                 "  step_size:\n    values: [2]\n    when: {schedule: step}\n"
                                 "  schedule:\n    values: [step, cosine]\n    when: {optimizer: adam}\n"}}),
                    "sweep.yaml");
  // A linear decay reads its length, its final rate, and a warm-up.
  load_sweep_string(sweep_yaml({{"parameters",
                                 "parameters:\n  schedule:\n    value: linear\n  t_max:\n    values: [50, 100]\n"
                                 "  eta_min:\n    values: [0, 0.001]\n  warmup:\n    values: [0, 10]\n"}}),
                    "sweep.yaml");
}

TEST(SweepRejection, ConditionCycle) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    values: [sgd, adam]\n"
                                 "    fuse: false\n    when: {schedule: step}\n"
                                 "  schedule:\n    values: [step, cosine]\n"
                                 "    when: {optimizer: sgd}\n"}});
  expect_rejected(yaml, "parameters.optimizer.when", "  optimizer:", "cycle");
}

TEST(SweepRejection, MissingDistribution) {
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  lr:\n    min: 0.1\n    max: 0.2\n"}});
  expect_rejected(yaml, "parameters.lr.distribution", "min: 0.1", "missing 'distribution'");
}

TEST(SweepRejection, NoParameters) {
  const auto yaml = sweep_yaml({{"parameters", "parameters: {}\n"}});
  expect_rejected(yaml, "parameters", "parameters:", "at least one parameter");
}

TEST(SweepRejection, NameThatCannotNameADirectory) {
  const auto yaml = sweep_yaml({{"name", "name: ../escape\n"}});
  expect_rejected(yaml, "name", "name:", "names the experiment directory");
  expect_rejected(sweep_yaml({{"name", "name: " + std::string(129, 'a') + "\n"}}), "name", "name:",
                  "a name is at most 128 characters (it names the experiment directory), got 129");
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"name", "name: " + std::string(128, 'a') + "\n"}}), "sweep.yaml"));
}

TEST(SweepRejection, MemoryFractionOutOfRange) {
  const auto yaml = sweep_yaml({{"fusion", "fusion:\n  memory_fraction: 1.5\n"}});
  expect_rejected(yaml, "fusion.memory_fraction", "memory_fraction", "(0, 1]");
}

TEST(SweepRejection, NegativeMinimumGain) {
  const auto yaml = sweep_yaml({{"fusion", "fusion:\n  min_gain: -0.1\n"}});
  expect_rejected(yaml, "fusion.min_gain", "min_gain", "[0, 10]");
}

TEST(SweepRejection, MoreThanOneYamlDocument) {
  const auto yaml = sweep_yaml() + "---\ngarbage: [1, 2]\n";
  expect_rejected(yaml, "", "garbage", "2 YAML documents");
}

TEST(SweepRejection, IntegerBoundBeyondExactDoubles) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  warmup:\n    distribution: int_uniform\n"
                                 "    min: 0\n    max: 9223372036854775807\n"}});
  expect_rejected(yaml, "parameters.warmup.max", "max: 9223", "at most 2^53");
}

TEST(SweepRejection, NumberOutOfRange) {
  const auto yaml = sweep_yaml({{"parameters", "parameters:\n  lr:\n    values: [0.1, 1e400]\n"}});
  expect_rejected(yaml, "parameters.lr.values[1]", "values:", "out of range");
  const auto too_big = sweep_yaml({{"seed", "seed: 99999999999999999999\n"}});
  // Past 64 bits, a seed gets the message of one just past its range.
  expect_rejected(too_big, "seed", "seed:",
                  "expected an integer in [0, 9223372036854775807] (every trial's configuration and seed follow from "
                  "it), got 99999999999999999999");
  expect_rejected(sweep_yaml({{"seed", "seed: -1\n"}}), "seed", "seed:",
                  "expected an integer in [0, 9223372036854775807] (every trial's configuration and seed follow from "
                  "it), got -1");
}

TEST(SweepRejection, DuplicateConditionValue) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    values: [sgd, adam]\n"
                                 "    fuse: false\n  momentum:\n    values: [0.9]\n"
                                 "    when: {optimizer: [sgd, sgd]}\n"}});
  expect_rejected(yaml, "parameters.momentum.when.optimizer", "when:", "listed twice");
}

TEST(SweepRejection, KeysThatAreNotPlainNames) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  lr: {values: [0.1]}\n  ? [a, b]\n  : {values: [1]}\n"}});
  expect_rejected(yaml, "parameters", "? [a, b]", "keys must be plain names");
}

TEST(SweepRejection, EmptyValueIsReportedAtItsKey) {
  const auto yaml = sweep_yaml({{"budget", "budget:\n"}, {"search", "\nsearch:\n  method: hyperband\n"}});
  expect_rejected(yaml, "budget", "budget:", "expected a mapping");
}

TEST(SweepRejection, AnInvalidParameterIsNotAlsoReportedMissing) {
  const auto yaml = sweep_yaml({{"parameters",
                                 "parameters:\n  optimizer:\n    values: [sgd, bogus]\n"
                                 "    fuse: false\n  momentum:\n    values: [0.9]\n"
                                 "    when: {optimizer: sgd}\n"}});
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].path, "parameters.optimizer.values[1]");
  }
  // Nor are the parameters it decides what reads them (beta1, eps) reported as
  // read by no trial, as if it held its default; nor nesterov, for a momentum
  // that did not load.
  for (const std::string& parameters :
       {std::string("parameters:\n  optimizer:\n    values: [sgd, adam, adamm]\n    fuse: false\n"
                    "  beta1:\n    distribution: uniform\n    min: 0.8\n    max: 0.9\n    when: {optimizer: adam}\n"
                    "  eps:\n    distribution: log_uniform\n    min: 1.0e-8\n    max: 1.0e-6\n"),
        std::string("parameters:\n  optimizer:\n    values: [sgd, adam]\n    fuse: \"false\"\n"
                    "  eps:\n    distribution: log_uniform\n    min: 1.0e-8\n    max: 1.0e-6\n"),
        std::string("parameters:\n  momentum:\n    values: [0.9, 2.0]\n  nesterov:\n    values: [true, false]\n")}) {
    try {
      load_sweep_string(sweep_yaml({{"parameters", parameters}}), "sweep.yaml");
      FAIL() << parameters;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
    }
  }
}

TEST(SweepRejection, TheParsersWordsForBadIndentationOrAnUnclosedBracketAreExplained) {
  for (const auto& [yaml, line, said] : std::vector<std::tuple<std::string, int, std::string>>{
           {"name: x\ntask:\n  model: mlp\n batch_size: 3\n", 4, "end of map not found (this line's indentation"},
           {"name: x\ntask:\n  model: mlp\n    batch_size: 3\n", 4, "illegal map value (a ':' where no key may start"},
           {"name: x\ntask: {model: mlp\nmetric: 3\n", 3, "mapping opened above is not closed with '}'"},
           {"name: x\nl: [1, 2\nm: 3\n", 3, "list opened above is not closed with ']'"}}) {
    SCOPED_TRACE(yaml);
    try {
      load_sweep_string(yaml, "sweep.yaml");
      FAIL();
    } catch (const ConfigError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u);
      EXPECT_EQ(e.diagnostics()[0].line, line);
      EXPECT_NE(e.diagnostics()[0].message.find(said), std::string::npos) << e.diagnostics()[0].message;
    }
  }
}

TEST(SweepRejection, NotYaml) {
  const std::string yaml = "name: x\ntask: [1, 2\n";
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].message.find("not valid YAML"), std::string::npos);
    EXPECT_GT(e.diagnostics()[0].line, 0);
  }
  // A .json file (a sweep.json, validate --json's output) is said to be JSON.
  try {
    load_sweep_string("{\"name\": \"x\", \"task\": [1, 2\n", "runs/a/sweep.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(e.diagnostics()[0].message.find("not valid JSON (read as YAML): "), std::string::npos)
        << e.diagnostics()[0].message;
  }
}

TEST(SweepRejection, NestingDeeperThanTheParserTakesIsNamed) {
  const std::string yaml = "name: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].message.find("levels deep, more than the parser takes"), std::string::npos) << e.what();
  }
}

TEST(SweepRejection, ControlCharactersInEchoedValuesAreWrittenOut) {
  // A zero byte echoed from a quoted value would end the printed report
  // there; a block scalar's line breaks would split one problem over lines.
  const auto yaml = sweep_yaml({{"seed", "seed: \"a\\u0000b\"\n"},
                                {"budget", "budget: |\n  multi\n  line\n"}});
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(std::strlen(e.what()), what.size()) << what;
    EXPECT_NE(what.find("seed: expected an integer, got 'a\\x00b'"), std::string::npos) << what;
    EXPECT_NE(what.find("got 'multi\\nline\\n'"), std::string::npos) << what;
    EXPECT_EQ(std::count(what.begin(), what.end(), '\n') + 1, static_cast<long>(e.diagnostics().size())) << what;
  }
}

TEST(SweepRejection, EmptyFile) {
  EXPECT_THROW(load_sweep_string("", "sweep.yaml"), ConfigError);
  EXPECT_THROW(load_sweep_string("# only a comment\n", "sweep.yaml"), ConfigError);
}

TEST(SweepRejection, TopLevelNotAMapping) {
  try {
    load_sweep_string("- a\n- b\n", "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("expected a mapping"), std::string::npos);
  }
}

// A file whose lines end in CR alone is one line to YAML: the cause is named.
TEST(SweepRejection, LinesEndingInACarriageReturnAloneAreNamed) {
  std::string yaml = sweep_yaml();
  for (auto& c : yaml) c = c == '\n' ? '\r' : c;
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("carriage return alone (classic Mac OS line endings)"), std::string::npos)
        << e.what();
  }
  std::string crlf;
  for (const char c : sweep_yaml()) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_NO_THROW(load_sweep_string(crlf, "sweep.yaml"));
}

TEST(SweepRejection, APrecisionTheModelCannotTrainInIsRefusedAtItsLine) {
  const auto yaml = sweep_yaml({{"task", "task:\n  model: dcgan\n  precision: bf16\n"},
                                {"metric", "metric:\n  name: val_fid\n  goal: minimize\n"}});
  expect_rejected(yaml, "task.precision", "precision: bf16", "dcgan trains in fp32 only");
}

// A key that holds a character printing as nothing (a second byte order mark,
// a no-break space pasted from a web page) is shown with it spelt out.
TEST(SweepRejection, InvisibleCharactersInAKeyAreSpeltOut) {
  try {
    load_sweep_string("\xEF\xBB\xBF\xEF\xBB\xBF" + sweep_yaml(), "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("<U+FEFF>name: unknown key '<U+FEFF>name' (did you mean 'name'? it holds an "
                                         "invisible character"),
              std::string::npos)
        << e.what();
  }
  std::string yaml = sweep_yaml();
  yaml.replace(yaml.find("seed:"), 5, "seed\xC2\xA0:");
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.yaml:2:1: seed<U+00A0>: unknown key 'seed<U+00A0>' (did you mean "
                                         "'seed'?"),
              std::string::npos)
        << e.what();
  }
}

// A sweep ported from Ray Tune, Optuna or W&B is refused with the name to write here.
TEST(SweepRejection, OtherToolsNamesAreRefusedWithTheNameHere) {
  expect_rejected(sweep_yaml({{"search", "search:\n  method: asha\n  trials: 9\n  grace_period: 1\n"}}),
                  "search.grace_period", "grace_period", "'grace_period' is not used by method asha (Ray Tune's ASHA "
                  "grace_period is budget.min here; search.grace_period is the stopping rule's, under method random)");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: random\n  trials: 9\n  stopping: median\n"
                                         "  min_samples_required: 4\n"}}),
                  "search.min_samples_required", "min_samples_required", "are search.min_samples here");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: bayes\n"}}), "search.method", "method: bayes",
                  "(Bayesian optimisation with a Gaussian process (W&B's bayes, Ray Tune's BayesOptSearch) is search.searcher: gp ");
  expect_rejected(sweep_yaml({{"metric", "metric:\n  name: val_accuracy\n  goal: max\n"}}), "metric.goal",
                  "goal: max", "(write maximize)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  learning_rate:\n    values: [0.1]\n"}}),
                  "parameters.learning_rate", "learning_rate", "unknown parameter 'learning_rate' (learning_rate is "
                  "called lr here); a parameter sets an option of model mlp (depth, width, activation or dropout) or "
                  "a training hyperparameter (optimizer, lr,");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  num_layers:\n    values: [2]\n"}}),
                  "parameters.num_layers", "num_layers", "(num_layers is called depth here)");
  // A hidden size is an MLP's width, not a CNN's (a channel count): no hint there.
  try {
    load_sweep_string(sweep_yaml({{"task", "task:\n  model: cnn\n  batch_size: 32\n"},
                                  {"parameters", "parameters:\n  hidden_size:\n    values: [2]\n"}}),
                      "sweep.yaml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("is called width"), std::string::npos) << e.what();
  }
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  epochs:\n    values: [2]\n"}}), "parameters.epochs",
                  "  epochs:", "(how long a trial trains is the budget here");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribution: q_uniform\n"}}),
                  "parameters.lr.distribution", "q_uniform", "(W&B's q_uniform is quantized here (min, max, q))");
  // A word in other letter case is the word.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  optimizer:\n    value: SGD\n"}}),
                  "parameters.optimizer.value", "SGD", "(did you mean 'sgd'?)");
  // A word cut short is the one name it begins (not val_auc, an edit away).
  expect_rejected(sweep_yaml({{"metric", "metric:\n  name: val_acc\n  goal: maximize\n"}}), "metric.name", "val_acc",
                  "(did you mean 'val_accuracy'?)");
  // Ray Tune's and Optuna's spellings of a parameter.
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribution: tune.loguniform\n"}}),
                  "parameters.lr.distribution", "tune.loguniform", "(a log range is log_uniform here)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribution: qrandint\n"}}),
                  "parameters.lr.distribution", "qrandint", "(integers in steps of q are quantized here");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    grid_search: [0.1, 0.01]\n"}}),
                  "parameters.lr.grid_search", "grid_search", "unknown key 'grid_search' (Ray Tune's grid_search is "
                  "distribution: grid with values: [...] here: every value, crossed with the other grid parameters, "
                  "under any method)");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribution: uniform\n    min: 0.01\n"
                                             "    max: 0.1\n    log: true\n"}}),
                  "parameters.lr.log", "log:", "(a log scale is distribution: log_uniform (or int_log_uniform) here");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  lr:\n    distribution: quantized\n    min: 0.01\n"
                                             "    max: 0.1\n    step: 0.01\n"}}),
                  "parameters.lr.step", "step:", "(Optuna's step is q here, with distribution: quantized)");
  // Keys of other sections written at the top level.
  expect_rejected(sweep_yaml({{"mode", "mode: max\n"}}), "mode", "mode:", "(the goal is metric.goal here");
  expect_rejected(sweep_yaml({{"directions", "directions: [maximize, minimize]\n"}}), "directions", "directions:",
                  "(Optuna's directions are a list of objectives here: metric: [{name, goal}, ...])");
  expect_rejected(sweep_yaml({{"search", "search:\n  method: random\n  trials: 4\n  stopping: asha\n"}}),
                  "search.stopping", "stopping: asha", "(successive halving, ASHA and Hyperband are search.method here");
}

TEST(SweepRejection, TextThatIsNotUtf8) {
  for (const std::string text : {std::string("\xff\xfen\0a\0m\0e\0", 10), std::string("name: a\0b\n", 10)}) {
    try {
      load_sweep_string(text, "sweep.yaml");
      FAIL() << "accepted text that is not UTF-8";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("not UTF-8 text"), std::string::npos) << e.what();
    }
  }
  // Latin-1 text: named at its first byte that UTF-8 never has so, where
  // yaml-cpp would take it and print it back garbled.
  try {
    load_sweep_string("seed: 1\nname: sm\xe4ll\n", "sweep.yaml");
    FAIL() << "accepted Latin-1 text";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.yaml:2:9: the file is not UTF-8 text: byte 0xE4 here is not UTF-8 "
                                         "(Latin-1 or Windows-1252 text, most likely); save it as UTF-8"),
              std::string::npos)
        << e.what();
  }
  // UTF-8 itself passes this check.
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"seed", "seed: 3  # \u00e9t\u00e9 \u2014 \U0001F600\n"}}),
                                    "sweep.yaml"));
}

// A quote left open folds the keys below it into one string (or fails YAML
// some lines on): said where it opens, not as the keys it swallowed gone missing.
TEST(SweepRejection, AQuoteLeftOpenIsNamedWhereItOpens) {
  const std::string message = "this quoted text has no closing quote on its line (YAML would read on through the lines "
                              "below it): close it";
  for (const auto& [yaml, needle] : std::vector<std::pair<std::string, std::string>>{
           {sweep_yaml({{"name", "name: 'small\n"}, {"seed", "seed: 3  # it's\n"}}), "'small"},
           {sweep_yaml({{"search", "search:\n  method: hyperband\n  eta: \"3\n"}}), "\"3"},
           {sweep_yaml({{"parameters", "parameters:\n  lr: {values: [0.1, '0.2]}\n"}}), "'0.2"},
           {sweep_yaml({{"parameters", "parameters:\n  opt:\n    - 'sgd\n"}}), "'sgd"},
           {sweep_yaml({{"parameters", "parameters:\n  lr: {values: [0.1,\n    '0.2]}\n"}}), "'0.2"}}) {
    try {
      load_sweep_string(yaml, "sweep.yaml");
      FAIL() << "accepted:\n" << yaml;
    } catch (const ConfigError& e) {
      const std::string line = std::to_string(hfta::test::line_of(yaml, needle));
      const std::string column = std::to_string(yaml.find(needle) - yaml.rfind('\n', yaml.find(needle)));
      EXPECT_EQ(std::string(e.what()).rfind("sweep.yaml:" + line + ":" + column + ": " + message, 0), 0u) << e.what();
    }
  }
  // Quotes closed on their line ('' and \" inside them too), apostrophes
  // inside plain text and comments are no such thing.
  // Nor are a comma, a dash or a bracket inside plain text, nor a block
  // scalar's lines, where a quote is text.
  for (const std::string fine : {"name: 'it''s'  # it's\n", "name: \"a \\\" b\"\n", "name: it's\n",
                                 "name: \"x\" # \"\n", "name: tuning, 'quick\n", "name: a - 'b\n",
                                 "name: a ['b\n", "name: |\n  he said: \"hi\n  'quoted start\n",
                                 "name: >-\n  'folded\n"}) {
    try {
      load_sweep_string(sweep_yaml({{"name", fine}}), "sweep.yaml");
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).find("closing quote"), std::string::npos) << fine << e.what();
    }
  }
}

TEST(SweepRejection, UnreadableFile) {
  try {
    load_sweep_file("/nonexistent/sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/sweep.yaml"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos);
  }
  EXPECT_THROW(load_sweep_file("/tmp"), ConfigError);
}

TEST(SweepRejection, EveryProblemIsReportedInFileOrder) {
  const auto yaml = sweep_yaml({{"seed", "seed: -1\n"},
                                {"search", "search:\n  method: hyperband\n  eta: 0\n"},
                                {"fusion", "fusion:\n  enabled: maybe\n"}});
  try {
    load_sweep_string(yaml, "sweep.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 3u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].path, "seed");
    EXPECT_EQ(e.diagnostics()[1].path, "search.eta");
    EXPECT_EQ(e.diagnostics()[2].path, "fusion.enabled");
  }
}

// 16.0 where an integer belongs: the message quotes it as written and says
// what to write (it read "got number 16", as if 16 were wrong).
TEST(SweepRejection, AWholeNumberWrittenAsARealSaysWhatToWrite) {
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 64.0\n"}}), "task.batch_size", "batch_size: 64.0",
                  "expected an integer, got '64.0' (written with a decimal point or an exponent: write 64)");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 1e2\n"}}), "task.batch_size", "batch_size: 1e2",
                  "write 100)");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 32\n  options: {width: 16.0}\n"}}),
                  "task.options.width", "width: 16.0",
                  "expected integer in [1, 1048576] for 'width' (units per hidden layer), got number 16.0 (written with "
                  "a decimal point or an exponent: write 16)");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: mlp\n  batch_size: 32\n  options: {width: 100000.0}\n"}}),
                  "task.options.width", "width: 100000.0", "got number 100000.0 (written with a decimal point or an "
                  "exponent: write 100000)");
}

// A number out of its key's range is quoted back, as every other is.
TEST(SweepRejection, ANumberOutOfItsRangeIsQuotedBack) {
  expect_rejected(sweep_yaml({{"fusion", "fusion:\n  memory_fraction: 1.01\n"}}), "fusion.memory_fraction",
                  "memory_fraction: 1.01", "expected a fraction in (0, 1] of device memory, got '1.01'");
  expect_rejected(sweep_yaml({{"early_stopping", "early_stopping:\n  patience: 2\n  min_delta: -0.5\n"}}),
                  "early_stopping.min_delta", "min_delta: -0.5", "got '-0.5'");
}

// Class weights weigh a classifier's classes; F1, balanced accuracy and AUC
// are shares in [0, 1]; sklearn's and others' names for them are said as
// these.
TEST(SweepRejection, ClassWeightsAndClassBalancedMetricsAreAClassifiersAndOtherNamesAreSaidAsThese) {
  const std::string weights = "parameters:\n  lr: {value: 0.01}\n  class_weight: {values: [none, balanced]}\n";
  expect_rejected(sweep_yaml({{"task", "task:\n  model: transformer_lm\n"},
                              {"metric", "metric:\n  name: val_perplexity\n  goal: minimize\n"},
                              {"parameters", weights}}),
                  "parameters.class_weight", "class_weight:",
                  "class_weight weighs a classifier's classes; transformer_lm predicts tokens, and no trial would read it");
  expect_rejected(sweep_yaml({{"task", "task:\n  model: dcgan\n"},
                              {"metric", "metric:\n  name: val_fid\n  goal: minimize\n"},
                              {"parameters", weights}}),
                  "parameters.class_weight", "class_weight:", "dcgan generates images");
  expect_rejected(sweep_yaml({{"parameters", "parameters:\n  class_weight: {values: [none, inverse]}\n"}}),
                  "parameters.class_weight.values[1]", "inverse", "expected one of none, balanced for 'class_weight'");
  EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"parameters", weights}})));
  for (const char* name : {"val_f1", "val_balanced_accuracy", "val_auc", "val_average_precision"}) {
    EXPECT_NO_THROW(load_sweep_string(sweep_yaml({{"metric", "metric: {name: " + std::string(name) + ", goal: maximize}\n"}})))
        << name;
  }
  expect_rejected(sweep_yaml({{"metric", "metric: {name: roc_auc, goal: maximize}\n"}}), "metric.name", "roc_auc",
                  "did you mean 'val_auc'?");
  expect_rejected(sweep_yaml({{"metric", "metric: {name: AUROC, goal: maximize}\n"}}), "metric.name", "AUROC",
                  "did you mean 'val_auc'?");
  expect_rejected(sweep_yaml({{"metric", "metric: {name: f1_macro, goal: maximize}\n"}}), "metric.name", "f1_macro",
                  "did you mean 'val_f1'? (macro F1, the mean over the classes)");
  expect_rejected(sweep_yaml({{"metric", "metric: {name: PR_AUC, goal: maximize}\n"}}), "metric.name", "PR_AUC",
                  "did you mean 'val_average_precision'? (the area under the precision-recall curve)");
  for (const char* name : {"average_precision", "val_prauc", "mAP", "PR-AUC"}) {
    expect_rejected(sweep_yaml({{"metric", "metric: {name: " + std::string(name) + ", goal: maximize}\n"}}),
                    "metric.name", name, "did you mean 'val_average_precision'?");
  }
  expect_rejected(sweep_yaml({{"metric", "metric: {name: balanced_accuracy, goal: maximize}\n"}}), "metric.name",
                  "balanced_accuracy", "did you mean 'val_balanced_accuracy'?");
  expect_rejected(sweep_yaml({{"metric", "metric: {name: val_auc, goal: maximize, target: 95}\n"}}), "metric.target",
                  "target: 95", "val_auc lies in [0, 1] (a target of 90% is 0.9)");
  // A language model measures no classes of examples.
  expect_rejected(sweep_yaml({{"task", "task:\n  model: transformer_lm\n"},
                              {"metric", "metric:\n  name: val_f1\n  goal: maximize\n"}}),
                  "metric.name", "val_f1",
                  "val_f1 weighs classes of examples alike, a classifier's measure; transformer_lm reports "
                  "val_perplexity, val_loss or train_loss");
  // In a constraint too, other names are said as these.
  expect_rejected(sweep_yaml({{"metric", "metric: {name: val_f1, goal: maximize}\n"},
                              {"constraints", "constraints: [{name: roc_auc, min: 0.9}]\n"}}),
                  "constraints[0].name", "roc_auc", "did you mean 'val_auc'?");
}

}  // namespace
}  // namespace hfta::core
