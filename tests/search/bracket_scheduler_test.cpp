// Hyperband and successive halving run rung by rung: promotions, resume budgets, ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <limits>

#include "hfta/search/bracket_scheduler.h"

namespace hfta::search {
namespace {

constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

// Runs a scheduler to the end, reporting metric(id) for every trial; records
// every job. `reverse` reports each job's results in reverse order.
std::vector<RungJob> drive(Scheduler& s, double (*metric)(std::int64_t), bool reverse = false) {
  std::vector<RungJob> all;
  for (int guard = 0; !s.finished() && guard < 1000; ++guard) {
    auto jobs = s.next_jobs(kAll, 0);
    EXPECT_FALSE(jobs.empty()) << "scheduler stalled";
    for (auto& job : jobs) {
      auto trials = job.trials;
      if (reverse) std::reverse(trials.begin(), trials.end());
      for (const auto& t : trials) s.report({t.trial_id, job.budget, metric(t.trial_id)});
      all.push_back(job);
    }
  }
  return all;
}

double id_metric(std::int64_t id) { return static_cast<double>(id); }

TEST(BracketScheduler, HyperbandRunsEveryRungOfTheGoldenTable) {
  auto hb = make_hyperband(81, 1, 3, Goal::kMaximize);
  EXPECT_EQ(hb.trial_count(), 81 + 34 + 15 + 8 + 5);
  const auto jobs = drive(hb, id_metric);
  const auto plan = hb.plan();
  std::size_t rungs = 0;
  for (const auto& b : plan) rungs += b.rungs.size();
  ASSERT_EQ(jobs.size(), rungs);
  for (const auto& job : jobs) {
    const RungPlan& want = plan[job.bracket].rungs[job.rung];
    EXPECT_EQ(static_cast<std::int64_t>(job.trials.size()), want.n);
    EXPECT_DOUBLE_EQ(job.budget, want.r);
    for (const auto& t : job.trials) {
      // Promoted trials resume from the budget they reached, never from scratch.
      const double from = job.rung == 0 ? 0.0 : plan[job.bracket].rungs[job.rung - 1].r;
      EXPECT_DOUBLE_EQ(t.from_budget, from);
    }
  }
}

TEST(BracketScheduler, PromotesTheBestByGoal) {
  auto max = make_hyperband(9, 1, 3, Goal::kMaximize);
  auto jobs = drive(max, id_metric);
  // Bracket s=2: 9 trials (ids 0..8) at r=1, then the best 3 (8, 7, 6), then the best 1.
  ASSERT_EQ(jobs[0].trials.size(), 9u);
  std::vector<std::int64_t> second;
  std::vector<std::int64_t> third;
  for (const auto& j : jobs) {
    if (j.bracket == 0 && j.rung == 1) for (auto& t : j.trials) second.push_back(t.trial_id);
    if (j.bracket == 0 && j.rung == 2) for (auto& t : j.trials) third.push_back(t.trial_id);
  }
  EXPECT_EQ(second, (std::vector<std::int64_t>{8, 7, 6}));
  EXPECT_EQ(third, (std::vector<std::int64_t>{8}));

  auto min = make_hyperband(9, 1, 3, Goal::kMinimize);
  jobs = drive(min, id_metric);
  second.clear();
  for (const auto& j : jobs) {
    if (j.bracket == 0 && j.rung == 1) for (auto& t : j.trials) second.push_back(t.trial_id);
  }
  EXPECT_EQ(second, (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(BracketScheduler, ResultOrderDoesNotMatter) {
  auto a = make_hyperband(27, 1, 3, Goal::kMinimize);
  auto b = make_hyperband(27, 1, 3, Goal::kMinimize);
  auto metric = [](std::int64_t id) { return static_cast<double>((id * 7919) % 31); };
  static double (*m)(std::int64_t) = nullptr;
  m = +metric;
  const auto ja = drive(a, m, false);
  const auto jb = drive(b, m, true);
  ASSERT_EQ(ja.size(), jb.size());
  for (std::size_t i = 0; i < ja.size(); ++i) {
    EXPECT_EQ(ja[i].trials, jb[i].trials);
  }
}

TEST(BracketScheduler, StoppedDivergedAndFailedTrialsAreNeverPromoted) {
  BracketScheduler s({successive_halving_bracket(9, 9, 1, 3)}, Goal::kMaximize);
  auto jobs = s.next_jobs(kAll, 0);
  ASSERT_EQ(jobs.size(), 1u);
  for (const auto& t : jobs[0].trials) {
    TrialResult r{t.trial_id, 1, static_cast<double>(t.trial_id)};
    if (t.trial_id == 8) r.status = TrialStatus::kStopped;
    if (t.trial_id == 7) r.status = TrialStatus::kDiverged;
    if (t.trial_id == 6) r.status = TrialStatus::kFailed;
    if (t.trial_id == 5) r.metric = std::numeric_limits<double>::quiet_NaN();
    s.report(r);
  }
  jobs = s.next_jobs(kAll, 0);
  ASSERT_EQ(jobs.size(), 1u);
  std::vector<std::int64_t> ids;
  for (const auto& t : jobs[0].trials) ids.push_back(t.trial_id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{4, 3, 2}));
}

TEST(BracketScheduler, RandomSearchIsOneRungAtTheFullBudget) {
  BracketScheduler s({BracketPlan{0, {RungPlan{5, 30}}}}, Goal::kMaximize);
  auto jobs = s.next_jobs(kAll, 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].trials.size(), 5u);
  EXPECT_DOUBLE_EQ(jobs[0].budget, 30);
  EXPECT_TRUE(s.next_jobs(kAll, 0).empty());  // handed out once
  for (const auto& t : jobs[0].trials) s.report({t.trial_id, 30, 0.5});
  EXPECT_TRUE(s.finished());
}

// One round: every job handed out before any result, as the tuner packs them.
using Rounds = std::vector<std::vector<RungJob>>;
Rounds drive_rounds(Scheduler& s, double (*metric)(std::int64_t)) {
  Rounds rounds;
  for (int guard = 0; !s.finished() && guard < 1000; ++guard) {
    auto jobs = s.next_jobs(kAll, 0);
    EXPECT_FALSE(jobs.empty()) << "scheduler stalled";
    for (const auto& job : jobs) {
      for (const auto& t : job.trials) s.report({t.trial_id, job.budget, metric(t.trial_id)});
    }
    rounds.push_back(jobs);
  }
  return rounds;
}

TEST(BracketScheduler, AlignedBracketsEndTogetherAndTrainEachBudgetInOneRound) {
  auto aligned = make_hyperband(81, 1, 3, Goal::kMaximize, /*align_ends=*/true);
  auto together = make_hyperband(81, 1, 3, Goal::kMaximize);
  const Rounds a = drive_rounds(aligned, id_metric);
  const Rounds t = drive_rounds(together, id_metric);
  // As many rounds as brackets run side by side: the longest bracket's rungs.
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(t.size(), 5u);
  for (std::size_t round = 0; round < a.size(); ++round) {
    // Round j trains every bracket's rung to 3^j: the promoted trials all from 3^(j-1).
    EXPECT_EQ(a[round].size(), round + 1);
    for (const auto& job : a[round]) {
      EXPECT_DOUBLE_EQ(job.budget, std::pow(3.0, static_cast<double>(round)));
      EXPECT_EQ(job.rung, static_cast<int>(round) - (4 - aligned.plan()[job.bracket].s));
    }
  }
  // Brackets are independent: each trains the same trials to the same budgets either way.
  auto key = [](const RungJob& j) { return std::make_pair(j.bracket, j.rung); };
  std::map<std::pair<int, int>, RungJob> by_rung;
  for (const auto& round : t) {
    for (const auto& job : round) by_rung[key(job)] = job;
  }
  std::size_t jobs = 0;
  for (const auto& round : a) {
    for (const auto& job : round) {
      ++jobs;
      const RungJob& same = by_rung.at(key(job));
      EXPECT_EQ(job.trials, same.trials);
      EXPECT_DOUBLE_EQ(job.budget, same.budget);
    }
  }
  EXPECT_EQ(jobs, by_rung.size());
}

TEST(BracketScheduler, IterationsRunTheBracketsAgainWithNewTrialsEachPassAfterTheOneBefore) {
  for (bool align : {true, false}) {
    auto once = make_hyperband(27, 1, 3, Goal::kMaximize, align);
    auto thrice = make_hyperband(27, 1, 3, Goal::kMaximize, align, /*iterations=*/3);
    const std::int64_t pass = once.trial_count();
    EXPECT_EQ(thrice.trial_count(), 3 * pass);
    const Rounds one = drive_rounds(once, id_metric);
    const Rounds three = drive_rounds(thrice, id_metric);
    ASSERT_EQ(three.size(), 3 * one.size()) << align;  // each pass in its own rounds
    const auto plan = thrice.plan();
    const auto brackets = once.plan().size();
    for (std::size_t round = 0; round < three.size(); ++round) {
      const std::size_t k = round / one.size();  // the pass this round belongs to
      const auto& same = one[round % one.size()];
      ASSERT_EQ(three[round].size(), same.size());
      for (std::size_t j = 0; j < same.size(); ++j) {
        const RungJob& job = three[round][j];
        // Pass k repeats pass 0's rungs and promotions, on trial ids k passes on.
        EXPECT_EQ(plan[static_cast<std::size_t>(job.bracket)].iteration, static_cast<int>(k));
        EXPECT_EQ(static_cast<std::size_t>(job.bracket), k * brackets + static_cast<std::size_t>(same[j].bracket));
        EXPECT_EQ(job.rung, same[j].rung);
        EXPECT_DOUBLE_EQ(job.budget, same[j].budget);
        ASSERT_EQ(job.trials.size(), same[j].trials.size());
        for (std::size_t t = 0; t < job.trials.size(); ++t) {
          EXPECT_EQ(job.trials[t].trial_id, same[j].trials[t].trial_id + static_cast<std::int64_t>(k) * pass);
          EXPECT_DOUBLE_EQ(job.trials[t].from_budget, same[j].trials[t].from_budget);
        }
      }
    }
  }
  EXPECT_THROW(make_hyperband(27, 1, 3, Goal::kMaximize, true, 0), std::invalid_argument);
}

TEST(BracketScheduler, ABracketThatEndsEarlyDoesNotHoldTheOthers) {
  auto s = make_hyperband(9, 1, 3, Goal::kMaximize, /*align_ends=*/true);
  auto jobs = s.next_jobs(kAll, 0);
  ASSERT_EQ(jobs.size(), 1u);  // round 0: the longest bracket alone
  EXPECT_EQ(jobs[0].bracket, 0);
  EXPECT_TRUE(s.next_jobs(kAll, 0).empty());  // the next round waits for it
  for (const auto& t : jobs[0].trials) {
    s.report({t.trial_id, jobs[0].budget, 0, TrialStatus::kFailed});
  }
  // Every trial failed, so its bracket is over; the next round starts without it.
  jobs = s.next_jobs(kAll, 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].bracket, 1);
  EXPECT_EQ(jobs[0].rung, 0);
}

TEST(BracketScheduler, RejectsResultsForTrialsNotRunning) {
  auto s = make_hyperband(9, 1, 3, Goal::kMaximize);
  EXPECT_THROW(s.report({0, 1, 1.0}), std::invalid_argument);  // not handed out yet
  s.next_jobs(kAll, 0);
  EXPECT_THROW(s.report({10000, 1, 1.0}), std::invalid_argument);
  EXPECT_NO_THROW(s.report({0, 1, 1.0}));
}

TEST(BracketScheduler, WavesSplitTheFirstRungEvenlyLargestFirst) {
  EXPECT_EQ(wave_end(10, 4, 0), 3);
  EXPECT_EQ(wave_end(10, 4, 1), 5);
  EXPECT_EQ(wave_end(10, 4, 2), 8);
  EXPECT_EQ(wave_end(10, 4, 3), 10);
  EXPECT_EQ(wave_end(10, 1, 0), 10);
  EXPECT_EQ(wave_end(3, 3, 0), 1);
}

TEST(BracketScheduler, SuccessiveHalvingInWavesHandsOutEachOnceTheOneBeforeReportedAndPromotesAsAllAtOnce) {
  const auto bracket = successive_halving_bracket(10, 9, 1, 3);
  BracketScheduler whole({bracket}, Goal::kMaximize);
  BracketScheduler waves({bracket}, Goal::kMaximize, 0, 4);
  // Metrics that do not follow the ids, so the best are spread over the waves.
  auto metric = [](std::int64_t id) { return static_cast<double>((id * 7) % 10); };
  std::vector<std::size_t> sizes;
  std::vector<RungJob> later;
  for (int guard = 0; !waves.finished() && guard < 100; ++guard) {
    auto jobs = waves.next_jobs(kAll, 0);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_TRUE(waves.next_jobs(kAll, 0).empty()) << "a wave handed out before the one before reported";
    if (jobs[0].rung == 0) {
      sizes.push_back(jobs[0].trials.size());
    } else {
      later.push_back(jobs[0]);
    }
    for (const auto& t : jobs[0].trials) waves.report({t.trial_id, jobs[0].budget, metric(t.trial_id)});
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 2, 3, 2}));
  std::vector<RungJob> want;
  for (int guard = 0; !whole.finished() && guard < 100; ++guard) {
    for (const auto& job : whole.next_jobs(kAll, 0)) {
      for (const auto& t : job.trials) whole.report({t.trial_id, job.budget, metric(t.trial_id)});
      if (job.rung > 0) want.push_back(job);
    }
  }
  ASSERT_EQ(later.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(later[i].trials, want[i].trials);
    EXPECT_EQ(later[i].budget, want[i].budget);
  }
}

}  // namespace
}  // namespace hfta::search
