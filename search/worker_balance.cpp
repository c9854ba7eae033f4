#include "hfta/search/worker_balance.h"

#include <algorithm>
#include <numeric>

namespace hfta::search {
namespace {

std::vector<std::size_t> longest_first(const std::vector<double>& costs) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  return order;
}

}  // namespace

double makespan(const std::vector<double>& costs, const std::vector<std::size_t>& order, std::size_t workers) {
  std::vector<double> busy(std::max<std::size_t>(workers, 1), 0.0);
  for (std::size_t i : order) *std::min_element(busy.begin(), busy.end()) += costs[i];
  return *std::max_element(busy.begin(), busy.end());
}

WorkerPlan balance_for_workers(std::vector<ArrayPlan> arrays, std::size_t workers, const ArrayCost& cost) {
  std::vector<double> time;  // each array's cost
  for (const auto& a : arrays) time.push_back(cost(a));
  if (workers > 1) {
    // Each cut leaves one more array, so this ends; at most one cut per model.
    for (double span = makespan(time, longest_first(time), workers);;) {
      const auto longest = static_cast<std::size_t>(std::max_element(time.begin(), time.end()) - time.begin());
      if (arrays.empty() || arrays[longest].trial_ids.size() < 2) break;
      auto [first, second] = split_in_two(arrays[longest]);
      std::vector<ArrayPlan> cut = arrays;
      std::vector<double> cut_time = time;
      cut[longest] = first, cut_time[longest] = cost(first);
      cut.insert(cut.begin() + static_cast<std::ptrdiff_t>(longest) + 1, second);
      cut_time.insert(cut_time.begin() + static_cast<std::ptrdiff_t>(longest) + 1, cost(second));
      const double cut_span = makespan(cut_time, longest_first(cut_time), workers);
      if (!(cut_span < span)) break;
      arrays = std::move(cut), time = std::move(cut_time), span = cut_span;
    }
  }
  WorkerPlan plan;
  plan.start_order = workers > 1 ? longest_first(time) : std::vector<std::size_t>(arrays.size());
  if (workers <= 1) std::iota(plan.start_order.begin(), plan.start_order.end(), 0);
  plan.arrays = std::move(arrays);
  return plan;
}

}  // namespace hfta::search
