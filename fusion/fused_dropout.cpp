#include "hfta/fusion/fused_dropout.h"

#include <algorithm>
#include <stdexcept>

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

at::Tensor FusedDropoutImpl::masks(const at::Tensor& x, const std::vector<std::int64_t>& mask_shape) {
  const auto opts = x.options();
  if (generators_.empty()) return at::rand(mask_shape, opts);
  // Model by model from its own generator, each filling its own part of one
  // tensor (on the CPU: the masks then move to x's device).
  const auto models = static_cast<std::int64_t>(p_.size());
  const std::vector<at::Generator>* device = device_generators(x.device());
  at::Tensor mask = at::empty(mask_shape, device ? opts : opts.device(at::kCPU));
  const int dim = layout_ == Layout::kMatmul ? 0 : 1;
  const std::int64_t width = mask.size(dim) / models;
  for (std::int64_t b = 0; b < models; ++b) {
    mask.narrow(dim, b * width, width).uniform_(0, 1, device ? (*device)[b] : generators_[b]);
  }
  return mask.to(x.device());
}

void FusedDropoutImpl::set_p(std::int64_t slot, double p) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument("dropout probability must be in [0, 1]");
  p_.at(static_cast<std::size_t>(slot)) = p;
}

at::Tensor FusedDropoutImpl::forward(const at::Tensor& x) {
  // Dropping nothing is the identity, as at::dropout(x, 0) is: no mask drawn.
  if (!is_training() || std::all_of(p_.begin(), p_.end(), [](double p) { return p == 0; })) return x;
  const auto models = static_cast<std::int64_t>(p_.size());
  const auto opts = x.options();
  // Per-model keep probability and scale, shaped to broadcast over the input.
  at::Tensor keep = 1 - at::tensor(p_, opts.dtype(at::kDouble)).to(opts);
  std::vector<std::int64_t> mask_shape;
  std::vector<std::int64_t> p_view(x.dim(), 1);
  if (layout_ == Layout::kMatmul) {
    p_view[0] = models;
    mask_shape = x.sizes().vec();
    if (channels_) {
      // [B, N, C, ...]: one draw per (model, sample, channel).
      for (std::int64_t d = 3; d < x.dim(); ++d) mask_shape[d] = 1;
    }
  } else {
    const std::int64_t per_model = x.size(1) / models;
    keep = keep.repeat_interleave(per_model);
    p_view[1] = x.size(1);
    mask_shape = x.sizes().vec();
    if (channels_) {
      for (std::int64_t d = 2; d < x.dim(); ++d) mask_shape[d] = 1;
    }
  }
  keep = keep.view(p_view);
  const at::Tensor mask = masks(x, mask_shape) < keep;
  // A model that keeps nothing outputs zeros (not 0/0).
  const at::Tensor scale = at::where(keep > 0, 1 / keep, at::zeros_like(keep));
  return x * mask * scale;
}

}  // namespace hfta::fusion
