#include "hfta/search/random_forest.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace hfta::search {
namespace {

struct Split {
  int feature = -1;
  double threshold = 0;
  double score = 0;  ///< sum_left^2 / n_left + sum_right^2 / n_right: the larger, the less squared error
  std::size_t left = 0;  ///< rows that go left, in the order sorted by the feature
};

class TreeBuilder {
 public:
  TreeBuilder(const std::vector<std::vector<double>>& x, const std::vector<double>& y, const ForestOptions& options,
              Rng& rng)
      : x_(x), y_(y), options_(options), rng_(rng) {}

  // Grows the node of `rows` at `depth`; returns its index.
  int grow(std::vector<std::size_t> rows, int depth) {
    const int index = static_cast<int>(tree_.nodes.size());
    tree_.nodes.emplace_back();
    double sum = 0;
    for (std::size_t r : rows) sum += y_[r];
    tree_.nodes[index].value = sum / static_cast<double>(rows.size());
    const bool pure = std::all_of(rows.begin(), rows.end(), [&](std::size_t r) { return y_[r] == y_[rows[0]]; });
    if (pure || depth >= options_.max_depth || rows.size() < options_.min_samples_split) return index;
    const Split split = best_split(rows, sum);
    if (split.feature < 0) return index;
    const auto f = static_cast<std::size_t>(split.feature);
    std::vector<std::size_t> left, right;
    for (std::size_t r : rows) (x_[r][f] <= split.threshold ? left : right).push_back(r);
    rows.clear();
    rows.shrink_to_fit();
    const int l = grow(std::move(left), depth + 1);
    const int r = grow(std::move(right), depth + 1);
    auto& node = tree_.nodes[index];
    node.feature = split.feature;
    node.threshold = split.threshold;
    node.left = l;
    node.right = r;
    return index;
  }

  RegressionTree take() { return std::move(tree_); }

 private:
  Split best_split(std::vector<std::size_t> rows, double sum) {
    const std::size_t n = rows.size(), features = x_[rows[0]].size();
    std::vector<std::size_t> order(features);
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = features; i > 1; --i) std::swap(order[i - 1], order[rng_.below(i)]);
    // Splitting never raises the score above the parent's sum^2 / n, so a split must beat it.
    Split best;
    best.score = sum * sum / static_cast<double>(n);
    const double tolerance = 1e-12 * std::max(1.0, std::abs(best.score));
    for (std::size_t f : order) {
      std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) { return x_[a][f] < x_[b][f]; });
      double left_sum = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) {
        left_sum += y_[rows[i]];
        const double here = x_[rows[i]][f], next = x_[rows[i + 1]][f];
        const std::size_t nl = i + 1, nr = n - nl;
        if (here == next || nl < options_.min_samples_leaf || nr < options_.min_samples_leaf) continue;
        const double right_sum = sum - left_sum;
        const double score = left_sum * left_sum / static_cast<double>(nl) + right_sum * right_sum / static_cast<double>(nr);
        if (score > best.score + tolerance) {
          // The midpoint, unless it rounds onto the upper value.
          double threshold = here + (next - here) / 2;
          if (!(threshold < next)) threshold = here;
          best = {static_cast<int>(f), threshold, score, nl};
        }
      }
    }
    return best;
  }

  const std::vector<std::vector<double>>& x_;
  const std::vector<double>& y_;
  const ForestOptions& options_;
  Rng& rng_;
  RegressionTree tree_;
};

}  // namespace

RegressionTree fit_tree(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                        const std::vector<std::size_t>& rows, const ForestOptions& options, Rng& rng) {
  if (rows.empty()) throw std::invalid_argument("fit_tree: no rows");
  TreeBuilder builder(x, y, options, rng);
  builder.grow(rows, 0);
  return builder.take();
}

std::vector<RegressionTree> fit_forest(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                                       const ForestOptions& options, std::uint64_t seed) {
  if (x.empty() || x.size() != y.size()) throw std::invalid_argument("fit_forest: as many rows as targets, at least one");
  std::vector<RegressionTree> forest;
  for (int t = 0; t < options.trees; ++t) {
    Rng rng(seed, 0x666f72657374ULL, static_cast<std::uint64_t>(t));  // "forest"
    std::vector<std::size_t> rows(x.size());
    if (options.bootstrap) {
      for (auto& r : rows) r = rng.below(x.size());
    } else {
      std::iota(rows.begin(), rows.end(), 0);
    }
    forest.push_back(fit_tree(x, y, rows, options, rng));
  }
  return forest;
}

double predict(const RegressionTree& tree, const std::vector<double>& point) {
  int i = 0;
  while (tree.nodes[i].feature >= 0) {
    const auto& node = tree.nodes[i];
    i = point[static_cast<std::size_t>(node.feature)] <= node.threshold ? node.left : node.right;
  }
  return tree.nodes[i].value;
}

}  // namespace hfta::search
