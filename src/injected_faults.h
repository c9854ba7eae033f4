// Faults the end-to-end tests inject into a sweep through the environment
// (HFTA_TUNE_*), read once as a tuner starts: a user's run sets none, and
// then each is empty or 0.
#pragma once

#include <cstdint>
#include <set>
#include <utility>

namespace hfta::core {

/// (trial, budget) pairs; one may be given more than once.
using TrialBudgets = std::multiset<std::pair<std::int64_t, double>>;

struct InjectedFaults {
  /// HFTA_TUNE_FAULT_TRIALS=3,7: these trials' training throws.
  std::set<std::int64_t> failing_trials;
  /// Rung checkpoints damaged, for testing their repair (a disk that fails
  /// under the sweep): as soon as they are written
  /// (HFTA_TUNE_DAMAGE_CHECKPOINTS), or after their round checked them, as
  /// their array is about to read them (HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD).
  /// Each is trial@budget, comma-separated: 3@30,7@10 (given twice, twice).
  TrialBudgets damaged_when_written, damaged_at_load;
  /// The process exits (as if killed) after this many mid-rung checkpoints.
  int exit_after_checkpoints = 0;
  /// The process sends itself SIGINT, or its time limit passes, after this
  /// many pieces of training (inside a rung, for sure).
  int interrupt_after_pieces = 0, time_up_after_pieces = 0;
  /// The time limit has passed as the sweep starts (HFTA_TUNE_TIME_UP_AT_START=1):
  /// a limit shorter than start-up, without reading a clock.
  bool time_up_at_start = false;
  /// An array runs out of memory after reporting this many trials of a rung past the first.
  int oom_after_reports = 0;
  /// The scheduler's clock stands still (HFTA_TUNE_SCHEDULER_CLOCK_STILL=1):
  /// ASHA holds a promotion for company until nothing else can train or a
  /// new wave starts, however long rounds take, so that a test's sweep
  /// schedules alike on any machine and under any load.
  bool scheduler_clock_still = false;
  /// The throughput probe times nothing (HFTA_TUNE_RATES_UNTIMED=1): an
  /// array of B models is taken to train B times as fast as one, so that
  /// which arrays a test's sweep builds depends on no machine's speed or load.
  bool rates_untimed = false;

  static InjectedFaults from_environment();
};

/// Takes one `item` out of `set`, saying whether there was one.
bool take_one(TrialBudgets& set, const std::pair<std::int64_t, double>& item);

}  // namespace hfta::core
