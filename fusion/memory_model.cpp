#include "hfta/fusion/memory_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hfta::fusion {

MemoryModel::MemoryModel(double fixed_bytes, double per_model_bytes)
    : fixed_(std::max(0.0, fixed_bytes)), per_model_(per_model_bytes) {
  if (!(per_model_bytes > 0)) throw std::invalid_argument("per-model bytes must be > 0");
}

MemoryModel MemoryModel::fit(std::int64_t models_a, double bytes_a, std::int64_t models_b,
                             double bytes_b) {
  if (models_a == models_b) throw std::invalid_argument("fit needs two different array sizes");
  const double slope = (bytes_b - bytes_a) / static_cast<double>(models_b - models_a);
  // Noise can make the line flat or negative; a model always costs something.
  const double per_model = std::max(slope, 1.0);
  const double fixed = bytes_a - per_model * static_cast<double>(models_a);
  MemoryModel m(fixed, per_model);
  m.peaks_[models_a] = bytes_a;
  m.peaks_[models_b] = bytes_b;
  return m;
}

std::int64_t MemoryModel::max_models(double available_bytes) const {
  if (available_bytes < bytes(1)) return 0;
  return static_cast<std::int64_t>(std::floor((available_bytes - fixed_) / per_model_));
}

void MemoryModel::observe_peak(std::int64_t models, double peak_bytes) {
  peaks_[models] = std::max(peaks_[models], peak_bytes);
  if (peaks_.size() >= 2) {
    auto hi = peaks_.rbegin();
    auto lo = std::next(hi);
    *this = [&] {
      MemoryModel refit = fit(lo->first, lo->second, hi->first, hi->second);
      refit.peaks_ = peaks_;
      return refit;
    }();
  } else if (bytes(models) < peak_bytes) {
    per_model_ = (peak_bytes - fixed_) / static_cast<double>(models);
  }
}

void MemoryModel::observe_out_of_memory(std::int64_t models, double available_bytes) {
  // After this, bytes(models) exceeds what was available by a margin of 1%.
  const double needed = available_bytes * 1.01;
  if (bytes(models) < needed) per_model_ = (needed - fixed_) / static_cast<double>(models);
}

void ThroughputCurve::record(std::int64_t models, double models_per_second) {
  rate_[models] = models_per_second;
}

std::optional<std::int64_t> ThroughputCurve::saturation(double tolerance, double min_gain) const {
  if (rate_.size() < 2) return std::nullopt;
  double best = 0;
  for (const auto& [b, r] : rate_) best = std::max(best, r);
  if (auto one = rate_.find(1); one != rate_.end() && best <= one->second * (1.0 + min_gain)) return 1;
  // Still growing at the largest size measured: larger arrays may pay more.
  const auto last = rate_.rbegin(), before = std::next(last);
  if (last->second >= best && last->second > before->second * (1.0 + tolerance)) return std::nullopt;
  for (const auto& [b, r] : rate_) {
    if (r >= best * (1.0 - tolerance)) return b;
  }
  return rate_.rbegin()->first;
}

}  // namespace hfta::fusion
