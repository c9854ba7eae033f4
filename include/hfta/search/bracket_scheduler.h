// Synchronous brackets: Hyperband (every bracket), successive halving (one bracket),
// and random or grid search (one bracket of one rung at the full budget).
#pragma once

#include <set>
#include <unordered_map>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// Runs brackets rung by rung. Rung i+1 starts once every trial of rung i has
/// reported; it takes the best n_{i+1} completed trials, which resume from the
/// budget they reached. Brackets run side by side in rounds (BracketPlan::first_round):
/// a rung is handed out once every rung of an earlier round has reported. Trial ids
/// run consecutively through the brackets' first rungs. With `waves` > 1 a
/// bracket's first rung is handed out in that many parts (Waves), each once the
/// one before has reported, so a model-based searcher proposes the later waves
/// from the earlier ones' results; promotions are the same as all at once.
class BracketScheduler : public Scheduler {
 public:
  BracketScheduler(std::vector<BracketPlan> brackets, Goals goals, std::int64_t first_trial_id = 0,
                   Waves waves = 1);

  std::vector<RungJob> next_jobs(std::size_t capacity, double now) override;
  void report(const TrialResult& result) override;
  bool finished() const override;
  std::vector<BracketPlan> plan() const override { return brackets_; }
  bool may_train_again(std::int64_t trial_id) const override;

  /// Every trial id the first rungs will use, in order.
  std::int64_t trial_count() const { return trial_count_; }

 private:
  struct BracketState {
    int rung = 0;             ///< the rung now running (or next to hand out)
    std::size_t handed = 0;   ///< how many of its trials were handed out
    std::int64_t wave = 0;    ///< the first rung's next wave
    bool done = false;
    std::vector<TrialJob> trials;                    ///< the current rung's trials
    /// Each of `trials`' place in it: the progress line asks may_train_again()
    /// of every trial at every redraw, and a scan of a grid's 10,000 trials
    /// each time made the sweep's bookkeeping grow with its square.
    std::unordered_map<std::int64_t, std::size_t> place;
    std::map<std::int64_t, TrialResult> results;     ///< the current rung's results
  };

  void advance(std::size_t b);

  std::vector<BracketPlan> brackets_;
  Goals goals_;
  std::int64_t trial_count_ = 0;
  Waves waves_;
  std::vector<BracketState> state_;
  std::map<std::int64_t, std::size_t> bracket_of_;
};

/// Hyperband's scheduler for R = max_budget, r_min = min_budget; with align_ends,
/// every bracket's last rung runs in the same round (align_bracket_ends); its
/// brackets run `iterations` times, one pass after another (repeat_iterations).
BracketScheduler make_hyperband(std::int64_t max_budget, std::int64_t min_budget,
                                std::int64_t eta, const Goals& goals, bool align_ends = false,
                                std::int64_t iterations = 1);

}  // namespace hfta::search
