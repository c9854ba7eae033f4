// Regression trees and random forests (Breiman's), fitted by least squares as
// scikit-learn's RandomForestRegressor: the model fANOVA decomposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hfta/search/rng.h"

namespace hfta::search {

/// A binary tree of axis-aligned splits: a point goes left where its
/// feature is at most the threshold.
struct RegressionTree {
  struct Node {
    int feature = -1;  ///< -1: a leaf
    double threshold = 0;
    int left = -1, right = -1;  ///< children's indexes into nodes
    double value = 0;           ///< the mean of the training targets that reached it
  };
  std::vector<Node> nodes;  ///< nodes[0] is the root
};

/// How trees grow (scikit-learn's defaults as Optuna's fANOVA sets them).
struct ForestOptions {
  int trees = 64;
  int max_depth = 64;
  std::size_t min_samples_split = 2;
  std::size_t min_samples_leaf = 1;
  bool bootstrap = true;  ///< each tree from n draws with replacement of the n points
};

/// One tree over `x` (rows of features) and `y`, of the rows in `rows` (a
/// row may come more than once). Each node splits where the squared error
/// falls the most, trying the features in an order `rng` shuffles (the
/// first best split wins), at the midpoint between two distinct values.
RegressionTree fit_tree(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                        const std::vector<std::size_t>& rows, const ForestOptions& options, Rng& rng);

/// options.trees trees, tree t from its own stream of (seed, t).
std::vector<RegressionTree> fit_forest(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                                       const ForestOptions& options, std::uint64_t seed);

/// The tree's prediction at a point: its leaf's value.
double predict(const RegressionTree& tree, const std::vector<double>& point);

}  // namespace hfta::search
