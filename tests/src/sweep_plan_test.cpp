// `hfta-tune plan`: brackets, rungs, arrays and totals for every example sweep.
#include <gtest/gtest.h>

#include <dirent.h>

#include <regex>

#include "../support/sweep_text.h"
#include "hfta/core/data_notes.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/suspect_settings.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/search/brackets.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::core {
namespace {

using test::sweep_yaml;

constexpr double kFreeBytes = 16.0 * (1 << 30);  // a fixed machine, so tests do not depend on this one

std::vector<std::string> example_sweeps() {
  const std::string dir = std::string(HFTA_SOURCE_DIR) + "/configs";
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".yaml") out.push_back(dir + "/" + name);
  }
  if (d) closedir(d);
  return out;
}

TEST(SweepPlan, EveryExampleSweepPlans) {
  const auto sweeps = example_sweeps();
  ASSERT_GE(sweeps.size(), 2u);
  for (const auto& path : sweeps) {
    SCOPED_TRACE(path);
    const SweepConfig sweep = load_sweep_file(path);
    const SweepPlan plan = make_plan(sweep, true, "cpu", kFreeBytes);
    ASSERT_FALSE(plan.brackets.empty());
    for (const auto& b : plan.brackets) {
      ASSERT_FALSE(b.rungs.empty());
      // First rungs are packed: every trial lands in exactly one array within
      // max_array (but where TPE proposes trials that decide them).
      if (!b.rungs[0].arrays) {
        EXPECT_EQ(sweep.search.searcher, Searcher::kTpe);
        continue;
      }
      std::int64_t models = 0;
      for (const auto& a : *b.rungs[0].arrays) {
        EXPECT_LE(a.models, sweep.fusion.max_array);
        models += a.models;
      }
      EXPECT_EQ(models, b.rungs[0].n);
    }
    const auto j = to_json(plan, sweep);
    EXPECT_EQ(j.at("format"), 1);
    EXPECT_TRUE(j.at("brackets").at(0).contains("s"));
    EXPECT_TRUE(j.at("brackets").at(0).at("rungs").at(0).contains("n"));
    EXPECT_TRUE(j.at("brackets").at(0).at("rungs").at(0).contains("r"));
    EXPECT_GT(j.at("total_budget").get<double>(), 0);
    EXPECT_FALSE(to_text(plan, sweep).empty());
  }
}

TEST(SweepPlan, HyperbandPlanIsTheGoldenTable) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"budget", "budget:\n  min: 1\n  max: 81\n"}, {"search", "search:\n  method: hyperband\n"}}));
  const SweepPlan plan = make_plan(sweep, true, "cpu", kFreeBytes);
  const auto golden = search::hyperband_brackets(81, 1, 3);
  ASSERT_EQ(plan.brackets.size(), golden.size());
  for (std::size_t b = 0; b < golden.size(); ++b) {
    EXPECT_EQ(plan.brackets[b].s, golden[b].s);
    for (std::size_t i = 0; i < golden[b].rungs.size(); ++i) {
      EXPECT_EQ(plan.brackets[b].rungs[i].n, golden[b].rungs[i].n);
      EXPECT_DOUBLE_EQ(plan.brackets[b].rungs[i].r, golden[b].rungs[i].r);
    }
  }
  EXPECT_DOUBLE_EQ(plan.total_budget, search::total_budget(golden));
  // 81 trials at r=1 in one fusion key: two arrays of at most 64 models, balanced.
  ASSERT_EQ(plan.brackets[0].rungs[0].arrays->size(), 2u);
  EXPECT_EQ(plan.brackets[0].rungs[0].arrays->at(0).models, 41);
  EXPECT_EQ(plan.brackets[0].rungs[0].arrays->at(1).models, 40);
}

TEST(SweepPlan, UnfusedParametersSplitArraysAndFusionOffTrainsAlone) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"search", "search:\n  method: random\n  trials: 12\n"},
       {"parameters", "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"
                      "  width: {values: [64, 128], fuse: false}\n"}}));
  const SweepPlan fused = make_plan(sweep, true, "cpu", kFreeBytes);
  ASSERT_EQ(fused.brackets.size(), 1u);
  EXPECT_EQ(fused.brackets[0].rungs[0].arrays->size(), 2u);  // one per width
  const SweepPlan alone = make_plan(sweep, false, "cpu", kFreeBytes);
  EXPECT_EQ(alone.brackets[0].rungs[0].arrays->size(), 12u);
  EXPECT_EQ(to_json(alone, sweep).at("fusion"), "off");
  // The header: random search trains every trial to budget.max alone (no
  // budget.min), and no array size where nothing fuses.
  EXPECT_EQ(to_text(alone, sweep).substr(0, to_text(alone, sweep).find('\n')),
            "plan for 'test-sweep': random, budget 9 epochs, on cpu, fusion off");
  EXPECT_NE(to_text(fused, sweep).find("random, budget 9 epochs, on cpu, fusion auto (at most 64 models per array)\n"),
            std::string::npos);
}

TEST(SweepPlan, ARunOfAlikeArraysIsPrintedOnceCountedAndWholeBudgetsInFull) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"search", "search:\n  method: random\n  trials: 1000000\n"},
       {"budget", "budget:\n  unit: steps\n  min: 5\n  max: 5\n"}}));
  const std::string text = to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  EXPECT_NE(text.find("\n  1000000 trials to 5 steps; 15625 arrays: B=64 ("), std::string::npos) << text.substr(0, 400);
  EXPECT_EQ(text.find("bracket"), std::string::npos) << text.substr(0, 400);  // (random search has none)
  EXPECT_NE(text.find("total budget: 5000000 steps (every trial to budget.max)"), std::string::npos);
  EXPECT_NE(text.find(" MiB) x15625\n"), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("total budget: 5000000 steps"), std::string::npos) << text.substr(0, 400);
  // Large fractional totals to a tenth, never an exponent.
  const SweepConfig samples = load_sweep_string(sweep_yaml(
      {{"budget", "budget:\n  unit: samples\n  min: 10000\n  max: 3000000\n"}}));
  const std::string fractions = to_text(make_plan(samples, true, "cpu", kFreeBytes), samples);
  EXPECT_NE(fractions.find("total budget: 104407407.4 samples (sum of n_i r_i); trained with checkpoint resume: "
                           "84333333.3 samples"),
            std::string::npos)
      << fractions;
  EXPECT_NE(fractions.find("rung 0: 243 trials to 12345.7 samples"), std::string::npos) << fractions;
  // A stopping rule's budgets, under random search, are where it compares trials.
  const SweepConfig stopping = load_sweep_string(
      sweep_yaml({{"search", "search:\n  method: random\n  trials: 4\n  stopping: median\n"}}));
  const std::string compared = to_text(make_plan(stopping, true, "cpu", kFreeBytes), stopping);
  EXPECT_NE(compared.find("\ntrials, compared by the stopping rule at each budget\n  4 trials to 1 epoch"),
            std::string::npos)
      << compared;
  EXPECT_NE(compared.find("total budget: 36 epochs (every trial to budget.max; less where the stopping rule stops "
                          "trials)\n"),
            std::string::npos)
      << compared;  // (4 trials to 9 epochs: trained on through the rule's budgets, not summed over them)
  // Three alike or fewer are each shown.
  const SweepConfig few = load_sweep_string(sweep_yaml({{"search", "search:\n  method: random\n  trials: 12\n"},
                                                        {"fusion", "fusion:\n  max_array: 4\n"}}));
  const std::string three = to_text(make_plan(few, true, "cpu", kFreeBytes), few);
  EXPECT_TRUE(std::regex_search(three, std::regex("3 arrays: B=4 \\([0-9]+ MiB\\) B=4 \\([0-9]+ MiB\\) B=4 \\([0-9]+ MiB\\)\n")))
      << three;
}

TEST(SweepPlan, ArraysTpeProposesFromResultsAreUnknownWhereTheyDependOnThem) {
  const std::string width = "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n"
                            "  width: {values: [64, 128], fuse: false}\n";
  const std::string lr_only = "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n";
  auto plan_of = [](const std::string& search, const std::string& parameters) {
    return make_plan(load_sweep_string(sweep_yaml({{"search", search}, {"parameters", parameters}})), true, "cpu",
                     kFreeBytes);
  };
  // Later waves: which widths TPE proposes is not known before the first's results.
  const std::string waves = "search:\n  method: sha\n  searcher: tpe\n  trials: 12\n  waves: 3\n";
  EXPECT_FALSE(plan_of(waves, width).brackets[0].rungs[0].arrays.has_value());
  const auto unfused = make_plan(load_sweep_string(sweep_yaml({{"search", waves}, {"parameters", width}})), false, "cpu",
                                 kFreeBytes);
  EXPECT_FALSE(unfused.brackets[0].rungs[0].arrays.has_value());  // each trial alone, of a width not known yet
  EXPECT_TRUE(plan_of(waves, lr_only).brackets[0].rungs[0].arrays.has_value());  // one key whatever it proposes
  EXPECT_TRUE(plan_of("search:\n  method: sha\n  trials: 12\n", width).brackets[0].rungs[0].arrays.has_value());
  // Aligned Hyperband: the brackets that start after the first round.
  const SweepPlan hyperband = plan_of("search:\n  method: hyperband\n  searcher: tpe\n", width);
  for (const auto& b : hyperband.brackets) EXPECT_EQ(b.rungs[0].arrays.has_value(), b.first_round == 0) << b.s;
  const SweepPlan unaligned = plan_of("search:\n  method: hyperband\n  searcher: tpe\n  align_brackets: false\n", width);
  for (const auto& b : unaligned.brackets) EXPECT_TRUE(b.rungs[0].arrays.has_value()) << b.s;
  // A second pass of unaligned brackets starts after the first's results.
  const SweepPlan passes = plan_of("search:\n  method: hyperband\n  searcher: tpe\n  align_brackets: false\n"
                                   "  iterations: 2\n", width);
  for (const auto& b : passes.brackets) EXPECT_EQ(b.rungs[0].arrays.has_value(), b.iteration == 0) << b.s;
}

TEST(SweepPlan, HyperbandIterationsRepeatTheBracketsRoundsAfterTheOneBefore) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml({{"search", "search:\n  method: hyperband\n  iterations: 2\n"}}));
  const SweepPlan plan = make_plan(sweep, true, "cpu", kFreeBytes);
  ASSERT_EQ(plan.brackets.size(), 6u);  // 9 epochs from 1 at eta 3: brackets s=2, 1, 0, twice
  for (std::size_t b = 0; b < 3; ++b) {
    const auto& again = plan.brackets[b + 3];
    EXPECT_EQ(again.iteration, 1);
    EXPECT_EQ(again.s, plan.brackets[b].s);
    EXPECT_EQ(again.first_round, plan.brackets[b].first_round + 3);  // after the first pass's three rounds
    // Random search: the second pass's first rungs are known, and fuse as the first's.
    ASSERT_TRUE(again.rungs[0].arrays.has_value());
    EXPECT_EQ(again.rungs[0].arrays->at(0).models, plan.brackets[b].rungs[0].n);
  }
  const SweepConfig once = load_sweep_string(sweep_yaml({{"search", "search:\n  method: hyperband\n"}}));
  EXPECT_DOUBLE_EQ(plan.total_budget, 2 * make_plan(once, true, "cpu", kFreeBytes).total_budget);
  const std::string text = to_text(plan, sweep);
  EXPECT_NE(text.find("bracket s=2 of iteration 1\n  rung 0: 9 trials to 1 epoch in round 3;"), std::string::npos) << text;
  EXPECT_EQ(to_json(plan, sweep)["brackets"][3]["iteration"], 1);
  EXPECT_NE(summarize(sweep).find("hyperband, eta 3, random searcher, 2 iterations"), std::string::npos)
      << summarize(sweep);
}

TEST(SweepPlan, LessMemoryMeansSmallerArraysWithPredictedBytes) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"task", "task:\n  model: mlp\n  batch_size: 256\n  options: {width: 2048, depth: 3}\n"},
       {"search", "search:\n  method: random\n  trials: 40\n"}}));
  const SweepPlan roomy = make_plan(sweep, true, "cpu", kFreeBytes);
  const SweepPlan tight = make_plan(sweep, true, "cpu", 600.0 * (1 << 20));
  const auto& a = *roomy.brackets[0].rungs[0].arrays;
  const auto& b = *tight.brackets[0].rungs[0].arrays;
  EXPECT_EQ(a.size(), 1u);
  EXPECT_GT(b.size(), 1u);
  for (const auto& array : b) {
    ASSERT_TRUE(array.predicted_bytes.has_value());
    EXPECT_LE(*array.predicted_bytes, tight.budget_bytes);
  }
}

TEST(SweepPlan, AModelThatAloneOutgrowsTheMemoryIsNoted) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"task", "task:\n  model: mlp\n  batch_size: 256\n  options: {width: 2048, depth: 3}\n"},
       {"search", "search:\n  method: random\n  trials: 4\n"}}));
  const std::string note = "note: one mlp model is predicted to need ";
  EXPECT_EQ(to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep).find(note), std::string::npos);
  const std::string tight = to_text(make_plan(sweep, true, "cpu", 10.0 * (1 << 20)), sweep);
  EXPECT_NE(tight.find(note), std::string::npos) << tight;
  EXPECT_NE(tight.find("its trials will likely fail out of memory"), std::string::npos) << tight;
  // Four workers on the device: each has a quarter of its free memory, said so.
  const std::string shared = to_text(make_plan(sweep, true, "cpu", 10.0 * (1 << 20), 4), sweep);
  EXPECT_NE(shared.find("memory: arrays planned within 9.00 MiB a worker (90% of its share, 1/4 of the 40 MiB free "
                        "on cpu, shared by 4 workers)"),
            std::string::npos)
      << shared;
  EXPECT_NE(shared.find("more than a worker's 10 MiB (1/4 of the 40 MiB free on cpu, shared by 4 workers): its "
                        "trials will likely fail out of memory (make it smaller: its task options or batch_size; or run "
                        "fewer workers)"),
            std::string::npos)
      << shared;
}

// Outgrowing only fusion.memory_fraction's share, a model still fits the
// device alone: the note names the fraction, not the model, as what to change.
TEST(SweepPlan, AModelOutgrowingOnlyTheMemoryFractionIsNotedAsTrainingAlone) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"task", "task:\n  model: mlp\n  batch_size: 256\n  options: {width: 2048, depth: 3}\n"},
       {"search", "search:\n  method: random\n  trials: 4\n"},
       {"fusion", "fusion:\n  memory_fraction: 1.0e-6\n"}}));
  const std::string text = to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  EXPECT_NE(text.find("(fusion.memory_fraction 1e-06 of the free memory): its trials train alone, unfused (raise "
                      "fusion.memory_fraction to fuse them)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("will likely fail out of memory"), std::string::npos) << text;
}

// Rungs are budget.max / eta^k (Hyperband's r_i), where Ray Tune's ASHA counts
// up from its grace period; and a quantized max off the grid is never drawn.
// Both surprise a user who reads only the sweep file, so the plan says them.
TEST(SweepPlan, ABudgetMinOffTheRungsAndAQuantizedMaxOffTheGridAreNoted) {
  const std::string params =
      "parameters:\n  momentum:\n    distribution: quantized\n    min: 0\n    max: 0.9\n    q: 0.25\n";
  for (const std::string method : {"hyperband", "sha", "asha"}) {
    SCOPED_TRACE(method);
    const SweepConfig off = load_sweep_string(sweep_yaml(
        {{"budget", "budget:\n  unit: epochs\n  min: 2\n  max: 9\n"},
         {"search", "search:\n  method: " + method + "\n  eta: 3\n" + (method == "hyperband" ? "" : "  trials: 9\n")},
         {"parameters", params}}));
    const std::string text = to_text(make_plan(off, true, "cpu", kFreeBytes), off);
    EXPECT_NE(text.find("note: rungs are budget.max / 3^k, so the smallest is 3 epochs, not budget.min 2 (for rungs "
                        "from 2, make budget.max 2 x 3^k: 6 or 18)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("note: parameters.momentum: max 0.9 is not on the grid 0 + k x 0.25, so its largest value is 0.75"),
              std::string::npos)
        << text;
  }
  // A ladder of one rung suggests one with halving; a grid of tiny steps is
  // compared in steps (0 to 1e-10 by 3e-11 ends at 9e-11).
  const SweepConfig one = load_sweep_string(sweep_yaml(
      {{"budget", "budget:\n  unit: epochs\n  min: 5\n  max: 9\n"},
       {"parameters", "parameters:\n  weight_decay:\n    distribution: quantized\n    min: 0\n    max: 1.0e-10\n    q: 3.0e-11\n"}}));
  const std::string one_text = to_text(make_plan(one, true, "cpu", kFreeBytes), one);
  EXPECT_NE(one_text.find("so the smallest is 9 epochs, not budget.min 5 (for rungs from 5, make budget.max 5 x 3^k: 15 or 45)"),
            std::string::npos)
      << one_text;
  EXPECT_NE(one_text.find("note: parameters.weight_decay: max 1e-10 is not on the grid 0 + k x 3e-11, so its largest value is 9e-11"),
            std::string::npos)
      << one_text;
  const SweepConfig on = load_sweep_string(sweep_yaml());  // 1 to 9 by 3, no quantized parameter
  const std::string text = to_text(make_plan(on, true, "cpu", kFreeBytes), on);
  EXPECT_EQ(text.find("note: rungs are"), std::string::npos) << text;
  EXPECT_EQ(text.find("is not on the grid"), std::string::npos) << text;
}

TEST(SweepPlan, GridPlansEveryPointTimesRepeats) {
  const SweepConfig sweep = load_sweep_string(sweep_yaml(
      {{"search", "search:\n  method: grid\n  repeats: 3\n"},
       {"parameters", "parameters:\n  lr: {distribution: grid, values: [0.1, 0.01]}\n"
                      "  momentum: {values: [0.0, 0.9]}\n"}}));
  const SweepPlan plan = make_plan(sweep, true, "cpu", kFreeBytes);
  ASSERT_EQ(plan.brackets.size(), 1u);
  EXPECT_EQ(plan.brackets[0].rungs[0].n, 12);
  EXPECT_DOUBLE_EQ(plan.brackets[0].rungs[0].r, 9);
}

// What users of Ray Tune and PyTorch would mean otherwise.
TEST(SweepPlan, AGridCycledShortOrUnevenlyAnIdleBudgetMinAnUntunedAdamLrAndADeadScheduleAreNoted) {
  auto notes = [](const std::map<std::string, std::string>& sections) {
    const SweepConfig sweep = load_sweep_string(sweep_yaml(sections));
    return to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  };
  const std::string grid = "parameters:\n  lr: {distribution: grid, values: [0.1, 0.01, 0.001]}\n"
                           "  momentum: {distribution: grid, values: [0, 0.9]}\n";
  EXPECT_EQ(notes({{"search", "search:\n  method: asha\n  trials: 12\n"}, {"parameters", grid}}).find("grid's"),
            std::string::npos);  // twice over, evenly
  const std::string uneven = notes({{"search", "search:\n  method: asha\n  trials: 8\n"}, {"parameters", grid}});
  EXPECT_NE(uneven.find("note: the grid's 6 combinations of lr, momentum cycle through the trials (trial t takes "
                        "combination t mod 6), and 8 trials are not a multiple of 6: the first 2 combinations get one "
                        "trial more"),
            std::string::npos)
      << uneven;
  // Hyperband's 17 trials (9 epochs from 1, eta 3) fall short of 18 combinations; twice over, not.
  const std::string eighteen = "parameters:\n  lr: {distribution: grid, values: [0.1, 0.05, 0.01, 0.005, 0.001, 0.0005]}\n"
                               "  momentum: {distribution: grid, values: [0, 0.5, 0.9]}\n";
  EXPECT_NE(notes({{"parameters", eighteen}}).find("but the sweep starts 17 trials: 1 combination is never tried (raise "
                                                  "search.iterations, or use method grid)"),
            std::string::npos);
  EXPECT_EQ(notes({{"search", "search:\n  method: hyperband\n  iterations: 2\n"}, {"parameters", eighteen}}).find("grid's"),
            std::string::npos);
  const std::string short_of_it = notes({{"search", "search:\n  method: random\n  trials: 4\n"}, {"parameters", grid}});
  EXPECT_NE(short_of_it.find("but the sweep starts 4 trials: 2 combinations are never tried (raise search.trials, or "
                             "use method grid)"),
            std::string::npos)
      << short_of_it;
  const std::string idle = notes({{"search", "search:\n  method: random\n  trials: 4\n"},
                                  {"budget", "budget:\n  unit: epochs\n  min: 3\n  max: 9\n"}});
  EXPECT_NE(idle.find("note: budget.min 3 plays no part: method random trains every trial to budget.max 9"),
            std::string::npos)
      << idle;
  // The stopping rule's default three others, of three trials: it never stops one.
  const std::string idle_rule = notes({{"search", "search:\n  method: random\n  trials: 3\n  stopping: median\n"}});
  EXPECT_NE(idle_rule.find("note: search.min_samples 3 is not below search.trials 3: a trial is compared with the "
                           "others, so the median rule never stops one"),
            std::string::npos)
      << idle_rule;
  EXPECT_EQ(notes({{"search", "search:\n  method: random\n  trials: 4\n  stopping: median\n"}}).find("min_samples"),
            std::string::npos);
  // A range whose ends meet is a constant.
  const std::string closed = notes({{"parameters", "parameters:\n  lr: {distribution: uniform, min: 0.1, max: 0.1}\n"
                                                   "  momentum: {distribution: uniform, min: 0.5, max: 0.9}\n"}});
  EXPECT_NE(closed.find("note: parameters.lr: min equals max (0.1), so every trial takes 0.1: write value: 0.1, or "
                        "widen the range"),
            std::string::npos)
      << closed;
  EXPECT_EQ(closed.find("parameters.momentum"), std::string::npos) << closed;
  const std::string adam = notes({{"parameters", "parameters:\n  optimizer: {value: adam}\n  beta1: {values: [0.9]}\n"}});
  EXPECT_NE(adam.find("note: lr is not a parameter, so every trial trains at lr 0.01"), std::string::npos) << adam;
  EXPECT_EQ(notes({{"parameters", "parameters:\n  optimizer: {value: adam}\n  schedule: {value: one_cycle}\n"}})
                .find("lr is not a parameter"),
            std::string::npos);  // one_cycle trains from max_lr
  // lr's branches (or its condition) cover sgd and adam, not adamw.
  const std::string branches = "parameters:\n  optimizer: {values: [sgd, adam, adamw]}\n  lr:\n"
                               "    - {distribution: log_uniform, min: 0.01, max: 0.5, when: {optimizer: sgd}}\n"
                               "    - {distribution: log_uniform, min: 0.0001, max: 0.01, when: {optimizer: adam}}\n";
  const std::string uncovered = notes({{"parameters", branches}});
  EXPECT_NE(uncovered.find("note: lr's conditions leave it out where optimizer is adamw, so those trials train at lr 0.01"),
            std::string::npos)
      << uncovered;
  std::string covered = branches;
  covered.replace(covered.find("optimizer: adam}"), 16, "optimizer: [adam, adamw]}");
  EXPECT_EQ(notes({{"parameters", covered}}).find("lr's conditions leave it out"), std::string::npos);
  EXPECT_EQ(notes({{"search", "search:\n  method: sha\n  trials: 4\n"},
                   {"budget", "budget:\n  unit: epochs\n  min: 10\n  max: 20\n"}})
                .find("plays no part"),
            std::string::npos);  // one rung of a ladder: its own note
  // None of them on the plain sweep.
  const std::string plain = notes({});
  for (const char* note : {"grid's", "plays no part", "lr is not a parameter"}) {
    EXPECT_EQ(plain.find(note), std::string::npos) << note << "\n" << plain;
  }

  // A tutorial's per-epoch gamma applied per step: dead within an epoch.
  const SweepConfig decaying = load_sweep_string(sweep_yaml(
      {{"parameters", "parameters:\n  lr: {values: [0.1]}\n  schedule: {values: [constant, exponential, step]}\n"
                      "  gamma: {values: [0.1, 0.5]}\n  step_size: {values: [10, 30]}\n"}}));
  const auto dead = decay_notes(decaying, 1000);
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0], "note: schedule exponential multiplies lr by gamma (at most 0.5) every step: by budget.max "
                     "(1000 steps) the learning rate of every trial with schedule exponential has fallen to 1.9e-301 "
                     "of its lr or below (schedule lengths count training steps, not epochs)");
  EXPECT_NE(dead[1].find("schedule step multiplies lr by gamma (at most 0.5) every step_size (at most 30) steps: by "
                         "budget.max (1000 steps) the learning rate of every trial with schedule step has fallen to "
                         "1.2e-10"),
            std::string::npos)
      << dead[1];
  EXPECT_TRUE(decay_notes(decaying, 5).empty());  // 0.5^5 = 0.03; no step period ended
}

// Notes that the training set's size decides: plan says them where it knows
// the size without loading the data (Fashion-MNIST's 50,000 training images
// here: an evaluation every 1,563 steps at batch 32, 8 of them before
// budget.max's 9 epochs end), not for the text corpus (run says them there).
TEST(SweepPlan, NotesThatTheTrainingSetsSizeDecidesWhereItIsKnown) {
  auto text = [](const std::map<std::string, std::string>& sections) {
    const SweepConfig sweep = load_sweep_string(sweep_yaml(sections));
    return to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  };
  const std::string idle = "note: early_stopping.patience 8 waits for 9 evaluations, and budget.max leaves 8 before its "
                           "end (one every 1563 steps at batch 32), so it acts on no trial before budget.max: set task.eval_steps to evaluate "
                           "more often";
  EXPECT_NE(text({{"early_stopping", "early_stopping:\n  patience: 8\n"}}).find(idle), std::string::npos);
  EXPECT_EQ(text({{"early_stopping", "early_stopping:\n  patience: 7\n"}}).find("acts on no trial"), std::string::npos);
  // Where trials take other batch sizes, it names the one: a batch of 12,000 past
  // the 10,000 training images evaluates every step, and its patience acts.
  EXPECT_NE(text({{"task", "task:\n  model: mlp\n  batch_size: 64\n  validation_size: 50000\n"},
                  {"budget", "budget:\n  unit: steps\n  min: 3\n  max: 9\n"},
                  {"parameters", "parameters:\n  lr: {values: [0.1]}\n  batch_size: {values: [64, 12000]}\n"},
                  {"early_stopping", "early_stopping:\n  patience: 2\n"}})
                .find("note: early_stopping.patience 2 waits for 3 evaluations, and budget.max leaves 0 before its end "
                      "(one every 157 steps at batch 64), so it acts on no trial of that batch size before budget.max"),
            std::string::npos);
  EXPECT_NE(text({{"parameters", "parameters:\n  lr: {values: [0.1]}\n  schedule: {values: [exponential]}\n"
                                 "  gamma: {values: [0.5]}\n"}})
                .find("note: schedule exponential multiplies lr by gamma (at most 0.5) every step: by budget.max "
                      "(14067 steps)"),
            std::string::npos);
  EXPECT_EQ(trainers::known_train_examples("mlp", 5000), 55000);
  EXPECT_EQ(trainers::known_train_examples("pointnet"), 8000);
  EXPECT_FALSE(trainers::known_train_examples("transformer_lm").has_value());
}

// Valid, but the best trial would be the worst model, or the schedule would
// climb: the plan says so, and names what to change.
TEST(SweepPlan, AGoalAgainstItsMetricAndAnEtaMinAboveLrAreNoted) {
  auto text = [](const std::string& metric, const std::string& parameters) {
    const SweepConfig sweep = load_sweep_string(sweep_yaml({{"metric", metric}, {"parameters", parameters}}));
    return to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  };
  const std::string lr = "parameters:\n  lr: {distribution: log_uniform, min: 0.001, max: 0.1}\n";
  const std::string plain = text("metric: {name: val_accuracy, goal: maximize}\n", lr);
  EXPECT_EQ(plain.find("is better"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("eta_min"), std::string::npos) << plain;
  const std::string loss = text("metric: {name: val_loss, goal: maximize}\n", lr);
  EXPECT_NE(loss.find("note: val_loss is better lower, and metric.goal maximize makes the best trial the worst model "
                      "(did you mean goal: minimize?)"),
            std::string::npos)
      << loss;
  const std::string accuracy = text("metric: {name: val_accuracy, goal: minimize}\n", lr);
  EXPECT_NE(accuracy.find("note: val_accuracy is better higher, and metric.goal minimize"), std::string::npos) << accuracy;
  EXPECT_EQ(text("metric: {name: val_loss, goal: minimize}\n", lr).find("is better"), std::string::npos);

  const std::string cosine = lr + "  schedule: {value: cosine}\n";
  const std::string low = text("metric: {name: val_accuracy, goal: maximize}\n", cosine + "  eta_min: {values: [0, 0.001]}\n");
  EXPECT_EQ(low.find("eta_min reaches"), std::string::npos) << low;
  const std::string high = text("metric: {name: val_accuracy, goal: maximize}\n", cosine + "  eta_min: {value: 0.01}\n");
  EXPECT_NE(high.find("note: parameters.eta_min reaches 0.01, above the smallest lr 0.001: a cosine or linear schedule then "
                      "raises such a trial's learning rate to eta_min instead of lowering it"),
            std::string::npos)
      << high;

  auto validated_on = [](const std::string& n) {
    const SweepConfig sweep = load_sweep_string(sweep_yaml(
        {{"task", "task:\n  model: mlp\n  batch_size: 32\n  validation_size: " + n + "\n"}}));
    return to_text(make_plan(sweep, true, "cpu", kFreeBytes), sweep);
  };
  EXPECT_NE(validated_on("1").find("note: task.validation_size 1: every validation metric is measured on that many "
                                   "examples, so trials tie often"),
            std::string::npos);
  EXPECT_EQ(validated_on("100").find("task.validation_size"), std::string::npos);
}

}  // namespace
}  // namespace hfta::core
