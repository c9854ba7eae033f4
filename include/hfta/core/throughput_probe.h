// Measures how fast arrays of a fusion key train at growing sizes, so the
// packer never builds an array slower than training its models one after
// another. Where per-op overhead dominates (small models), larger arrays win;
// where arithmetic dominates on a CPU, one model's forward and backward stay
// in cache and a large array can lose to the plain loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>

namespace hfta::core {

/// One training step of an array of the given size, already built and warmed up.
using ArrayStep = std::function<void()>;

struct ProbeOptions {
  double seconds_each = 0.1;   ///< time each size for about this long
  std::size_t min_steps = 3;   ///< and for at least this many steps
  double past_peak = 0.95;     ///< stop once a size falls below this share of the best rate
  double gain = 0.05;          ///< or once two sizes in a row gained less than this over the last gain
                               ///< (one, while no size has gained `fuse_gain` over one model)
  double fuse_gain = 0.05;     ///< the gain over one model that fusing must reach (fusion.min_gain)
  /// The model-steps the measured arrays will train (0: unknown). The probe
  /// then stops before its time would pass `max_share` of training them one
  /// model at a time (past size 2), and times sizes 1 and 2 for at most half
  /// that share each (past `min_steps`): a probe costing more than its sizing
  /// can save made short sweeps slower fused than not (MobileNetV3's, 12 trials
  /// of 30-270 steps: 10.4 s of probing against 24 s of training).
  double sized_steps = 0;
  double max_share = 0.1;
  std::function<double()> now; ///< seconds; a steady clock when empty
  /// Told the models in memory when an array ran out of it (is_out_of_memory:
  /// the array's, and the array of one timed beside a larger one), which ends
  /// the probe with the sizes before it (none: one model did not fit).
  std::function<void(std::int64_t)> out_of_memory;
};

/// Models x steps per second of arrays of 1, 2, 4, ... up to `most` models (and
/// `most` itself), from each size's median step; a size above one is timed
/// alternating with the array of one, and its rate is one model's rate times
/// its median step's speed-up over theirs in that time. Only steps that follow
/// a step of their own size are timed (the cache then holds their tensors, as
/// in training). `make_step(B)` builds
/// an array of B and returns its step; the first step of each is a warm-up.
/// Stops early once past the peak, on a plateau, at its time limit, or where
/// an array runs out of memory.
std::map<std::int64_t, double> probe_throughput(const std::function<ArrayStep(std::int64_t)>& make_step,
                                                std::int64_t most, const ProbeOptions& options = {});

}  // namespace hfta::core
