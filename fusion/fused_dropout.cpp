#include "hfta/fusion/fused_dropout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

// A CUDA LibTorch (the GPU machine's) brings CUDA generators; Debian's CPU one does not.
#if __has_include(<ATen/cuda/CUDAGeneratorImpl.h>) && __has_include(<cuda_runtime_api.h>)
#include <ATen/cuda/CUDAGeneratorImpl.h>
#define HFTA_CUDA_GENERATORS 1
#endif

namespace hfta::fusion {

FusedDropoutImpl::FusedDropoutImpl(std::vector<double> p, Layout layout, bool channels)
    : p_(std::move(p)), layout_(layout), channels_(channels) {
  for (std::size_t b = 0; b < p_.size(); ++b) set_p(static_cast<std::int64_t>(b), p_[b]);
}

namespace {
std::vector<double> rates_of(const at::Tensor& p) {
  if (p.dim() != 1 || !p.is_floating_point()) {
    throw std::invalid_argument("dropout rates: expected a 1-D floating tensor of one rate per model, got " +
                                std::to_string(p.dim()) + "-D " + std::string(c10::toString(p.scalar_type())));
  }
  const at::Tensor host = p.detach().to(at::kCPU, at::kDouble).contiguous();
  return {host.data_ptr<double>(), host.data_ptr<double>() + host.numel()};
}
}  // namespace

FusedDropoutImpl::FusedDropoutImpl(const at::Tensor& p, Layout layout, bool channels)
    : FusedDropoutImpl(rates_of(p), layout, channels) {}

void FusedDropoutImpl::seed_slot(std::int64_t slot, std::uint64_t seed) {
  if (generators_.empty()) {
    for (std::size_t b = 0; b < p_.size(); ++b) {
      generators_.push_back(at::make_generator<at::CPUGeneratorImpl>(b + 1));
      seeds_.push_back(b + 1);
    }
  }
  generators_.at(static_cast<std::size_t>(slot)).set_current_seed(seed);
  seeds_.at(static_cast<std::size_t>(slot)) = seed;
  if (!device_generators_.empty()) device_generators_.at(static_cast<std::size_t>(slot)).set_current_seed(seed);
}

const std::vector<at::Generator>* FusedDropoutImpl::device_generators(const c10::Device& device) {
#ifdef HFTA_CUDA_GENERATORS
  if (device.is_cuda()) {
    // Made at the first draw after seeding (no draw in between, so the same as
    // at seeding); a module moved to another GPU starts from its seeds again.
    if (device_generators_.empty() || device_ != device) {
      device_generators_.clear();
      for (std::uint64_t seed : seeds_) {
        device_generators_.push_back(at::make_generator<at::CUDAGeneratorImpl>(device.index()));
        device_generators_.back().set_current_seed(seed);
      }
      device_ = device;
    }
    return &device_generators_;
  }
#endif
  (void)device;
  return nullptr;
}

at::Tensor FusedDropoutImpl::noise(const at::Tensor& x, const std::vector<std::int64_t>& shape,
                                   const at::Tensor& keep, const at::Tensor& scale) {
  const auto opts = x.options();
  const auto models = static_cast<std::int64_t>(p_.size());
  const int dim = layout_ == Layout::kMatmul ? 0 : 1;
  const std::int64_t width = shape[dim] / models;
  at::Tensor noise;
  if (generators_.empty()) {
    noise = at::rand(shape, opts);  // one draw for the whole array
  } else {
    // Model by model from its own generator, each filling its own part of one
    // tensor (on the CPU: the draws then move to x's device).
    const std::vector<at::Generator>* device = device_generators(x.device());
    noise = at::empty(shape, device ? opts : opts.device(at::kCPU));
    for (std::int64_t b = 0; b < models; ++b) {
      noise.narrow(dim, b * width, width).uniform_(0, 1, device ? (*device)[b] : generators_[b]);
    }
    noise = noise.to(x.device());
  }
  // Then, for all models in two passes, 1/keep where the draw is below keep,
  // else 0 (not model by model: 2B small ops, where an MLP 784-32-32-10 array
  // of 32 steps in a few milliseconds).
  std::vector<std::int64_t> view(shape.size(), 1);
  view[dim] = shape[dim];
  auto along = [&](const at::Tensor& t) { return t.repeat_interleave(width).to(x.device()).view(view); };
  return noise.lt_(along(keep)).mul_(along(scale));
}

void FusedDropoutImpl::set_p(std::int64_t slot, double p) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("dropout probability must be in [0, 1]");
  p_.at(static_cast<std::size_t>(slot)) = p;
}

at::Tensor FusedDropoutImpl::forward(const at::Tensor& x) {
  // Dropping nothing is the identity, as at::dropout(x, 0) is: no mask drawn.
  if (!is_training() || std::all_of(p_.begin(), p_.end(), [](double p) { return p == 0; })) return x;
  // Per-model keep probability and scale in x's dtype, on the CPU; a model that
  // keeps nothing outputs zeros (not 0/0).
  const at::Tensor keep = (1 - at::tensor(p_, at::kDouble)).to(x.scalar_type());
  const at::Tensor scale = at::where(keep > 0, 1 / keep, at::zeros_like(keep));
  std::vector<std::int64_t> shape = x.sizes().vec();
  if (channels_) {
    // One draw per (model, sample, channel): [B, N, C, ...] or [N, B*C, ...].
    for (std::int64_t d = layout_ == Layout::kMatmul ? 3 : 2; d < x.dim(); ++d) shape[d] = 1;
  }
  // One multiplier per element, 1/keep or 0, as at::dropout's noise: x * mask *
  // scale would take two more passes over x, forward and backward, which at
  // large B (out of cache) cost the array a fifth of the per-model loop's speed.
  // The bits are the same: x * (1/keep) is (x * 1) * (1/keep).
  return x * noise(x, shape, keep, scale);
}

}  // namespace hfta::fusion
