#include <gtest/gtest.h>

#include <vector>

#include "hfta/search/random_forest.h"

namespace hfta::search {
namespace {

// n points of `features` uniform features, from a fixed stream.
std::vector<std::vector<double>> uniform_points(std::size_t n, std::size_t features, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<double>> x(n, std::vector<double>(features));
  for (auto& row : x) {
    for (double& v : row) v = rng.uniform();
  }
  return x;
}

ForestOptions one_whole_tree() {
  ForestOptions o;
  o.trees = 1;
  o.bootstrap = false;
  return o;
}

TEST(RandomForest, AFullTreeWithoutBootstrapFitsEveryDistinctPointExactly) {
  const auto x = uniform_points(60, 3, 1);
  std::vector<double> y;
  for (const auto& row : x) y.push_back(row[0] * row[1] - row[2]);
  const auto forest = fit_forest(x, y, one_whole_tree(), 4);
  ASSERT_EQ(forest.size(), 1u);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(predict(forest[0], x[i]), y[i]) << "row " << i;
}

TEST(RandomForest, TheRootSplitsTheStepAtTheMidpointBetweenItsNeighbours) {
  // y steps from 0 to 1 between x1 = 0.4 and 0.6; the other features are noise-free constants.
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (double v : {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}) {
    x.push_back({0.5, v, 0.25});
    y.push_back(v > 0.5 ? 1.0 : 0.0);
  }
  const auto tree = fit_forest(x, y, one_whole_tree(), 0).front();
  ASSERT_EQ(tree.nodes.size(), 3u);  // one split, two pure leaves
  EXPECT_EQ(tree.nodes[0].feature, 1);
  EXPECT_DOUBLE_EQ(tree.nodes[0].threshold, 0.5);
  EXPECT_EQ(tree.nodes[static_cast<std::size_t>(tree.nodes[0].left)].value, 0.0);
  EXPECT_EQ(tree.nodes[static_cast<std::size_t>(tree.nodes[0].right)].value, 1.0);
}

TEST(RandomForest, ConstantTargetsGiveOneLeafAndDepthAndLeafSizeLimitTheTree) {
  const auto x = uniform_points(40, 2, 2);
  const auto flat = fit_forest(x, std::vector<double>(40, 3.0), one_whole_tree(), 0).front();
  ASSERT_EQ(flat.nodes.size(), 1u);
  EXPECT_EQ(flat.nodes[0].value, 3.0);

  std::vector<double> y;
  for (const auto& row : x) y.push_back(row[0] + row[1]);
  ForestOptions stump = one_whole_tree();
  stump.max_depth = 1;
  EXPECT_EQ(fit_forest(x, y, stump, 0).front().nodes.size(), 3u);
  // With at least 15 rows a leaf, 40 rows split once, into two of 15 to 25 that cannot split again.
  ForestOptions coarse = one_whole_tree();
  coarse.min_samples_leaf = 15;
  EXPECT_EQ(fit_forest(x, y, coarse, 0).front().nodes.size(), 3u);
}

TEST(RandomForest, ABootstrapForestIsAPureFunctionOfItsSeed) {
  const auto x = uniform_points(50, 2, 3);
  std::vector<double> y;
  for (const auto& row : x) y.push_back(row[0] - 2 * row[1]);
  const auto a = fit_forest(x, y, ForestOptions{}, 7), b = fit_forest(x, y, ForestOptions{}, 7);
  const auto c = fit_forest(x, y, ForestOptions{}, 8);
  ASSERT_EQ(a.size(), 64u);
  bool some_differ = false;
  for (std::size_t t = 0; t < a.size(); ++t) {
    ASSERT_EQ(a[t].nodes.size(), b[t].nodes.size());
    for (std::size_t i = 0; i < a[t].nodes.size(); ++i) {
      EXPECT_EQ(a[t].nodes[i].threshold, b[t].nodes[i].threshold);
      EXPECT_EQ(a[t].nodes[i].value, b[t].nodes[i].value);
    }
    some_differ = some_differ || predict(a[t], {0.3, 0.3}) != predict(c[t], {0.3, 0.3});
  }
  EXPECT_TRUE(some_differ);  // another seed draws other bootstrap samples
  // The average of the trees predicts the function well inside the data.
  double mean = 0;
  for (const auto& tree : a) mean += predict(tree, {0.5, 0.25});
  EXPECT_NEAR(mean / 64, 0.0, 0.15);
}

}  // namespace
}  // namespace hfta::search
