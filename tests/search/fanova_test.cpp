#include <gtest/gtest.h>

#include <vector>

#include "hfta/search/fanova.h"

namespace hfta::search {
namespace {

// x0 <= 0.5: 0; else x1 <= 0.5: 1, else 3 (over [0, 1]^2). By hand: the mean
// is 0.5*0 + 0.25*1 + 0.25*3 = 1 and the variance 0.5*1 + 0.25*0 + 0.25*4 =
// 1.5; x0's marginal is 0 then 2 (variance 1), x1's 0.5 then 1.5 (variance
// 0.25); the other 0.25 is their interaction.
RegressionTree two_split_tree(double first_split = 0.5) {
  RegressionTree t;
  t.nodes.resize(5);
  t.nodes[0] = {0, first_split, 1, 2, 0};
  t.nodes[1].value = 0;
  t.nodes[2] = {1, 0.5, 3, 4, 0};
  t.nodes[3].value = 1;
  t.nodes[4].value = 3;
  return t;
}

TEST(Fanova, ATreesMeanVarianceAndMainEffectsAreExact) {
  const TreeAnova a = tree_anova(two_split_tree(), {{0, 1}, {0, 1}});
  EXPECT_DOUBLE_EQ(a.mean, 1.0);
  EXPECT_DOUBLE_EQ(a.variance, 1.5);
  ASSERT_EQ(a.main_effects.size(), 2u);
  EXPECT_DOUBLE_EQ(a.main_effects[0], 1.0);
  EXPECT_DOUBLE_EQ(a.main_effects[1], 0.25);
  // Only shares of the box count: the same tree stretched over [0, 4] x [-1, 2], split at the middles.
  RegressionTree stretched = two_split_tree(2.0);
  stretched.nodes[2].threshold = 0.5;
  const TreeAnova b = tree_anova(stretched, {{0, 4}, {-1, 2}});
  EXPECT_DOUBLE_EQ(b.variance, 1.5);
  EXPECT_DOUBLE_EQ(b.main_effects[0], 1.0);
  EXPECT_DOUBLE_EQ(b.main_effects[1], 0.25);
}

TEST(Fanova, ASplitOutsideTheBoxAndAFeatureOfOnePointHaveNoEffect) {
  // x0's split at 1.5 leaves the whole [0, 1] box to its left leaf: a constant tree.
  const TreeAnova outside = tree_anova(two_split_tree(1.5), {{0, 1}, {0, 1}});
  EXPECT_DOUBLE_EQ(outside.mean, 0.0);
  EXPECT_DOUBLE_EQ(outside.variance, 0.0);
  EXPECT_EQ(outside.main_effects, (std::vector<double>{0.0, 0.0}));
  // x0 fixed at 0.75: only x1's split is left, which explains everything.
  const TreeAnova point = tree_anova(two_split_tree(), {{0.75, 0.75}, {0, 1}});
  EXPECT_DOUBLE_EQ(point.mean, 2.0);
  EXPECT_DOUBLE_EQ(point.variance, 1.0);
  EXPECT_DOUBLE_EQ(point.main_effects[0], 0.0);
  EXPECT_DOUBLE_EQ(point.main_effects[1], 1.0);
  EXPECT_FALSE(forest_main_effects({two_split_tree(1.5)}, {{0, 1}, {0, 1}}).has_value());
}

TEST(Fanova, AForestOfAnAdditiveFunctionSplitsItsVarianceAsTheFunctionDoes) {
  // y = 3 u0 + u1 with u uniform on [0, 1]: variances 9/12 and 1/12, no
  // interaction, and u2 plays no part: main effects 0.9, 0.1 and 0.
  Rng rng(5);
  std::vector<std::vector<double>> x(600, std::vector<double>(3));
  std::vector<double> y;
  for (auto& row : x) {
    for (double& v : row) v = rng.uniform();
    y.push_back(3 * row[0] + row[1]);
  }
  const auto effects = forest_main_effects(fit_forest(x, y, ForestOptions{}, 1), {{0, 1}, {0, 1}, {0, 1}});
  ASSERT_TRUE(effects.has_value());
  EXPECT_NEAR((*effects)[0], 0.9, 0.03);
  EXPECT_NEAR((*effects)[1], 0.1, 0.03);
  EXPECT_LT((*effects)[2], 0.01);
  EXPECT_NEAR((*effects)[0] + (*effects)[1] + (*effects)[2], 1.0, 0.05);  // additive: hardly any interaction
}

}  // namespace
}  // namespace hfta::search
