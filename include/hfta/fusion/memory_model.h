// How many models fit in one array: a linear memory model per fusion key, fitted
// from measurements, corrected on out-of-memory, and capped where throughput
// stops growing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace hfta::fusion {

/// Bytes an array of B models needs: fixed + per_model * B. The fixed part is the
/// input batch, workspace and allocator slack; the per-model part is parameters,
/// gradients, optimizer state and activations.
class MemoryModel {
 public:
  MemoryModel(double fixed_bytes, double per_model_bytes);

  /// The line through two measured peaks at different array sizes.
  static MemoryModel fit(std::int64_t models_a, double bytes_a, std::int64_t models_b,
                         double bytes_b);

  double fixed_bytes() const { return fixed_; }
  double per_model_bytes() const { return per_model_; }
  double bytes(std::int64_t models) const { return fixed_ + per_model_ * static_cast<double>(models); }

  /// The largest B with bytes(B) <= available (0 when not even one fits).
  std::int64_t max_models(double available_bytes) const;

  /// Records a measured peak; from two array sizes on, the model is the line
  /// through the two largest, never below what was measured.
  void observe_peak(std::int64_t models, double peak_bytes);

  /// An array of `models` ran out of memory with `available_bytes` free: raise
  /// the per-model part so that max_models(available) < models from now on.
  void observe_out_of_memory(std::int64_t models, double available_bytes);

 private:
  double fixed_;
  double per_model_;
  std::map<std::int64_t, double> peaks_;
};

/// Models per second measured at array sizes; tells where growing B stops paying.
class ThroughputCurve {
 public:
  void record(std::int64_t models, double models_per_second);

  /// The smallest measured B whose throughput is within `tolerance` of the best
  /// measured one; nullopt before two sizes are measured, and while the largest
  /// measured size is still more than `tolerance` faster than the one before.
  /// 1 when no size beat one model by more than `min_gain`: a gain that small
  /// is within the timings' noise, and an array that is not faster only
  /// delays its models' results.
  std::optional<std::int64_t> saturation(double tolerance = 0.05, double min_gain = 0) const;

 private:
  std::map<std::int64_t, double> rate_;
};

}  // namespace hfta::fusion
