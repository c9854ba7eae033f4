// Asynchronous successive halving (Li et al., MLSys 2020), with promotions batched
// over a short wait so that trials promoted at nearly the same time train as one array.
#pragma once

#include <optional>
#include <set>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// ASHA over `trials` configurations and rungs r_k = R eta^(k-K), k = 0..K,
/// K = s_max. Whenever asked for work it promotes, highest rung first, the best
/// floor(|rung k| / eta) trials of rung k not yet promoted, and otherwise starts
/// new trials at the bottom rung. With `waves` > 1 new trials start in that many
/// parts (Waves), each once every trial started before has a bottom-rung
/// result, so a model-based searcher proposes the later waves from the earlier
/// ones' results; promotions go on meanwhile.
class AshaScheduler : public Scheduler {
 public:
  AshaScheduler(std::int64_t trials, std::int64_t max_budget, std::int64_t min_budget,
                std::int64_t eta, Goals goals, double promotion_wait, Waves waves = 1);

  std::vector<RungJob> next_jobs(std::size_t capacity, double now) override;
  void report(const TrialResult& result) override;
  bool finished() const override;
  std::vector<BracketPlan> plan() const override;
  bool may_train_again(std::int64_t trial_id) const override;

  /// When held-back promotions become due (infinity when none are waiting).
  double next_release_time() const;
  /// Trials promotable now, whether or not their wait has passed.
  std::size_t promotable_count() const;

 private:
  struct Rung {
    double budget = 0;
    std::map<std::int64_t, TrialResult> results;
    std::set<std::int64_t> promoted;
    std::map<std::int64_t, double> pending_since;  ///< promotable trials, and since when
  };

  std::vector<std::int64_t> promotable(std::size_t k) const;
  bool is_promotable(std::size_t k, std::int64_t trial_id) const;

  // promotable() and closed() per rung as last computed: the progress line
  // asks may_train_again() of every trial at every redraw, and each answer
  // sorted a rung's results (5,000 trials spent 53 s of CPU in it). Every
  // change of state (report, next_jobs) forgets them. So the const methods
  // write too: callers serialise every call (the tuner holds its mutex).
  struct Memo {
    std::optional<std::vector<std::int64_t>> promotable;
    std::set<std::int64_t> promotable_ids;
    std::optional<bool> closed;
  };
  mutable std::vector<Memo> memo_;
  void forget() const { memo_.assign(rungs_.size(), Memo{}); }

  std::int64_t trials_;
  std::int64_t eta_;
  Goals goals_;
  double wait_;
  std::vector<Rung> rungs_;
  /// Rung k can get no more results: every trial started, none trains to a
  /// rung up to k, and no lower rung has a promotion waiting.
  bool closed(std::size_t k) const;
  std::int64_t started_ = 0;
  Waves waves_;
  std::int64_t wave_ = 0;  ///< the next wave of new trials
  std::map<std::int64_t, std::size_t> running_;  ///< trial id -> rung it is training to
};

}  // namespace hfta::search
