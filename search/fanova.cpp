#include "hfta/search/fanova.h"

#include <algorithm>

namespace hfta::search {
namespace {

struct Leaf {
  std::vector<FeatureRange> box;
  double value = 0;
};

void collect_leaves(const RegressionTree& tree, int i, std::vector<FeatureRange>& box, std::vector<Leaf>& out) {
  const auto& node = tree.nodes[static_cast<std::size_t>(i)];
  if (node.feature < 0) {
    out.push_back({box, node.value});
    return;
  }
  FeatureRange& range = box[static_cast<std::size_t>(node.feature)];
  const FeatureRange saved = range;
  if (saved.lo == saved.hi) {  // a feature of one point: it lies on one side
    collect_leaves(tree, saved.lo <= node.threshold ? node.left : node.right, box, out);
    return;
  }
  // A split outside the box leaves one child empty, of no volume.
  range.hi = std::clamp(node.threshold, saved.lo, saved.hi);
  collect_leaves(tree, node.left, box, out);
  range = saved;
  range.lo = std::clamp(node.threshold, saved.lo, saved.hi);
  collect_leaves(tree, node.right, box, out);
  range = saved;
}

}  // namespace

TreeAnova tree_anova(const RegressionTree& tree, const std::vector<FeatureRange>& domain) {
  const std::size_t features = domain.size();
  std::vector<Leaf> leaves;
  std::vector<FeatureRange> box = domain;
  collect_leaves(tree, 0, box, leaves);
  // Each leaf's share of the box along each feature, and of its volume.
  auto share = [&](const Leaf& leaf, std::size_t f) {
    const double width = domain[f].hi - domain[f].lo;
    return width > 0 ? (leaf.box[f].hi - leaf.box[f].lo) / width : 1.0;
  };
  std::vector<double> volume(leaves.size(), 1.0);
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    for (std::size_t f = 0; f < features; ++f) volume[l] *= share(leaves[l], f);
  }
  TreeAnova out;
  for (std::size_t l = 0; l < leaves.size(); ++l) out.mean += volume[l] * leaves[l].value;
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const double d = leaves[l].value - out.mean;
    out.variance += volume[l] * d * d;
  }
  out.main_effects.assign(features, 0.0);
  for (std::size_t f = 0; f < features; ++f) {
    const double width = domain[f].hi - domain[f].lo;
    if (!(width > 0)) continue;
    // The marginal is constant between consecutive leaf edges along f: on
    // each such interval it is the sum, over the leaves that span it, of
    // value x the leaf's volume in the other features (a difference array
    // adds each leaf to its run of intervals at once).
    std::vector<double> edges{domain[f].lo, domain[f].hi};
    for (const auto& leaf : leaves) {
      edges.push_back(leaf.box[f].lo);
      edges.push_back(leaf.box[f].hi);
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    auto at = [&](double e) { return static_cast<std::size_t>(std::lower_bound(edges.begin(), edges.end(), e) - edges.begin()); };
    std::vector<double> step(edges.size(), 0.0);
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      const double own = share(leaves[l], f);
      if (!(own > 0)) continue;
      const double weight = leaves[l].value * volume[l] / own;
      step[at(leaves[l].box[f].lo)] += weight;
      step[at(leaves[l].box[f].hi)] -= weight;
    }
    double marginal = 0;
    for (std::size_t k = 0; k + 1 < edges.size(); ++k) {
      marginal += step[k];
      const double d = marginal - out.mean;
      out.main_effects[f] += (edges[k + 1] - edges[k]) / width * d * d;
    }
  }
  return out;
}

std::optional<std::vector<double>> forest_main_effects(const std::vector<RegressionTree>& forest,
                                                        const std::vector<FeatureRange>& domain) {
  std::vector<double> sum(domain.size(), 0.0);
  std::size_t varying = 0;
  for (const auto& tree : forest) {
    const TreeAnova anova = tree_anova(tree, domain);
    // (A relative floor: rounding leaves a constant tree a variance of 1e-33, not 0.)
    if (!(anova.variance > 1e-24 * std::max(1.0, anova.mean * anova.mean))) continue;
    ++varying;
    for (std::size_t f = 0; f < domain.size(); ++f) sum[f] += std::min(1.0, anova.main_effects[f] / anova.variance);
  }
  if (varying == 0) return std::nullopt;
  for (double& s : sum) s /= static_cast<double>(varying);
  return sum;
}

}  // namespace hfta::search
