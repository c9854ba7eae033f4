// Choosing an op's strategy times both on a clock; here the clock is simulated,
// so the test times nothing.
#include <gtest/gtest.h>

#include "hfta/fusion/strategy.h"

namespace hfta::fusion {
namespace {

// Runs choose_strategy on steps that take the given simulated seconds, and
// counts how often each ran (a warm-up included).
struct Simulated {
  double clock = 0;
  int fused_runs = 0, per_model_runs = 0;
  StrategyChoice choose(double fused_seconds, double per_model_seconds) {
    return choose_strategy([&] { clock += fused_seconds, ++fused_runs; },
                           [&] { clock += per_model_seconds, ++per_model_runs; }, 5, [this] { return clock; });
  }
};

TEST(ChooseStrategy, KeepsTheFasterAndStopsEarlyWhenOneClearlyWins) {
  Simulated s;
  const StrategyChoice choice = s.choose(0.010, 0.020);
  EXPECT_EQ(choice.strategy, Strategy::kFused);
  EXPECT_DOUBLE_EQ(choice.fused_seconds, 0.010);
  EXPECT_DOUBLE_EQ(choice.per_model_seconds, 0.020);
  EXPECT_EQ(s.fused_runs, 1 + 2);
  EXPECT_EQ(s.per_model_runs, 1 + 2);
}

TEST(ChooseStrategy, StopsEarlyWhenBothTie) {
  Simulated s;  // 8% apart: more repeats would refine a choice worth little
  EXPECT_EQ(s.choose(0.108, 0.100).strategy, Strategy::kPerModel);
  EXPECT_EQ(s.fused_runs, 1 + 2);
}

TEST(ChooseStrategy, RepeatsWhereTheGapIsNeitherClearNorSmall) {
  Simulated s;  // 15% apart: all five repeats
  EXPECT_EQ(s.choose(0.115, 0.100).strategy, Strategy::kPerModel);
  EXPECT_EQ(s.fused_runs, 1 + 5);
  Simulated equal;  // an exact tie goes to the fused kernel
  EXPECT_EQ(equal.choose(0.125, 0.125).strategy, Strategy::kFused);  // exact in binary
}

}  // namespace
}  // namespace hfta::fusion
