// Golden Hyperband tables (Li et al., JMLR 2018) and successive halving.
#include <gtest/gtest.h>

#include <cmath>

#include "hfta/search/brackets.h"

namespace hfta::search {
namespace {

using Table = std::vector<std::vector<std::pair<std::int64_t, double>>>;

void expect_table(const std::vector<BracketPlan>& got, const Table& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t b = 0; b < want.size(); ++b) {
    SCOPED_TRACE("bracket " + std::to_string(b));
    EXPECT_EQ(got[b].s, static_cast<int>(want.size() - 1 - b));
    ASSERT_EQ(got[b].rungs.size(), want[b].size());
    for (std::size_t i = 0; i < want[b].size(); ++i) {
      EXPECT_EQ(got[b].rungs[i].n, want[b][i].first) << "rung " << i;
      EXPECT_DOUBLE_EQ(got[b].rungs[i].r, want[b][i].second) << "rung " << i;
    }
  }
}

TEST(Hyperband, R81Eta3) {
  expect_table(hyperband_brackets(81, 1, 3), {
                                                 {{81, 1}, {27, 3}, {9, 9}, {3, 27}, {1, 81}},
                                                 {{34, 3}, {11, 9}, {3, 27}, {1, 81}},
                                                 {{15, 9}, {5, 27}, {1, 81}},
                                                 {{8, 27}, {2, 81}},
                                                 {{5, 81}},
                                             });
}

TEST(Hyperband, R27Eta3) {
  expect_table(hyperband_brackets(27, 1, 3), {
                                                 {{27, 1}, {9, 3}, {3, 9}, {1, 27}},
                                                 {{12, 3}, {4, 9}, {1, 27}},
                                                 {{6, 9}, {2, 27}},
                                                 {{4, 27}},
                                             });
}

TEST(Hyperband, R8Eta2) {
  expect_table(hyperband_brackets(8, 1, 2), {
                                                {{8, 1}, {4, 2}, {2, 4}, {1, 8}},
                                                {{6, 2}, {3, 4}, {1, 8}},
                                                {{4, 4}, {2, 8}},
                                                {{4, 8}},
                                            });
}

TEST(Hyperband, RNotAPowerOfEta) {
  const double R = 100;
  expect_table(hyperband_brackets(100, 1, 3),
               {
                   {{81, R / 81}, {27, R / 27}, {9, R / 9}, {3, R / 3}, {1, R}},
                   {{34, R / 27}, {11, R / 9}, {3, R / 3}, {1, R}},
                   {{15, R / 9}, {5, R / 3}, {1, R}},
                   {{8, R / 3}, {2, R}},
                   {{5, R}},
               });
}

TEST(Hyperband, MinimumBudgetAboveOne) {
  const double R = 100;
  expect_table(hyperband_brackets(100, 10, 3), {
                                                   {{9, R / 9}, {3, R / 3}, {1, R}},
                                                   {{5, R / 3}, {1, R}},
                                                   {{3, R}},
                                               });
}

TEST(Hyperband, SMaxInIntegerArithmetic) {
  // log(243)/log(3) is 4.999... in floating point: a float floor would lose a bracket.
  EXPECT_LT(std::log(243.0) / std::log(3.0), 5.0);
  EXPECT_EQ(hyperband_s_max(243, 1, 3), 5);
  EXPECT_EQ(hyperband_brackets(243, 1, 3).size(), 6u);
  EXPECT_EQ(hyperband_s_max(242, 1, 3), 4);
  EXPECT_EQ(hyperband_s_max(1000, 1, 10), 3);
  EXPECT_EQ(hyperband_s_max(999, 1, 10), 2);
  EXPECT_EQ(hyperband_s_max(5, 5, 3), 0);
  EXPECT_EQ(hyperband_s_max(std::int64_t(1) << 40, 1, 2), 40);
  EXPECT_THROW(hyperband_s_max(10, 1, 1), std::invalid_argument);
  EXPECT_THROW(hyperband_s_max(1, 2, 3), std::invalid_argument);
}

TEST(Hyperband, BudgetTotals) {
  const auto brackets = hyperband_brackets(81, 1, 3);
  // sum n_i r_i over the golden table, bracket by bracket.
  EXPECT_DOUBLE_EQ(total_budget(brackets), (81 * 1 + 27 * 3 + 9 * 9 + 3 * 27 + 1 * 81) +
                                               (34 * 3 + 11 * 9 + 3 * 27 + 1 * 81) +
                                               (15 * 9 + 5 * 27 + 1 * 81) + (8 * 27 + 2 * 81) +
                                               5 * 81);
  // With checkpoint resume, bracket s=4 trains 81*1 + 27*2 + 9*6 + 3*18 + 1*54.
  const std::vector<BracketPlan> one = {brackets[0]};
  EXPECT_DOUBLE_EQ(trained_budget(one), 81 + 54 + 54 + 54 + 54);
  EXPECT_DOUBLE_EQ(total_budget(one), 81 + 81 + 81 + 81 + 81);
}

TEST(SuccessiveHalving, OneBracketFromTrials) {
  const auto b = successive_halving_bracket(27, 27, 1, 3);
  ASSERT_EQ(b.rungs.size(), 4u);
  EXPECT_EQ(b.rungs[0], (RungPlan{27, 1}));
  EXPECT_EQ(b.rungs[1], (RungPlan{9, 3}));
  EXPECT_EQ(b.rungs[2], (RungPlan{3, 9}));
  EXPECT_EQ(b.rungs[3], (RungPlan{1, 27}));
  // Too few trials for the top rungs: the best one still goes on to the full budget.
  const auto small = successive_halving_bracket(5, 27, 1, 3);
  ASSERT_EQ(small.rungs.size(), 4u);
  EXPECT_EQ(small.rungs[1], (RungPlan{1, 3}));
  EXPECT_EQ(small.rungs[3], (RungPlan{1, 27}));
}

}  // namespace
}  // namespace hfta::search
