#include "hfta/fusion/mixed_precision.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

// LibTorch 2.4 replaced the per-device autocast calls (is_cpu_enabled,
// set_autocast_gpu_dtype, ...) with ones taking the device type, and
// deprecated the old ones; the GPU machine's LibTorch is 2.x, Debian's 1.13.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define HFTA_AUTOCAST_BY_DEVICE_TYPE 1
#endif

namespace hfta::fusion {
namespace {

void set_autocast(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
#ifdef HFTA_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_enabled(type, enabled);
  at::autocast::set_autocast_dtype(type, dtype);
#else
  if (type == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

at::ScalarType autocast_dtype(c10::DeviceType type) {
#ifdef HFTA_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
#endif
}

}  // namespace

bool autocast_enabled(c10::DeviceType type) {
#ifdef HFTA_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names{"fp32", "bf16", "fp16"};
  return names;
}

Precision precision_from_name(const std::string& name) {
  const auto& names = precision_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Precision>(i);
  }
  throw std::invalid_argument("unknown precision '" + name + "' (fp32, bf16 or fp16)");
}

const char* precision_name(Precision p) { return precision_names()[static_cast<std::size_t>(p)].c_str(); }

AutocastScope::AutocastScope(Precision precision, const c10::Device& device) {
  if (precision == Precision::kFloat32) return;
  active_ = true;
  type_ = device.type();
  was_enabled_ = autocast_enabled(type_);
  was_dtype_ = autocast_dtype(type_);
  set_autocast(type_, true, precision == Precision::kBFloat16 ? at::kBFloat16 : at::kHalf);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // As torch.autocast's exit: the casts of the weights are cached for the
  // scope only, so the optimizer's updates are seen by the next forward.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(type_, was_enabled_, was_dtype_);
}

PerModelLossScaler::PerModelLossScaler(std::int64_t models, Options options)
    : options_(options),
      scales_(static_cast<std::size_t>(models), options.init_scale),
      trackers_(static_cast<std::size_t>(models), 0) {}

at::Tensor PerModelLossScaler::scale(const at::Tensor& per_model) const {
  return per_model * at::tensor(scales_, per_model.options().dtype(at::kDouble)).to(per_model.scalar_type());
}

std::vector<bool> PerModelLossScaler::unscale(const std::vector<at::Tensor>& params) const {
  const std::int64_t b = models();
  std::vector<double> inverse;
  for (double s : scales_) inverse.push_back(1.0 / s);
  at::Tensor finite;
  at::NoGradGuard no_grad;
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;
    at::Tensor rows = p.mutable_grad().view({b, -1});
    // GradScaler multiplies by the float32 reciprocal; a power of two is exact.
    rows.mul_(at::tensor(inverse, rows.options().dtype(at::kDouble)).to(rows.scalar_type()).view({b, 1}));
    const at::Tensor ok = at::isfinite(rows).all(1);
    finite = finite.defined() ? finite.logical_and(ok) : ok;
  }
  std::vector<bool> found(static_cast<std::size_t>(b), false);
  if (!finite.defined()) return found;
  const at::Tensor host = finite.cpu();
  const bool* f = host.data_ptr<bool>();
  for (std::int64_t i = 0; i < b; ++i) found[static_cast<std::size_t>(i)] = !f[i];
  return found;
}

void PerModelLossScaler::update(const std::vector<bool>& found_inf) {
  for (std::size_t i = 0; i < scales_.size(); ++i) {
    if (found_inf.at(i)) {
      scales_[i] *= options_.backoff_factor;
      trackers_[i] = 0;
    } else if (++trackers_[i] == options_.growth_interval) {
      scales_[i] *= options_.growth_factor;
      trackers_[i] = 0;
    }
  }
}

void PerModelLossScaler::set(std::int64_t model, double scale, std::int64_t growth_tracker) {
  scales_.at(static_cast<std::size_t>(model)) = scale;
  trackers_.at(static_cast<std::size_t>(model)) = growth_tracker;
}

}  // namespace hfta::fusion
