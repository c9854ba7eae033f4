#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

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

// Whether a trial whose only result is `metric` at budget 1 stops, beside
// others with results `others` there (their running averages).
bool stops(Goal goal, StoppingRule rule, const std::vector<double>& others, double metric) {
  MedianStopping r(goal, rule);
  for (std::size_t i = 0; i < others.size(); ++i) r.record(static_cast<std::int64_t>(i), 1, others[i]);
  r.record(99, 1, metric);
  return r.should_stop(99, 1);
}

TEST(MedianStopping, APercentileIsCountedFromTheBestAndInterpolatedAsNumPys) {
  const std::vector<double> others = {0.3, 0.1, 0.5, 0.2, 0.4};
  // Maximizing, the top 25%: NumPy's percentile(others, 75) = 0.4; a trial
  // must be at least as good.
  EXPECT_TRUE(stops(Goal::kMaximize, {1, 3, 25}, others, 0.39));
  EXPECT_FALSE(stops(Goal::kMaximize, {1, 3, 25}, others, 0.4));
  // The top 30%: percentile(others, 70) = 0.38, between the second and third best.
  EXPECT_TRUE(stops(Goal::kMaximize, {1, 3, 30}, others, 0.375));
  EXPECT_FALSE(stops(Goal::kMaximize, {1, 3, 30}, others, 0.385));
  // Minimizing, the best 30% are the smallest: percentile(others, 30) = 0.22.
  EXPECT_TRUE(stops(Goal::kMinimize, {1, 3, 30}, others, 0.225));
  EXPECT_FALSE(stops(Goal::kMinimize, {1, 3, 30}, others, 0.215));
  // 50 is the median rule (of an even count, the mean of the middle two: 0.25).
  EXPECT_TRUE(stops(Goal::kMaximize, {1, 3, 50}, {0.1, 0.2, 0.3, 0.4}, 0.24));
  EXPECT_FALSE(stops(Goal::kMaximize, {1, 3, 50}, {0.1, 0.2, 0.3, 0.4}, 0.26));
  // 100 stops only a trial worse than every other.
  EXPECT_TRUE(stops(Goal::kMaximize, {1, 3, 100}, others, 0.09));
  EXPECT_FALSE(stops(Goal::kMaximize, {1, 3, 100}, others, 0.1));
  EXPECT_THROW(MedianStopping(Goal::kMaximize, StoppingRule{1, 3, 0}), std::invalid_argument);
  EXPECT_THROW(MedianStopping(Goal::kMaximize, StoppingRule{1, 3, 101}), std::invalid_argument);
}

TEST(MedianStopping, GraceAndTheOthersNeededAreTheRulesSettings) {
  const std::vector<double> others = {0.3, 0.1, 0.5, 0.2, 0.4};
  EXPECT_TRUE(stops(Goal::kMaximize, {1, 5, 50}, others, 0.0));
  EXPECT_FALSE(stops(Goal::kMaximize, {1, 6, 50}, others, 0.0));   // five others, six needed
  EXPECT_FALSE(stops(Goal::kMaximize, {1.5, 3, 50}, others, 0.0));  // budget 1 is inside the grace
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

TEST(MedianStoppingScheduler, TheRulesGraceAndOthersNeededApartFromTheSteps) {
  // As above, in steps of 2, but no trial stops before budget 4, and two
  // others suffice: 0-2 stop at 4 (not 2); at 6, trial 3's best (0.36) is
  // behind the median of 4's and 5's running averages (0.44, 0.54); at 8,
  // 4 and 5 have one other each and go on.
  auto metric = [](std::int64_t id, double budget) { return 0.1 * static_cast<double>(id) + budget / 100; };
  MedianStoppingScheduler s(6, 9, 2, Goal::kMaximize, StoppingRule{4, 2, 50});
  EXPECT_EQ(reached(s, metric, false),
            (std::map<std::int64_t, double>{{0, 4}, {1, 4}, {2, 4}, {3, 6}, {4, 9}, {5, 9}}));
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
