#include "hfta/search/median_stopping.h"

#include <algorithm>
#include <cmath>

namespace hfta::search {

MedianStopping::MedianStopping(Goal goal, double grace_budget, std::size_t min_trials)
    : goal_(goal), grace_(grace_budget), min_trials_(min_trials) {}

double MedianStopping::running_average(const std::vector<std::pair<double, double>>& history,
                                       double budget) const {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& [b, m] : history) {
    if (b > budget) break;
    sum += m;
    ++n;
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

bool MedianStopping::report(std::int64_t trial_id, double budget, double metric) {
  auto& mine = history_[trial_id];
  mine.emplace_back(budget, metric);
  if (budget < grace_) return false;

  std::vector<double> averages;
  for (const auto& [id, history] : history_) {
    if (id == trial_id || history.empty() || history.back().first < budget) continue;
    const double avg = running_average(history, budget);
    if (!std::isnan(avg)) averages.push_back(avg);
  }
  if (averages.size() < min_trials_) return false;
  std::sort(averages.begin(), averages.end());
  const std::size_t n = averages.size();
  const double median = n % 2 ? averages[n / 2] : 0.5 * (averages[n / 2 - 1] + averages[n / 2]);

  double best = mine.front().second;
  for (const auto& [b, m] : mine) {
    if (better(m, best, goal_)) best = m;
  }
  return better(median, best, goal_);
}

}  // namespace hfta::search
