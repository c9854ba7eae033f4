#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hfta::search
