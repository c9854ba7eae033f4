#include "hfta/search/pareto.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace hfta::search {

bool dominates(const std::vector<double>& a, const std::vector<double>& b, const std::vector<Goal>& goals) {
  bool strictly = false;
  for (std::size_t m = 0; m < goals.size(); ++m) {
    if (better(b[m], a[m], goals[m])) return false;
    strictly = strictly || better(a[m], b[m], goals[m]);
  }
  return strictly;
}

namespace {

// Two objectives in O(n log n) (Jensen's sweep): in order of the first
// objective (then the second), a point joins the first front none of whose
// points dominates it. Each front's points come in improving on the second
// objective, so its best second value (and the first value it came with)
// decides, and a front that dominates a point has every earlier one
// dominating it too: a binary search finds the front. ASHA ranks a rung at
// every result, so with thousands of trials the O(n^2) sort would dominate.
std::vector<std::size_t> two_objective_fronts(const std::vector<std::vector<double>>& points,
                                              const std::vector<Goal>& goals) {
  const std::size_t n = points.size();
  // Both as costs: smaller is better.
  std::vector<std::pair<double, double>> cost(n);
  for (std::size_t i = 0; i < n; ++i) {
    cost[i] = {goals[0] == Goal::kMaximize ? -points[i][0] : points[i][0],
               goals[1] == Goal::kMaximize ? -points[i][1] : points[i][1]};
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] < cost[b]; });
  struct Tail {
    double second, first;  ///< the front's best second cost, and the first cost of the point with it
  };
  std::vector<Tail> tails;
  std::vector<std::size_t> front(n, 0);
  for (std::size_t i : order) {
    const auto [first, second] = cost[i];
    // (Points come in order of the first cost, so a front's points all have one at most `first`.)
    const auto dominated_by = [&](const Tail& t) { return t.second < second || (t.second == second && t.first < first); };
    std::size_t lo = 0, hi = tails.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (dominated_by(tails[mid])) lo = mid + 1; else hi = mid;
    }
    front[i] = lo;
    if (lo == tails.size()) tails.push_back({second, first});
    else if (second < tails[lo].second) tails[lo] = {second, first};
  }
  return front;
}

}  // namespace

std::vector<std::size_t> pareto_fronts(const std::vector<std::vector<double>>& points, const std::vector<Goal>& goals) {
  if (goals.size() == 2) return two_objective_fronts(points, goals);
  // Deb et al.'s fast non-dominated sort: peel off the points nothing left dominates.
  const std::size_t n = points.size();
  std::vector<std::vector<std::size_t>> dominated(n);
  std::vector<std::size_t> dominators(n, 0), front(n, 0), current;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (dominates(points[i], points[j], goals)) dominated[i].push_back(j), ++dominators[j];
      else if (dominates(points[j], points[i], goals)) dominated[j].push_back(i), ++dominators[i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) if (dominators[i] == 0) current.push_back(i);
  for (std::size_t f = 0; !current.empty(); ++f) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      front[i] = f;
      for (std::size_t j : dominated[i]) if (--dominators[j] == 0) next.push_back(j);
    }
    current = std::move(next);
  }
  return front;
}

namespace {

// NSGA-II's crowding distance of each of `members` (one front): the sum over
// objectives of the gap between its two neighbours, over the front's range.
std::vector<double> crowding(const std::vector<std::vector<double>>& points, std::vector<std::size_t> members,
                             std::size_t objectives) {
  std::vector<double> distance(points.size(), 0.0);
  for (std::size_t m = 0; m < objectives; ++m) {
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return points[a][m] < points[b][m]; });
    const double lo = points[members.front()][m], hi = points[members.back()][m];
    distance[members.front()] = distance[members.back()] = std::numeric_limits<double>::infinity();
    if (hi == lo) continue;
    for (std::size_t i = 1; i + 1 < members.size(); ++i) {
      distance[members[i]] += (points[members[i + 1]][m] - points[members[i - 1]][m]) / (hi - lo);
    }
  }
  return distance;
}

}  // namespace

std::vector<std::size_t> pareto_order(const std::vector<std::vector<double>>& points, const std::vector<Goal>& goals) {
  const std::vector<std::size_t> front = pareto_fronts(points, goals);
  std::vector<std::vector<std::size_t>> fronts;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (fronts.size() <= front[i]) fronts.resize(front[i] + 1);
    fronts[front[i]].push_back(i);
  }
  std::vector<double> distance(points.size(), 0.0);
  for (const auto& members : fronts) {
    const std::vector<double> d = crowding(points, members, goals.size());
    for (std::size_t i : members) distance[i] = d[i];
  }
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (front[a] != front[b]) return front[a] < front[b];
    return distance[a] > distance[b];
  });
  return order;
}

}  // namespace hfta::search
