// ASHA's rung rule and the batching of near-simultaneous promotions.
#include <gtest/gtest.h>

#include <limits>

#include "hfta/search/asha_scheduler.h"

namespace hfta::search {
namespace {

std::vector<std::int64_t> ids(const RungJob& job) {
  std::vector<std::int64_t> out;
  for (const auto& t : job.trials) out.push_back(t.trial_id);
  return out;
}

TEST(Asha, PlanHasRungsUpToTheFullBudget) {
  AshaScheduler s(27, 27, 1, 3, Goal::kMaximize, 0);
  const auto plan = s.plan();
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_EQ(plan[0].rungs.size(), 4u);
  EXPECT_EQ(plan[0].rungs[0], (RungPlan{27, 1}));
  EXPECT_EQ(plan[0].rungs[3], (RungPlan{1, 27}));
}

TEST(Asha, WithFewerTrialsThanEtaARungsBestStillGoesOnOnceNoMoreCanArrive) {
  // Five trials, budgets 1 to 27, eta 3: one reaches 3; that rung of one then
  // gets no more results, so its best goes on, and so on to 27.
  AshaScheduler s(5, 27, 1, 3, Goal::kMaximize, 0);
  double top = 0;
  for (int round = 0; round < 10 && !s.finished(); ++round) {
    for (const auto& job : s.next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
      for (const auto& t : job.trials) {
        s.report({t.trial_id, job.budget, 0.1 * static_cast<double>(t.trial_id), TrialStatus::kCompleted});
        top = std::max(top, job.budget);
      }
    }
  }
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(top, 27);
  EXPECT_EQ(s.plan()[0].rungs[3], (RungPlan{1, 27}));
}

// The scheduler remembers what each rung may promote between changes of its
// state (the progress line asks may_train_again of every trial at every
// redraw): a scheduler asked after every call answers as one rebuilt from the
// same calls and asked once, whose memory is fresh, at every point of a sweep
// with one worker, waves and uneven results.
TEST(Asha, RememberedAnswersAreTheAnswersOfAFreshScheduler) {
  const std::int64_t trials = 20;
  auto make = [&] { return AshaScheduler(trials, 27, 1, 3, Goal::kMinimize, 0, 2); };
  auto metric = [](std::int64_t id, double budget) { return static_cast<double>((id * 7) % 11) / budget; };
  struct Call {
    std::size_t capacity;  // a next_jobs call, or
    TrialResult result;    // (capacity 0) a report
  };
  std::vector<Call> calls;
  AshaScheduler asked = make();
  auto answers = [&](const AshaScheduler& s) {
    std::vector<bool> out;
    for (std::int64_t id = 0; id < trials; ++id) out.push_back(s.may_train_again(id));
    out.push_back(s.finished());
    return out;
  };
  auto replayed = [&] {
    AshaScheduler fresh = make();
    for (const auto& c : calls) {
      if (c.capacity) fresh.next_jobs(c.capacity, 0); else fresh.report(c.result);
    }
    return answers(fresh);
  };
  int checked = 0;
  for (int guard = 0; guard < 200 && !asked.finished(); ++guard) {
    const std::size_t capacity = 1 + static_cast<std::size_t>(guard % 3);
    calls.push_back({capacity, {}});
    for (const auto& job : asked.next_jobs(capacity, 0)) {
      ASSERT_EQ(answers(asked), replayed()) << "after next_jobs, call " << calls.size();
      for (const auto& t : job.trials) {
        const TrialResult r{t.trial_id, job.budget, metric(t.trial_id, job.budget), TrialStatus::kCompleted};
        asked.report(r);
        calls.push_back({0, r});
        ASSERT_EQ(answers(asked), replayed()) << "after report, call " << calls.size();
        ++checked;
      }
    }
  }
  EXPECT_TRUE(asked.finished());
  EXPECT_GT(checked, static_cast<int>(trials));  // promotions happened
}

TEST(Asha, PromotesTheTopThirdNotYetPromoted) {
  // One worker: ASHA asks for work after every result.
  AshaScheduler s(9, 9, 1, 3, Goal::kMaximize, 0);
  const double metric[] = {0.5, 0.9, 0.1, 0.3, 0.95, 0.2, 0.8, 0.7, 0.6};
  std::vector<std::pair<int, std::int64_t>> order;  // (rung, id) as handed out
  for (int guard = 0; !s.finished() && guard < 100; ++guard) {
    auto jobs = s.next_jobs(1, 0);
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_EQ(jobs[0].trials.size(), 1u);
    const auto t = jobs[0].trials[0];
    order.push_back({jobs[0].rung, t.trial_id});
    // A promoted trial resumes from the budget of the rung it was promoted from.
    if (jobs[0].rung > 0) EXPECT_DOUBLE_EQ(t.from_budget, jobs[0].rung == 1 ? 1 : 3);
    s.report({t.trial_id, jobs[0].budget, metric[t.trial_id] + jobs[0].rung});
  }
  ASSERT_TRUE(s.finished());
  // Worked by hand from the rule "promote the top floor(|rung|/3) not yet promoted".
  const std::vector<std::pair<int, std::int64_t>> want = {
      {0, 0}, {0, 1}, {0, 2},
      {1, 1},  // |rung 0| = 3: the best, 1 (0.9), goes up
      {0, 3}, {0, 4},
      {1, 4},  // |rung 0| = 5: 4 (0.95) is now the best and not yet promoted
      {0, 5}, {0, 6}, {0, 7}, {0, 8},
      {1, 6},  // |rung 0| = 9: the top 3 are 4, 1 and 6 (0.8)
      {2, 4},  // |rung 1| = 3: its best, 4 (1.95), reaches the full budget
  };
  EXPECT_EQ(order, want);
  EXPECT_EQ(std::count_if(order.begin(), order.end(), [](auto& p) { return p.first == 2; }), 1);
}

TEST(Asha, BatchesPromotionsThatBecomePossibleWithinTheWait) {
  AshaScheduler s(9, 9, 1, 3, Goal::kMaximize, /*promotion_wait=*/1.0);
  auto start = s.next_jobs(6, 0.0);  // trials 0..5 at rung 0
  ASSERT_EQ(start.size(), 1u);
  ASSERT_EQ(ids(start[0]), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  for (std::int64_t id = 0; id < 3; ++id) s.report({id, 1, static_cast<double>(id)});
  // Trial 2 is promotable at t=0.2, but is held for the wait.
  auto jobs = s.next_jobs(3, 0.2);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].rung, 0);  // capacity goes to new trials meanwhile
  EXPECT_EQ(s.promotable_count(), 1u);
  EXPECT_DOUBLE_EQ(s.next_release_time(), 1.2);
  for (std::int64_t id = 3; id < 6; ++id) s.report({id, 1, static_cast<double>(id)});
  // Trial 5 becomes promotable at t=0.7 (quota 2: 5 and 4; 2 lost its place).
  jobs = s.next_jobs(0, 0.7);
  EXPECT_TRUE(jobs.empty());
  EXPECT_DOUBLE_EQ(s.next_release_time(), 1.7);
  EXPECT_TRUE(s.next_jobs(4, 1.2).empty() || s.next_jobs(0, 1.2).empty());
  jobs = s.next_jobs(4, 1.7);
  ASSERT_GE(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].rung, 1);
  EXPECT_EQ(ids(jobs[0]), (std::vector<std::int64_t>{4, 5}));  // one array for both
}

TEST(Asha, FinishesWhenEveryTrialIsDone) {
  AshaScheduler s(2, 9, 1, 3, Goal::kMinimize, 0);
  auto jobs = s.next_jobs(10, 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_FALSE(s.finished());
  for (const auto& t : jobs[0].trials) s.report({t.trial_id, 1, 1.0 + static_cast<double>(t.trial_id)});
  // Two results: quota floor(2/3) = 0, but the rung is closed: its best, trial
  // 0 (minimised), goes on to 3, then to 9, and the sweep is done.
  EXPECT_FALSE(s.finished());
  for (double budget : {3.0, 9.0}) {
    jobs = s.next_jobs(10, 0);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].budget, budget);
    EXPECT_EQ(ids(jobs[0]), (std::vector<std::int64_t>{0}));
    s.report({0, budget, 1.0});
  }
  EXPECT_TRUE(s.finished());
  EXPECT_THROW(s.report({0, 9, 1.0}), std::invalid_argument);
}

TEST(Asha, WavesStartOnceEveryEarlierTrialHasABottomResultWhilePromotionsGoOn) {
  // Nine trials in three waves, budgets 1, 3, 9, no wait: wave 0 is trials 0-2.
  AshaScheduler s(9, 9, 1, 3, Goal::kMaximize, 0, 3);
  auto first = s.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(ids(first[0]), (std::vector<std::int64_t>{0, 1, 2}));
  s.report({0, 1, 0.5, TrialStatus::kCompleted});
  // Trials 1 and 2 still train at the bottom: no new wave, and trial 0 alone
  // (one result) is not promoted yet.
  EXPECT_TRUE(s.next_jobs(std::numeric_limits<std::size_t>::max(), 0).empty());
  s.report({1, 1, 0.9, TrialStatus::kCompleted});
  s.report({2, 1, 0.1, TrialStatus::kCompleted});
  // Three bottom results: the best (trial 1) goes up, and wave 1 starts.
  auto second = s.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].rung, 1);
  EXPECT_EQ(ids(second[0]), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(second[1].rung, 0);
  EXPECT_EQ(ids(second[1]), (std::vector<std::int64_t>{3, 4, 5}));
  // A wave cut short by capacity goes on at the next call, even while its first part trains.
  AshaScheduler cut(9, 9, 1, 3, Goal::kMaximize, 0, 3);
  EXPECT_EQ(ids(cut.next_jobs(2, 0).at(0)), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(ids(cut.next_jobs(5, 0).at(0)), (std::vector<std::int64_t>{2}));
  EXPECT_TRUE(cut.next_jobs(5, 0).empty());
  // More waves than trials: one trial a wave, and it still finishes.
  AshaScheduler few(2, 9, 1, 3, Goal::kMaximize, 0, 5);
  for (int round = 0; round < 10 && !few.finished(); ++round) {
    for (const auto& job : few.next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
      EXPECT_FALSE(job.trials.empty());
      for (const auto& t : job.trials) few.report({t.trial_id, job.budget, 0.5, TrialStatus::kCompleted});
    }
  }
  EXPECT_TRUE(few.finished());
}

}  // namespace
}  // namespace hfta::search
