#include "hfta/search/scheduler.h"

#include <algorithm>
#include <cmath>

namespace hfta::search {

std::int64_t wave_end(std::int64_t n, std::int64_t waves, std::int64_t k) {
  if (waves <= 1 || k + 1 >= waves) return n;
  return (n * (k + 1) + waves - 1) / waves;
}

bool better(double a, double b, Goal goal) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

std::vector<std::int64_t> best_completed(const std::map<std::int64_t, TrialResult>& results,
                                         std::size_t k, Goal goal) {
  std::vector<const TrialResult*> completed;
  for (const auto& [id, r] : results) {
    if (r.status == TrialStatus::kCompleted && !std::isnan(r.metric)) completed.push_back(&r);
  }
  // Stable on ids (the map's order), so ties keep the smaller id first.
  std::stable_sort(completed.begin(), completed.end(), [goal](const auto* a, const auto* b) {
    return better(a->metric, b->metric, goal);
  });
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < completed.size() && i < k; ++i) ids.push_back(completed[i]->trial_id);
  return ids;
}

}  // namespace hfta::search
