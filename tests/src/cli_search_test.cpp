// Search methods and searchers through the CLI: ASHA, TPE, CMA-ES and the Gaussian process in waves,
// Hyperband iterations, percentile stopping, a metric target, quasi-random trials, branches and given points.
#include <gtest/gtest.h>

#include "../support/cli_fixture.h"
#include "hfta/search/median_stopping.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

TEST_F(Cli, AshaRunsToTheEndWithHeldPromotionsReleased) {
  const std::string sweep = write_sweep("asha.yaml", tiny_sweep_searching("{method: asha, eta: 3, trials: 9, promotion_wait: 30}"));
  const Result r = run("run " + sweep + " --out " + dir_ + "/asha");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/asha/results.json"));
  ASSERT_EQ(results.at("trials").size(), 9u);
  int at_top = 0;
  for (const auto& t : results.at("trials")) at_top += t.at("budget").get<double>() == 90;
  EXPECT_EQ(at_top, 1);  // 9 trials, eta 3: three reach 30 steps, one reaches 90
}

TEST_F(Cli, TpeInWavesLearnsFromTheEarlierWavesAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe, waves: 3}");
  const std::string sweep = write_sweep("waves.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find(" (sha with tpe) in "), std::string::npos) << whole.out;  // the header names the searcher
  EXPECT_NE(whole.out.find("note: TPE proposes each wave of new trials from the results of the waves before"),
            std::string::npos)
      << whole.out;
  // The first wave is random search's; TPE proposes the later ones from the
  // results before them.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: tpe, waves: 3"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto tpe_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(tpe_trials.size(), 12u);
  int proposed = 0;
  for (std::size_t i = 0; i < 12; ++i) {
    if (i < 4) EXPECT_EQ(tpe_trials[i].at("params"), random_trials[i].at("params")) << i;
    proposed += tpe_trials[i].at("params") != random_trials[i].at("params");
  }
  EXPECT_EQ(proposed, 8);
  // Stopped inside a rung, and resumed: the later waves are proposed from the
  // same results and the same wave-mates (TPE's liars, told of a trial the
  // cut run proposed as of one it proposes), so the sweep ends as the whole run.
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // In arrays of one, a cut falls between a wave's trials: the resumed run
  // reads the trials before it from the cut run's files, and still counts them
  // as the wave-mates of those it proposes (without, this differed from the
  // whole run at cuts after 5, 6 and 7 pieces).
  const std::string alone = write_sweep("alone.yaml", text + "fusion: {max_array: 1}\n");
  ASSERT_EQ(run("run " + alone + " --out " + dir_ + "/alone --workers 1").code, 0);
  expect_cut_and_resumed_as_whole(alone, "alone", "alone-cut", "6");

  // ASHA too, whose promotions, held for company, go with the next wave
  // whatever the wait (a resume replays rounds in no time).
  const std::string asha = write_sweep(
      "asha.yaml", tiny_sweep_searching("{method: asha, eta: 3, trials: 12, searcher: tpe, waves: 3, promotion_wait: 30}"));
  const Result asha_run = run("run " + asha + " --out " + dir_ + "/asha");
  ASSERT_EQ(asha_run.code, 0);
  // Promoting from each wave's results as they come, it can promote more than
  // the plan's counts (those of every trial at once): the plan says so. (The
  // progress count then grows with it: Progress.NeitherCountNorEtaReadsPastTheEnd.)
  EXPECT_NE(asha_run.out.find("note: ASHA promotes the top 1/3 of a rung's results as they come in"), std::string::npos)
      << asha_run.out;
  expect_cut_and_resumed_as_whole(asha, "asha", "asha-cut");

  // A TPE sweep recorded before waves existed (its sweep.json names none)
  // started every trial at once, and resumes so.
  const std::string before = write_sweep("before.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe}"));
  const std::string at_once = write_sweep("at-once.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe, waves: 1}"));
  ASSERT_EQ(run("run " + at_once + " --out " + dir_ + "/at-once").code, 0);
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "1", 1);
  ASSERT_EQ(run("run " + before + " --out " + dir_ + "/before --workers 1").code, 1);
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  auto recorded = nlohmann::json::parse(slurp(dir_ + "/before/sweep.json"));
  ASSERT_EQ(recorded.at("search").at("waves"), 3);
  recorded["search"].erase("waves");
  std::ofstream(dir_ + "/before/sweep.json") << recorded.dump(2);
  const Result resumed = run("resume " + dir_ + "/before");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.out.find("waves of"), std::string::npos) << resumed.out;
  expect_same_results(dir_ + "/before", dir_ + "/at-once");
}

// CMA-ES: each generation of search.population trials starts as a wave once
// the one before has its first-rung results, and trains as an array; fused,
// alone, and cut and resumed runs all end alike.
TEST_F(Cli, CmaEsTrainsEachGenerationAsAWaveAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: asha, eta: 3, trials: 12, searcher: cmaes, population: 4}");
  const std::string sweep = write_sweep("cmaes.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("note: CMA-ES draws each generation of 4 new trials from a Gaussian over lr, momentum "
                           "that the generations before it moved"),
            std::string::npos)
      << whole.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/whole/sweep.json")).at("search").at("population"), 4);
  // Not random search's trials, and in their ranges.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: cmaes, population: 4"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto cma_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(cma_trials.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_NE(cma_trials[i].at("params"), random_trials[i].at("params")) << i;
    const double lr = cma_trials[i].at("params").at("lr"), momentum = cma_trials[i].at("params").at("momentum");
    EXPECT_TRUE(lr >= 0.01 && lr <= 0.5 && momentum >= 0 && momentum <= 0.9) << cma_trials[i].at("params");
  }
  // Alone, the same trials and metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  // Stopped inside a rung, and resumed: the later generations are drawn from the same results.
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Not grown: ASHA's promotions follow the order results arrive in, which
  // more trials change (a user's 4 grown to 8 kept a rung the run of 8 never trained).
  const std::string eight = write_sweep("eight.yaml", std::regex_replace(text, std::regex("trials: 12"), "trials: 8"));
  ASSERT_EQ(run("run " + eight + " --out " + dir_ + "/grown").code, 0);
  std::ofstream(dir_ + "/grown/sweep.yaml") << text;
  const Result grown = run("resume " + dir_ + "/grown");
  EXPECT_EQ(grown.code, 2);
  EXPECT_NE(grown.err.find("search.trials: ASHA promotes trials in the order their results arrive"), std::string::npos)
      << grown.err;
  // A new population draws other generations: resume refuses it.
  {
    const ScopedEnv first_piece("HFTA_TUNE_SIGINT_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/stopped --workers 1").code, 1);
  }
  std::ofstream(dir_ + "/stopped/sweep.yaml") << std::regex_replace(text, std::regex("population: 4"), "population: 5");
  const Result edited = run("resume " + dir_ + "/stopped");
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("search.population"), std::string::npos) << edited.err;
  // By default Hansen's population (6 for two parameters), after the points to evaluate.
  const Result plan = run("plan " + write_sweep("default.yaml", tiny_sweep_searching(
      "{method: random, trials: 15, searcher: cmaes, points_to_evaluate: [{lr: 0.1, momentum: 0.5}]}")));
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("in 4 waves of 1, 6, 6, 2;"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("each generation of 6 new trials"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("it starts at the best point to evaluate"), std::string::npos) << plan.out;
  // What CMA-ES cannot do with the sweep as written, plan says.
  const Result one = run("plan " + write_sweep("one.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 5, searcher: cmaes, population: 8}")));
  EXPECT_NE(one.out.find("note: the 5 trials CMA-ES draws are at most one generation of 8, so its Gaussian never moves"),
            std::string::npos)
      << one.out;
  std::string wide = tiny_sweep_searching("{method: random, trials: 12, searcher: cmaes}");
  wide += "  width: {distribution: int_uniform, min: 16, max: 64, fuse: false}\n";
  const Result unfused = run("plan " + write_sweep("unfused.yaml", wide));
  EXPECT_NE(unfused.out.find("note: CMA-ES searches width (fuse: false), so a generation's trials differ in it"),
            std::string::npos)
      << unfused.out;
}

// The Gaussian process, in waves as TPE: the first is random search's, the
// later ones its proposals; fused, alone and cut-and-resumed runs end alike,
// under successive halving and Hyperband's second pass.
TEST_F(Cli, GaussianProcessProposesLaterWavesAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: gp, waves: 3}");
  const std::string sweep = write_sweep("gp.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("note: the Gaussian process proposes each wave of new trials from the results of the waves "
                           "before"),
            std::string::npos)
      << whole.out;
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: gp, waves: 3"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto gp_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(gp_trials.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    // (Four results at 10 steps before the second wave: the model needs 4, the parameters + 2.)
    if (i < 4) EXPECT_EQ(gp_trials[i].at("params"), random_trials[i].at("params")) << i;
    if (i >= 4) EXPECT_NE(gp_trials[i].at("params"), random_trials[i].at("params")) << i;
  }
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Hyperband's second pass is proposed from the first's results.
  const std::string twice = write_sweep("twice.yaml", tiny_sweep_searching("{method: hyperband, eta: 3, searcher: gp, iterations: 2}"));
  ASSERT_EQ(run("run " + twice + " --out " + dir_ + "/twice").code, 0);
  expect_cut_and_resumed_as_whole(twice, "twice", "twice-cut", "8");
}

TEST_F(Cli, HyperbandIterationsRunTheBracketsAgainProposedFromTheFirstPassAndResumeAsOneRun) {
  const std::string once = write_sweep("once.yaml", tiny_sweep_searching("{method: hyperband, eta: 3, searcher: tpe}"));
  const std::string text = tiny_sweep_searching("{method: hyperband, eta: 3, searcher: tpe, iterations: 2}");
  const std::string twice = write_sweep("twice.yaml", text);
  ASSERT_EQ(run("run " + once + " --out " + dir_ + "/once").code, 0);
  const Result whole = run("run " + twice + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("bracket s=0 of iteration 1\n  rung 0: 3 trials to 90 steps in round 5"), std::string::npos)
      << whole.out;
  // The first pass is the one-pass sweep, trial for trial (17 trials: 9, 5, 3).
  const auto first = results(dir_ + "/once").at("trials"), both = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(first.size(), 17u);
  ASSERT_EQ(both.size(), 34u);
  for (std::size_t i = 0; i < 17; ++i) {
    for (const char* key : {"params", "history", "metric"}) EXPECT_EQ(both[i].at(key), first[i].at(key)) << i << key;
  }
  // The second pass's trials are TPE's, proposed from the first pass's results:
  // not what random search draws for the same ids.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: tpe"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto drawn = results(dir_ + "/random").at("trials");
  ASSERT_EQ(drawn.size(), 34u);
  int proposed = 0;
  for (std::size_t i = 17; i < 34; ++i) proposed += both[i].at("params") != drawn[i].at("params");
  EXPECT_EQ(proposed, 17);
  // Stopped in the first pass, and in the second (ten pieces of training in all).
  expect_cut_and_resumed_as_whole(twice, "whole", "cut");
  expect_cut_and_resumed_as_whole(twice, "whole", "cut-late", "8");
  // The finished one-pass sweep, grown by a pass in its sweep.yaml, ends as the two-pass one.
  std::ofstream(dir_ + "/once/sweep.yaml") << text;
  const Result grown = run("resume " + dir_ + "/once");
  ASSERT_EQ(grown.code, 0) << grown.err;
  EXPECT_NE(grown.out.find("sweep.yaml's search.iterations grows from 1 to 2: the trials so far are kept, and Hyperband "
                           "runs its brackets 1 more time, with new trials\n"),
            std::string::npos)
      << grown.out;
  expect_same_results(dir_ + "/once", dir_ + "/whole");
  // A stopped one grows alike, and status says that resume grows it.
  {
    const ScopedEnv first_piece("HFTA_TUNE_SIGINT_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + once + " --out " + dir_ + "/stopped --workers 1").code, 1);
  }
  ASSERT_FALSE(exists(dir_ + "/stopped/results.json"));
  std::ofstream(dir_ + "/stopped/sweep.yaml") << text;
  const Result status = run("status " + dir_ + "/stopped");
  EXPECT_NE(status.out.find("/stopped/sweep.yaml grows search.iterations from 1 to 2: continue with hfta-tune resume "),
            std::string::npos)
      << status.out;
  ASSERT_EQ(run("resume " + dir_ + "/stopped").code, 0);
  expect_same_results(dir_ + "/stopped", dir_ + "/whole");
}

TEST_F(Cli, PercentileStoppingStopsWhatItsRuleSaysFromTheGraceOnAndResumesAsOneRun) {
  const std::string sweep = write_sweep(
      "percentile.yaml",
      tiny_sweep_searching("{method: random, trials: 8, stopping: percentile, percentile: 25, grace_period: 20, "
                           "min_samples: 3}"));
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("note: percentile stopping trains in steps of 10 steps and first compares the trials at 20 "
                           "steps"),
            std::string::npos)
      << whole.out;
  // Each step (10, 20, ..., 90 steps) ends at an evaluation: told the
  // recorded metrics step by step, the rule stops exactly the trials that
  // trained no further, none inside the grace.
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 8u);
  hfta::search::MedianStopping rule(hfta::search::Goal::kMaximize, hfta::search::StoppingRule{20, 3, 25});
  std::set<std::int64_t> alive = {0, 1, 2, 3, 4, 5, 6, 7};
  int stopped = 0;
  for (int budget = 10; budget <= 90; budget += 10) {
    for (const std::int64_t id : alive) {
      const auto& history = trials[static_cast<std::size_t>(id)].at("history");
      const auto at = std::find_if(history.begin(), history.end(), [&](const auto& h) { return h.at("step") == budget; });
      ASSERT_NE(at, history.end()) << "trial " << id << " at " << budget;
      rule.record(id, budget, at->at("val_accuracy").template get<double>());
    }
    std::set<std::int64_t> next;
    for (const std::int64_t id : alive) {
      const auto& t = trials[static_cast<std::size_t>(id)];
      if (!rule.should_stop(id, budget)) {
        next.insert(id);
        continue;
      }
      ++stopped;
      EXPECT_GE(budget, 20) << id;
      EXPECT_EQ(t.at("budget"), budget) << id;
      EXPECT_EQ(t.at("status"), "completed") << id;  // as a trial Hyperband does not promote
    }
    alive = next;
  }
  for (const std::int64_t id : alive) EXPECT_EQ(trials[static_cast<std::size_t>(id)].at("budget"), 90) << id;
  EXPECT_GT(stopped, 0);
  EXPECT_FALSE(alive.empty());
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
}

TEST_F(Cli, AMetricTargetEndsTheSweepAfterTheRoundThatReachedItAndResumesSo) {
  // Successive halving's first round trains 9 trials to 10 steps: a target
  // at the best of those results ends the sweep there.
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9}");
  ASSERT_EQ(run("run " + write_sweep("whole.yaml", text) + " --out " + dir_ + "/whole").code, 0);
  const auto whole = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(whole.size(), 9u);
  double first_round_best = 0;
  for (const auto& t : whole) first_round_best = std::max(first_round_best, t.at("history")[0].at("val_accuracy").get<double>());
  std::set<std::int64_t> reaching;
  for (const auto& t : whole) {
    if (t.at("history")[0].at("val_accuracy") == first_round_best) reaching.insert(t.at("id").get<std::int64_t>());
  }
  auto with_target = [&](double target) {
    std::string t = text;
    std::ostringstream line;
    line << std::setprecision(17) << "metric: {name: val_accuracy, goal: maximize, target: " << target << "}";
    const std::string plain = "metric: {name: val_accuracy, goal: maximize}";
    return t.replace(t.find(plain), plain.size(), line.str());
  };
  const std::string sweep = write_sweep("target.yaml", with_target(first_round_best));
  const Result reached = run("run " + sweep + " --out " + dir_ + "/reached");
  ASSERT_EQ(reached.code, 0) << reached.err;
  const auto ended = results(dir_ + "/reached");
  ASSERT_EQ(ended.at("trials").size(), 9u);
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(ended.at("trials")[i].at("budget"), 10) << i;
    EXPECT_EQ(ended.at("trials")[i].at("history"), nlohmann::json::array({whole[i].at("history")[0]})) << i;
  }
  EXPECT_EQ(ended.at("metric").at("target"), first_round_best);
  EXPECT_TRUE(reaching.count(ended.at("target_reached").at("id").get<std::int64_t>())) << ended.at("target_reached");
  EXPECT_EQ(ended.at("target_reached").at("metric"), first_round_best);
  EXPECT_EQ(ended.at("target_reached").at("budget"), 10);
  EXPECT_NE(reached.out.find("reached the target val_accuracy"), std::string::npos) << reached.out;
  EXPECT_NE(reached.out.find("the sweep ended after that round"), std::string::npos) << reached.out;
  const Result status = run("status " + dir_ + "/reached");
  EXPECT_NE(status.out.find("reached the target val_accuracy"), std::string::npos) << status.out;
  // Resumed from trials/ (as after a kill before results.json), it ends in the same round.
  std::remove((dir_ + "/reached/results.json").c_str());
  const Result before = run("status " + dir_ + "/reached");
  EXPECT_NE(before.out.find("reached the target val_accuracy"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("resume ends the sweep after that round"), std::string::npos) << before.out;
  ASSERT_EQ(run("resume " + dir_ + "/reached").code, 0);
  EXPECT_EQ(results(dir_ + "/reached").at("trials"), ended.at("trials"));
  EXPECT_EQ(results(dir_ + "/reached").at("target_reached"), ended.at("target_reached"));
  // A target no trial reaches leaves the sweep whole.
  const Result unreached = run("run " + write_sweep("never.yaml", with_target(1.0)) + " --out " + dir_ + "/never");
  ASSERT_EQ(unreached.code, 0) << unreached.err;
  EXPECT_NE(unreached.out.find("no trial reached the target val_accuracy 1"), std::string::npos) << unreached.out;
  EXPECT_TRUE(results(dir_ + "/never").at("target_reached").is_null());
  expect_same_results(dir_ + "/never", dir_ + "/whole");
}

TEST_F(Cli, QuasiRandomTrialsSpreadEvenlyAndResumeAsOneRun) {
  // Successive halving's 9 trials: momentum is the sequence's second
  // dimension (base 3), so its 9 values fall one in each ninth of its range.
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9, searcher: qmc}");
  const std::string sweep = write_sweep("qmc.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 9u);
  std::set<int> ninths;
  for (const auto& t : trials) ninths.insert(static_cast<int>(t.at("params").at("momentum").get<double>() / 0.9 * 9));
  EXPECT_EQ(ninths.size(), 9u);
  // Not random search's draws.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: qmc"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  EXPECT_NE(results(dir_ + "/random").at("trials")[1].at("params"), trials[1].at("params"));
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut", "2");  // (the sweep trains in about four pieces)
}

// lr per optimizer, as branches: each trial's lr comes from the branch of its
// optimizer, validate shows the branches, and a cut run resumes as one.
TEST_F(Cli, BranchesGiveEachTrialTheRangeOfItsConditionAndResumeAsOneRun) {
  std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9, searcher: tpe, waves: 3}");
  const std::string plain_lr = "  lr: {distribution: log_uniform, min: 0.01, max: 0.5}\n";
  text.replace(text.find(plain_lr), plain_lr.size(),
               "  optimizer: {values: [sgd, adam]}\n"
               "  lr:\n"
               "    - {distribution: log_uniform, min: 0.05, max: 0.5, when: {optimizer: sgd}}\n"
               "    - {distribution: log_uniform, min: 0.0005, max: 0.005, when: {optimizer: adam}}\n");
  const std::string momentum = "  momentum: {distribution: uniform, min: 0.0, max: 0.9}\n";
  text.replace(text.find(momentum), momentum.size(), "  momentum: [{distribution: uniform, min: 0.0, max: 0.9, when: {optimizer: sgd}}]\n");
  const std::string sweep = write_sweep("branches.yaml", text);
  const Result validated = run("validate " + sweep);
  ASSERT_EQ(validated.code, 0) << validated.err;
  EXPECT_NE(validated.out.find("lr[1]"), std::string::npos) << validated.out;
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 9u);
  std::set<std::string> optimizers;
  for (const auto& t : trials) {
    const auto& params = t.at("params");
    const std::string optimizer = params.at("optimizer");
    const double lr = params.at("lr");
    optimizers.insert(optimizer);
    if (optimizer == "sgd") {
      EXPECT_TRUE(lr >= 0.05 && lr <= 0.5) << params;
      EXPECT_TRUE(params.contains("momentum")) << params;
    } else {
      EXPECT_TRUE(lr >= 0.0005 && lr <= 0.005) << params;
      EXPECT_FALSE(params.contains("momentum")) << params;
    }
  }
  EXPECT_EQ(optimizers.size(), 2u);
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut", "2");
}

TEST_F(Cli, PointsToEvaluateAreTheFirstTrialsAndPartOfTheSweep) {
  const std::string points = "  points_to_evaluate:\n    - {lr: 0.3, momentum: 0.5}\n    - {lr: 0.02}\n";
  std::string text = tiny_sweep_searching("\n  method: sha\n  eta: 3\n  trials: 9\n");
  text.insert(text.find("parameters:"), points);
  const std::string sweep = write_sweep("points.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  // Without the points, the same sweep: the points take trials 0 and 1, a
  // parameter a point leaves out is drawn as that trial draws it, and every
  // later trial is unchanged.
  std::string plain_text = text;
  plain_text.erase(plain_text.find(points), points.size());
  ASSERT_EQ(run("run " + write_sweep("plain.yaml", plain_text) + " --out " + dir_ + "/plain").code, 0);
  const auto with = results(dir_ + "/whole").at("trials"), without = results(dir_ + "/plain").at("trials");
  ASSERT_EQ(with.size(), 9u);
  EXPECT_EQ(with[0].at("params"), nlohmann::json({{"lr", 0.3}, {"momentum", 0.5}}));
  EXPECT_EQ(with[1].at("params"), nlohmann::json({{"lr", 0.02}, {"momentum", without[1].at("params").at("momentum")}}));
  EXPECT_NE(with[1].at("params"), without[1].at("params"));
  for (std::size_t i = 2; i < 9; ++i) EXPECT_EQ(with[i].at("params"), without[i].at("params")) << i;
  EXPECT_EQ(with[0].at("seed"), without[0].at("seed"));  // a trial's seed is its id's

  // The points are part of the sweep: a directory stopped inside a rung
  // refuses to resume with them edited, and resumes as the whole run without.
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "1", 1);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cut --workers 1").code, 1);
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_FALSE(exists(dir_ + "/cut/results.json"));
  std::ofstream(dir_ + "/cut/sweep.yaml") << std::regex_replace(text, std::regex("lr: 0.02"), "lr: 0.03");
  const Result edited = run("resume " + dir_ + "/cut");
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("differ in what would change its trials: search.points_to_evaluate"), std::string::npos)
      << edited.err;
  std::ofstream(dir_ + "/cut/sweep.yaml") << text;
  ASSERT_EQ(run("resume " + dir_ + "/cut").code, 0);
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

}  // namespace
