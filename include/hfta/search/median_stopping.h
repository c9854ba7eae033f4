// The median stopping rule (Golovin et al., Google Vizier, KDD 2017), for random search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// Stops a trial at budget b when its best metric so far is worse than the median,
/// over other trials that reached b, of their running averages up to b.
class MedianStopping {
 public:
  /// No trial stops before `grace_budget`, nor before `min_trials` others reached its budget.
  MedianStopping(Goal goal, double grace_budget, std::size_t min_trials = 3);

  /// Records trial's metric at `budget` (non-decreasing per trial); true: stop it now.
  bool report(std::int64_t trial_id, double budget, double metric);

 private:
  double running_average(const std::vector<std::pair<double, double>>& history,
                         double budget) const;

  Goal goal_;
  double grace_;
  std::size_t min_trials_;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> history_;  ///< (budget, metric)
};

}  // namespace hfta::search
