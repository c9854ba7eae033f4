// The median stopping rule (Golovin et al., Google Vizier, KDD 2017), for random
// search, with Ray Tune's grace period and minimum of others and Optuna's
// percentile (its PercentilePruner; 50 is the median).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// The rule's settings.
struct StoppingRule {
  double grace = 1;             ///< no trial stops at a budget below this (Ray Tune's grace_period)
  std::size_t min_others = 3;   ///< nor before this many others reached its budget (Ray's min_samples_required)
  double percentile = 50;       ///< in (0, 100]: the share of the others' averages a trial must keep up with
};

/// Stops a trial at budget b when its best metric so far is worse than the
/// median (or, as Optuna's PercentilePruner, the `percentile`-th from the top,
/// interpolated linearly between the two nearest as NumPy's percentile), over
/// other trials that reached b, of their running averages up to b.
class MedianStopping {
 public:
  MedianStopping(Goal goal, StoppingRule rule);
  /// The median rule: no trial stops before `grace_budget`, nor before `min_trials` others reached its budget.
  MedianStopping(Goal goal, double grace_budget, std::size_t min_trials = 3)
      : MedianStopping(goal, StoppingRule{grace_budget, min_trials, 50}) {}

  /// Records trial's metric at `budget` (non-decreasing per trial); true: stop it now.
  bool report(std::int64_t trial_id, double budget, double metric);
  /// The two halves of report(), for deciding once every trial has reported.
  void record(std::int64_t trial_id, double budget, double metric);
  bool should_stop(std::int64_t trial_id, double budget) const;

 private:
  double running_average(const std::vector<std::pair<double, double>>& history,
                         double budget) const;

  Goal goal_;
  StoppingRule rule_;
  std::map<std::int64_t, std::vector<std::pair<double, double>>> history_;  ///< (budget, metric)
};

/// Random search under the median stopping rule, in steps every trial takes
/// together: the survivors train to min, 2 min, 3 min, ... up to max, and once
/// every result of a step is in, MedianStopping stops those behind (its grace
/// is `rule.grace`: budget.min unless the sweep sets grace_period). Decided on whole steps, so the outcome does not depend on the order
/// arrays finish in, on packing, or on interruptions. A stopped trial keeps
/// the budget it reached, as a trial Hyperband does not promote. With `waves`
/// > 1 the trials train in that many parts (Waves), one after another, each
/// in steps as above; the rule compares a wave's trials with every trial before
/// it too (the curves of finished trials, as Vizier's rule does).
class MedianStoppingScheduler : public Scheduler {
 public:
  /// The median rule with grace min_budget, as Vizier's.
  MedianStoppingScheduler(std::int64_t trials, std::int64_t max_budget, std::int64_t min_budget, Goal goal,
                          Waves waves = 1)
      : MedianStoppingScheduler(trials, max_budget, min_budget, goal, StoppingRule{double(min_budget), 3, 50}, waves) {}
  MedianStoppingScheduler(std::int64_t trials, std::int64_t max_budget, std::int64_t min_budget, Goal goal,
                          StoppingRule rule, Waves waves = 1);
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
  Waves waves_;
  std::int64_t wave_ = 0;            ///< the wave alive_ belongs to
  MedianStopping rule_;

  void start_wave();
};

}  // namespace hfta::search
