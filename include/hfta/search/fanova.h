// Functional ANOVA of regression trees (Hutter, Hoos and Leyton-Brown, "An
// Efficient Approach for Assessing Hyperparameter Importance", ICML 2014):
// the variance of a tree's prediction over a box of the feature space, and
// the share of it each feature explains alone.
#pragma once

#include <optional>
#include <vector>

#include "hfta/search/random_forest.h"

namespace hfta::search {

/// The interval a feature ranges over; the measure is uniform on it.
struct FeatureRange {
  double lo = 0, hi = 1;
};

/// One tree's functional ANOVA over the box `domain`.
struct TreeAnova {
  double mean = 0;      ///< the tree's prediction averaged over the box
  double variance = 0;  ///< its variance over the box
  /// Per feature: the variance of the tree's marginal in that feature (its
  /// prediction averaged over every other feature), the feature's main effect.
  std::vector<double> main_effects;
};

/// The tree's leaves are boxes whose values are constant, so each marginal is
/// a step function: computed exactly, in one pass over the leaves per feature.
/// A feature whose range is a point has no effect.
TreeAnova tree_anova(const RegressionTree& tree, const std::vector<FeatureRange>& domain);

/// Each feature's main effect as a share of its tree's variance, averaged
/// over the trees whose prediction varies (Optuna's fANOVA evaluator); none
/// where no tree's does.
std::optional<std::vector<double>> forest_main_effects(const std::vector<RegressionTree>& forest,
                                                        const std::vector<FeatureRange>& domain);

}  // namespace hfta::search
