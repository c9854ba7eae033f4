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
  /// The two halves of report(), for deciding once every trial has reported.
  void record(std::int64_t trial_id, double budget, double metric);
  bool should_stop(std::int64_t trial_id, double budget) const;

 private:
  double running_average(const std::vector<std::pair<double, double>>& history,
                         double budget) const;

  Goal goal_;
  double grace_;
  std::size_t min_trials_;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> history_;  ///< (budget, metric)
};

/// Random search under the median stopping rule, in steps every trial takes
/// together: the survivors train to min, 2 min, 3 min, ... up to max, and once
/// every result of a step is in, MedianStopping (grace: min) stops those
/// behind. Decided on whole steps, so the outcome does not depend on the order
/// arrays finish in, on packing, or on interruptions. A stopped trial keeps
/// the budget it reached, as a trial Hyperband does not promote. With `waves`
/// > 1 the trials train in that many parts (wave_end), one after another, each
/// in steps as above; the rule compares a wave's trials with every trial before
/// it too (the curves of finished trials, as Vizier's rule does).
class MedianStoppingScheduler : public Scheduler {
 public:
  MedianStoppingScheduler(std::int64_t trials, std::int64_t max_budget, std::int64_t min_budget, Goal goal,
                          std::int64_t waves = 1);
  std::vector<RungJob> next_jobs(std::size_t capacity, double now) override;
  void report(const TrialResult& result) override;
  bool finished() const override;
  std::vector<BracketPlan> plan() const override;
  bool may_train_again(std::int64_t trial_id) const override;

 private:
  std::vector<double> budgets_;       ///< min, 2 min, ..., max
  std::size_t step_ = 0;              ///< the budget alive_ trains to
  bool handed_out_ = false;
  std::vector<std::int64_t> alive_;  ///< trials training to budgets_[step_]
  std::map<std::int64_t, TrialResult> results_;  ///< this step's
  std::int64_t trials_;
  std::int64_t waves_ = 1;
  std::int64_t wave_ = 0;            ///< the wave alive_ belongs to
  MedianStopping rule_;

  void start_wave();
};

}  // namespace hfta::search
