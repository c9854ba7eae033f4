// Population based training through the CLI: clones continue as their parents, explore what they may,
// and a lost inherited checkpoint or a population that diverges is said.
#include <gtest/gtest.h>

#include "../support/cli_fixture.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

// Population based training over kTinySweep's MLP: 4 members, a generation
// every 10 steps up to 90, the worst member replaced by a clone of the best.
std::string tiny_pbt_sweep(const std::string& more = "") {
  std::string text = tiny_sweep_searching("{method: pbt, population: 4" + more + "}");
  return text.replace(text.find("max: 0.5"), 8, "max: 0.2");  // (no member diverges)
}

TEST_F(Cli, PopulationBasedTrainingClonesTheBestAndExploresItsHyperparameters) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep());
  const Result r = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("generation 0: 4 trials to 10 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("generation 8: 4 trials to 90 steps"), std::string::npos) << r.out;
  const auto all = results(dir_ + "/whole");
  const auto& trials = all.at("trials");
  // One member replaced after each of the 8 generations before the last.
  ASSERT_EQ(trials.size(), 12u);
  const auto by_id = trials_by_id(all);
  std::set<double> replaced_at;
  int perturbed = 0;
  for (const auto& [id, t] : by_id) {
    SCOPED_TRACE("trial " + std::to_string(id));
    if (id < 4) {
      EXPECT_FALSE(t.contains("parent"));
      continue;
    }
    ASSERT_TRUE(t.contains("parent"));
    const auto parent = by_id.at(t.at("parent").at("trial"));
    const double from = t.at("parent").at("budget");
    replaced_at.insert(from);
    EXPECT_LT(parent.at("id").get<std::int64_t>(), id);
    // Up to where it took over, its history is its parent's.
    std::size_t k = 0;
    for (; k < parent.at("history").size() && parent.at("history")[k].at("step").get<double>() <= from; ++k) {
      ASSERT_LT(k, t.at("history").size());
      EXPECT_EQ(t.at("history")[k], parent.at("history")[k]);
    }
    EXPECT_GT(t.at("history").size(), k);  // and it trained on from there
    // Each hyperparameter perturbed by 1.2 or 0.8 (clamped), or drawn again.
    for (const auto& [name, lo, hi] : {std::tuple{"lr", 0.01, 0.2}, std::tuple{"momentum", 0.0, 0.9}}) {
      const double mine = t.at("params").at(name), theirs = parent.at("params").at(name);
      perturbed += mine == std::clamp(theirs * 1.2, lo, hi) || mine == std::clamp(theirs * 0.8, lo, hi);
    }
    EXPECT_GE(t.at("params").at("lr").get<double>(), 0.01);
    EXPECT_LE(t.at("params").at("lr").get<double>(), 0.2);
  }
  EXPECT_EQ(replaced_at, (std::set<double>{10, 20, 30, 40, 50, 60, 70, 80}));
  EXPECT_GE(perturbed, 8);  // of 16 values, 12 perturbed on average, 4 drawn again
  // Four trials reach the end; the best, when it is a clone, shows its lineage.
  int at_end = 0;
  for (const auto& t : trials) at_end += t.at("budget") == 90;
  EXPECT_EQ(at_end, 4);
  const auto& best = all.at("best");
  if (by_id.at(best.at("id")).contains("parent")) {
    ASSERT_TRUE(best.contains("lineage"));
    EXPECT_EQ(best.at("lineage").back().at("id"), best.at("id"));
    EXPECT_EQ(best.at("lineage").front().at("from_budget"), 0);
    EXPECT_LT(best.at("lineage").front().at("id").get<std::int64_t>(), 4);
  }
  // CSV names each trial's parent.
  const Result csv = run("export " + dir_ + "/whole --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",parent,parent_budget,model_params,"
                         "final_val_balanced_accuracy,final_val_f1\n"), std::string::npos) << csv.out;

  // Cut after 5 arrays (generations) and resumed: as one run.
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Each trial alone, with the same math: the same metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  const auto alone = results(dir_ + "/alone");
  ASSERT_EQ(alone.at("trials").size(), trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(alone.at("trials")[i].at("params"), trials[i].at("params")) << i;
    EXPECT_NEAR(alone.at("trials")[i].at("metric").get<double>(), trials[i].at("metric").get<double>(), 1e-6) << i;
  }
}

TEST_F(Cli, APopulationBasedTrainingCloneContinuesExactlyAsItsParent) {
  // Explore that changes nothing: a clone trains on as its parent does (the
  // same state, hyperparameters, data order and, without dropout, math).
  const std::string sweep =
      write_sweep("pbt.yaml", tiny_pbt_sweep(", resample_probability: 0, perturbation_factors: [1]"));
  const Result r = run("run " + sweep + " --out " + dir_ + "/same");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/same");
  const auto by_id = trials_by_id(all);
  int compared = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    SCOPED_TRACE("trial " + std::to_string(id));
    const auto& parent = by_id.at(t.at("parent").at("trial"));
    EXPECT_EQ(t.at("params"), parent.at("params"));
    // Every evaluation both made, equal (the parent may have been replaced since).
    const auto& mine = t.at("history");
    const auto& theirs = parent.at("history");
    for (std::size_t k = 0; k < std::min(mine.size(), theirs.size()); ++k) {
      EXPECT_EQ(mine[k].at("step"), theirs[k].at("step"));
      EXPECT_NEAR(mine[k].at("val_loss").get<double>(), theirs[k].at("val_loss").get<double>(), 1e-6) << k;
      EXPECT_NEAR(mine[k].at("train_loss").get<double>(), theirs[k].at("train_loss").get<double>(), 1e-6) << k;
      ++compared;
    }
  }
  EXPECT_GT(compared, 8);
}

TEST_F(Cli, APopulationBasedTrainingCloneWhoseInheritedCheckpointIsLostFailsAndIsReplaced) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep());
  // Trial 4 is the first clone, from a parent's state at 10 steps.
  const ScopedEnv at_load_damage("HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD", "4@10");
  const Result r = run("run " + sweep + " --out " + dir_ + "/damaged");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/damaged");
  const auto by_id = trials_by_id(all);
  ASSERT_TRUE(by_id.count(4));
  EXPECT_EQ(by_id.at(4).at("status"), "failed");
  EXPECT_NE(by_id.at(4).at("error").get<std::string>().find(
                "came from trial " + by_id.at(4).at("parent").at("trial").dump() + " (population based training)"),
            std::string::npos)
      << by_id.at(4).at("error");
  // The population goes on: a new clone takes the failed one's place after generation 1.
  int at_20 = 0, at_end = 0;
  for (const auto& [id, t] : by_id) {
    at_20 += t.contains("parent") && t.at("parent").at("budget") == 20;
    at_end += t.at("budget") == 90;
  }
  EXPECT_GE(at_20, 1);
  EXPECT_EQ(at_end, 4);
}

TEST_F(Cli, PopulationBasedTrainingExploresOnlyWhatSearchExploreLists) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep(", explore: [momentum]"));
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/explore").code, 0);
  const auto all = results(dir_ + "/explore");
  const auto by_id = trials_by_id(all);
  int changed = 0, clones = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    const auto& parent = by_id.at(t.at("parent").at("trial"));
    EXPECT_EQ(t.at("params").at("lr"), parent.at("params").at("lr")) << id;  // a lineage keeps its first lr
    changed += t.at("params").at("momentum") != parent.at("params").at("momentum");
    ++clones;
  }
  EXPECT_EQ(clones, 8);
  EXPECT_GE(changed, 6);  // (unchanged only where clamped at 0.9 or multiplied from 0)
}

TEST_F(Cli, APopulationBasedTrainingCloneUnderReduceOnPlateauTrainsAtItsOwnLr) {
  // The plateau schedule holds the lr it reached; a clone's is its own
  // explored lr (here the parent's times 0.25), reduced as often as the parent's.
  std::string text = tiny_pbt_sweep(", resample_probability: 0, perturbation_factors: [0.25], explore: [lr]");
  text += "  schedule: {value: plateau}\n";
  const std::string sweep = write_sweep("pbt.yaml", text);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/plateau").code, 0);
  const auto all = results(dir_ + "/plateau");
  const auto by_id = trials_by_id(all);
  int clones = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    SCOPED_TRACE("trial " + std::to_string(id));
    const double lr = t.at("params").at("lr"), parents = by_id.at(t.at("parent").at("trial")).at("params").at("lr");
    EXPECT_NEAR(lr, std::max(0.01, parents * 0.25), 1e-15);
    const auto rungs = nlohmann::json::parse(slurp(dir_ + "/plateau/trials/" + std::to_string(id) + "/trial.json")).at("rungs");
    EXPECT_NEAR(rungs.at(0).at("progress").at("plateau").at("lr").get<double>(), lr, 1e-12);  // never reduced this early
    // And it trains on otherwise than its parent did.
    const auto& parent_history = by_id.at(t.at("parent").at("trial")).at("history");
    const std::size_t k = rungs.at(0).at("steps") == 0 ? 0 : t.at("history").size() - 1;
    if (k < parent_history.size() && lr != parents) EXPECT_NE(t.at("history")[k], parent_history[k]);
    ++clones;
  }
  EXPECT_EQ(clones, 8);
}

TEST_F(Cli, APopulationThatAllDivergesEndsSayingSo) {
  const std::string sweep = write_sweep("pbt.yaml", R"(name: diverging
seed: 1
task: {model: mlp, batch_size: 128, options: {depth: 1, width: 32}, eval_steps: 10}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 20, max: 80}
search: {method: pbt, population: 3}
parameters:
  lr: {distribution: log_uniform, min: 50, max: 100}
early_stopping: {patience: 0, divergence: 3.0}
)");
  const Result r = run("run " + sweep + " --out " + dir_ + "/diverged");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("population based training ended at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no member of the population completed its generation"), std::string::npos) << r.out;
  EXPECT_EQ(results(dir_ + "/diverged").at("trials").size(), 3u);  // no clone: none to clone from
}

}  // namespace
