// Runs a sweep: the scheduler decides budgets, the searcher configurations, the
// packer arrays, and the array trainer trains them; results are keyed by trial id.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "hfta/core/progress.h"
#include "hfta/core/sweep_config.h"
#include "hfta/core/sweep_results.h"

namespace hfta::core {

class ExperimentLock;

/// --checkpoint-every's default, seconds.
inline constexpr double kDefaultCheckpointSeconds = 300;

struct TunerOptions {
  bool fuse = true;             ///< false: --fusion off, every trial alone
  std::string dir;              ///< experiment directory: rung checkpoints; "" keeps them in memory
  /// dir's lock, held by the caller: the sweep stops where dir stops being
  /// the directory it locks (moved away, removed) rather than make a new one.
  const ExperimentLock* lock = nullptr;
  /// At least this long between mid-rung checkpoints, taken every 50 steps
  /// and at evaluation points (0: at each of them).
  double checkpoint_seconds = kDefaultCheckpointSeconds;
  /// false (--keep-checkpoints live): a trial's checkpoints go once the
  /// scheduler says it will train no more (its weights stay, and the best
  /// trial's test evaluation reads them), so the disk holds the checkpoints
  /// of the trials that may still train rather than of every trial.
  bool keep_checkpoints = true;
  std::ostream* log = nullptr;  ///< progress lines
  bool live = false;            ///< log is a terminal: one live progress line, redrawn
  ProgressTotals totals;        ///< what the plan expects, for counts and the ETA
  /// Arrays trained at the same time, each in its own thread. On the CPU the
  /// cores are shared out among them (LibTorch's intra-op threads divided by
  /// workers, unless `threads` says) and so is the memory the sizer plans
  /// with. Results are the same for any number of workers at the same threads.
  int workers = 1;
  /// LibTorch's intra-op threads of each array; 0: array_threads(process_threads(),
  /// workers, devices). Results depend on it (a sum splits into as many parts).
  int threads = 0;
  /// Where arrays train: worker w on devices[w % devices.size()] (several GPUs:
  /// one worker or more each).
  std::vector<c10::Device> devices = {c10::Device(c10::kCPU)};
  /// Training batches prepared ahead by a background thread (trainers/batch_stream.h);
  /// -1: batches_ahead's choice per device (on a GPU the dataset moves there
  /// once, shared by its arrays, where it fits; else it streams from the host).
  std::int64_t prefetch = -1;
};

/// LibTorch's intra-op threads as this process began (OMP_NUM_THREADS, else
/// its count of cores): what a run shares out among its workers, unless told
/// another count (TunerOptions::threads).
int process_threads();

/// Each array's share of `threads`: on the CPU, the workers share them out
/// (at least one each); a GPU's workers each get them all.
int array_threads(int threads, int workers, const std::vector<c10::Device>& devices);

/// What in `sweep` the trainer cannot train yet (empty: all of it), as
/// "yaml.path: reason" lines; run refuses such sweeps before writing anything.
std::vector<std::string> not_trainable_yet(const SweepConfig& sweep);

/// Runs `sweep` to the end. Throws std::runtime_error for a model the trainers
/// cannot train yet.
SweepResult run_sweep(const SweepConfig& sweep, const TunerOptions& options);

}  // namespace hfta::core
