// Mixed precision for fused arrays: LibTorch's autocast around the forward
// pass, and dynamic loss scaling kept per model, so one model's overflow skips
// that model's step only and halves its scale only, as torch.cuda.amp's
// GradScaler would for the model trained alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "hfta/fusion/precision.h"

namespace hfta::fusion {

/// Whether autocast is on for a device type (in this thread).
bool autocast_enabled(c10::DeviceType type);

/// Autocast on `device`'s type for its lifetime (nothing for kFloat32): the
/// previous autocast state comes back, and the cast cache is cleared, on exit.
/// Autocast state is per thread, so each worker's arrays are independent.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false, was_enabled_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  at::ScalarType was_dtype_ = at::kFloat;
};

/// Dynamic loss scaling per model, with GradScaler's defaults: each model's
/// loss is multiplied by its scale before backward; its gradients are divided
/// by it after; a model whose gradients hold Inf or NaN skips the step and
/// halves its scale; 2000 good steps in a row double it.
class PerModelLossScaler {
 public:
  struct Options {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    std::int64_t growth_interval = 2000;
  };
  PerModelLossScaler(std::int64_t models, Options options);

  /// per_model [B] times each model's scale.
  at::Tensor scale(const at::Tensor& per_model) const;
  /// Divides each model's gradient rows ([B, ...] parameters) by its scale and
  /// returns which models found Inf or NaN (one host read for all of them).
  std::vector<bool> unscale(const std::vector<at::Tensor>& params) const;
  /// After the step: back off where found, else count towards growth.
  void update(const std::vector<bool>& found_inf);

  double scale_of(std::int64_t model) const { return scales_.at(static_cast<std::size_t>(model)); }
  std::int64_t growth_tracker(std::int64_t model) const { return trackers_.at(static_cast<std::size_t>(model)); }
  void set(std::int64_t model, double scale, std::int64_t growth_tracker);
  std::int64_t models() const { return static_cast<std::int64_t>(scales_.size()); }

 private:
  Options options_;
  std::vector<double> scales_;
  std::vector<std::int64_t> trackers_;
};

}  // namespace hfta::fusion
