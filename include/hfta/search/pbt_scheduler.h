// Population based training (Jaderberg et al., 2017), synchronous as Ray Tune's
// PBT with synch=True: a population trains in generations of `interval` budget
// units, and at each generation's end the bottom quantile exploits the top one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// How many of a population of n a generation replaces, and clones from:
/// ceil(n fraction), at most half (Ray Tune's quantile_fraction rule).
std::int64_t pbt_quantile(std::int64_t n, double fraction);

/// The population is trials 0..population-1. Every member trains to interval,
/// 2 interval, ... up to max_budget together. Once a generation's results are
/// all in, the pbt_quantile() worst members (those that stopped, diverged or
/// failed ranked last), and every one of those however many, are replaced:
/// each by a new trial (the next id)
/// that starts from the state of a top-quantile member at that budget (its
/// parent, drawn from a stream keyed by the seed and the new trial's id). The
/// new trial's configuration is the parent's, explored (pbt_explore.h): the
/// tuner asks parent_of(). The others train on. Decided on whole generations,
/// so the outcome does not depend on the order arrays finish in or on resumes.
class PbtScheduler : public Scheduler {
 public:
  /// No generation ending below `burn_in` exploits (Ray Tune's burn_in_period).
  PbtScheduler(std::int64_t population, std::int64_t max_budget, std::int64_t interval, Goal goal,
               double quantile_fraction, std::uint64_t seed, std::int64_t burn_in = 0);
  std::vector<RungJob> next_jobs(std::size_t capacity, double now) override;
  void report(const TrialResult& result) override;
  bool finished() const override { return finished_; }
  std::vector<BracketPlan> plan() const override;
  bool may_train_again(std::int64_t trial_id) const override;
  std::optional<Parent> parent_of(std::int64_t trial_id) const override;
  /// The trials a sweep makes when each generation replaces its quantile: the
  /// population and the replacements (more where members stop or diverge).
  std::int64_t planned_trials() const;

 private:
  /// Replaces the `replaced` worst members and every one that cannot go on.
  void exploit(std::int64_t replaced);

  std::vector<double> budgets_;          ///< interval, 2 interval, ..., max
  std::size_t step_ = 0;                 ///< the generation members_ trains now
  bool handed_out_ = false;
  bool finished_ = false;
  std::vector<std::int64_t> members_;    ///< the population's trials, by member
  std::map<std::int64_t, TrialResult> results_;  ///< this generation's
  std::map<std::int64_t, Parent> parents_;
  std::int64_t next_id_;
  Goal goal_;
  double quantile_fraction_;
  std::uint64_t seed_;
  double burn_in_ = 0;
};

}  // namespace hfta::search
