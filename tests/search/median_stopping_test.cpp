#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>

#include "hfta/search/median_stopping.h"

namespace hfta::search {
namespace {

TEST(MedianStopping, StopsTrialsWorseThanTheMedianAfterTheGrace) {
  MedianStopping rule(Goal::kMaximize, /*grace_budget=*/2, /*min_trials=*/3);
  // Three trials with accuracies rising to 0.8, 0.7, 0.6 over budgets 1..4.
  for (int b = 1; b <= 4; ++b) {
    EXPECT_FALSE(rule.report(0, b, 0.5 + 0.075 * b));
    EXPECT_FALSE(rule.report(1, b, 0.4 + 0.075 * b));
    EXPECT_FALSE(rule.report(2, b, 0.3 + 0.075 * b));
  }
  // A bad trial is not stopped inside the grace budget...
  EXPECT_FALSE(rule.report(3, 1, 0.1));
  // ...but at budget 2 its best (0.15) is below the median running average (0.5125).
  EXPECT_TRUE(rule.report(3, 2, 0.15));
  // A good one continues.
  EXPECT_FALSE(rule.report(4, 1, 0.7));
  EXPECT_FALSE(rule.report(4, 2, 0.75));
}

TEST(MedianStopping, NeedsEnoughOtherTrials) {
  MedianStopping rule(Goal::kMinimize, 1, 3);
  rule.report(0, 1, 0.1);
  rule.report(1, 1, 0.1);
  EXPECT_FALSE(rule.report(2, 1, 5.0));  // only two others reached budget 1
  EXPECT_TRUE(rule.report(3, 1, 5.0));   // now three: 0.1, 0.1, 5.0 -> median 0.1
}

// Drives a MedianStoppingScheduler to the end; `metric(id, budget)` is what each
// trial reports, in the order `order` gives each step's results.
std::map<std::int64_t, double> reached(MedianStoppingScheduler& s, double (*metric)(std::int64_t, double),
                                       bool reversed) {
  std::map<std::int64_t, double> out;
  while (!s.finished()) {
    const auto jobs = s.next_jobs(1, 0);
    EXPECT_EQ(jobs.size(), 1u);
    auto trials = jobs.at(0).trials;
    if (reversed) std::reverse(trials.begin(), trials.end());
    for (const auto& t : trials) {
      s.report({t.trial_id, jobs[0].budget, metric(t.trial_id, jobs[0].budget), TrialStatus::kCompleted});
      out[t.trial_id] = jobs[0].budget;
    }
  }
  return out;
}

TEST(MedianStoppingScheduler, TrialsBehindTheMedianStopAtAStepWhateverTheOrderOfResults) {
  // Six trials, budgets 2, 4, 6, 8, 9. Trial t's accuracy is t/10 + budget/100:
  // at the first step, 0-2 are behind the median of the others and stop; 3-5
  // then have two others each that reached the budget, fewer than the rule's
  // three, and go on to the full budget.
  auto metric = [](std::int64_t id, double budget) { return 0.1 * static_cast<double>(id) + budget / 100; };
  MedianStoppingScheduler forward(6, 9, 2, Goal::kMaximize), backward(6, 9, 2, Goal::kMaximize);
  const auto plan = forward.plan()[0].rungs;
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan.back(), (RungPlan{6, 9}));
  const auto a = reached(forward, metric, false), b = reached(backward, metric, true);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, (std::map<std::int64_t, double>{{0, 2}, {1, 2}, {2, 2}, {3, 9}, {4, 9}, {5, 9}}));
}

TEST(MedianStoppingScheduler, WavesTrainOneAfterAnotherAndALaterWaveIsJudgedByTheEarlierCurvesToo) {
  // Six trials in two waves of three, budgets 1, 2, 3: the first wave trains to
  // the end (nobody stops: fewer than three others at each step), then the
  // second, whose trial 5 falls behind the median of the five others.
  MedianStoppingScheduler s(6, 3, 1, Goal::kMaximize, 2);
  auto metric = [](std::int64_t id, double b) { return id == 5 ? 0.1 : 0.5 + 0.01 * static_cast<double>(id) + 0.1 * b; };
  std::vector<std::vector<std::int64_t>> steps;
  while (!s.finished()) {
    auto jobs = s.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
    ASSERT_EQ(jobs.size(), 1u);
    std::vector<std::int64_t> ids;
    for (const auto& t : jobs[0].trials) {
      ids.push_back(t.trial_id);
      s.report({t.trial_id, jobs[0].budget, metric(t.trial_id, jobs[0].budget)});
    }
    steps.push_back(ids);
  }
  const std::vector<std::vector<std::int64_t>> want = {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {3, 4, 5}, {3, 4}, {3, 4}};
  EXPECT_EQ(steps, want);
}

}  // namespace
}  // namespace hfta::search
