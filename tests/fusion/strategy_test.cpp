// Choosing an op's strategy times both on a clock; here the clock is simulated,
// so the test times nothing.
#include <gtest/gtest.h>

#include "hfta/fusion/strategy.h"

namespace hfta::fusion {
namespace {

// Runs choose_strategy on candidates whose steps take the given simulated
// seconds, and counts how often each ran (a warm-up included).
struct Simulated {
  double clock = 0;
  std::vector<int> runs;
  StrategyChoice choose(const std::vector<std::pair<Strategy, double>>& seconds) {
    runs.assign(seconds.size(), 0);
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < seconds.size(); ++i) {
      candidates.push_back({seconds[i].first, [this, i, t = seconds[i].second] { clock += t, ++runs[i]; }});
    }
    return choose_strategy(candidates, 5, [this] { return clock; });
  }
  StrategyChoice choose(double fused_seconds, double per_model_seconds) {
    return choose({{Strategy::kFused, fused_seconds}, {Strategy::kPerModel, per_model_seconds}});
  }
};

TEST(ChooseStrategy, KeepsTheFasterAndStopsEarlyWhenOneClearlyWins) {
  Simulated s;
  const StrategyChoice choice = s.choose(0.010, 0.020);
  EXPECT_EQ(choice.strategy, Strategy::kFused);
  EXPECT_DOUBLE_EQ(choice.seconds_of(Strategy::kFused), 0.010);
  EXPECT_DOUBLE_EQ(choice.seconds_of(Strategy::kPerModel), 0.020);
  EXPECT_EQ(s.runs, (std::vector<int>{1 + 2, 1 + 2}));
}

TEST(ChooseStrategy, StopsEarlyWhenBothTie) {
  Simulated s;  // 8% apart: more repeats would refine a choice worth little
  EXPECT_EQ(s.choose(0.108, 0.100).strategy, Strategy::kPerModel);
  EXPECT_EQ(s.runs[0], 1 + 2);
}

TEST(ChooseStrategy, RepeatsWhereTheGapIsNeitherClearNorSmall) {
  Simulated s;  // 15% apart: all five repeats
  EXPECT_EQ(s.choose(0.115, 0.100).strategy, Strategy::kPerModel);
  EXPECT_EQ(s.runs[0], 1 + 5);
  Simulated equal;  // an exact tie goes to the earlier candidate
  EXPECT_EQ(equal.choose(0.125, 0.125).strategy, Strategy::kFused);  // exact in binary
}

TEST(Strategy, NamesRoundTripAndSayWhatTheyAre) {
  for (Strategy s : {Strategy::kFused, Strategy::kPerModel}) EXPECT_EQ(strategy_from_string(to_string(s)), s);
  EXPECT_TRUE(grouped(Strategy::kFused));
  EXPECT_FALSE(grouped(Strategy::kPerModel));
  EXPECT_THROW(strategy_from_string("sideways"), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
