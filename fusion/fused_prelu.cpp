#include "hfta/fusion/fused_prelu.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedPReLUImpl::FusedPReLUImpl(std::int64_t models, torch::nn::PReLUOptions options, Layout layout,
                               const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)), layout_(layout) {
  weight = register_parameter("weight", at::empty({models, options_.num_parameters()}, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, torch::nn::PReLU(options_));
}

at::Tensor FusedPReLUImpl::forward(const at::Tensor& x) {
  std::vector<std::int64_t> view(x.dim(), 1);
  at::Tensor slopes = weight;
  if (layout_ == Layout::kConv) {
    const std::int64_t per_model = x.size(1) / models_;
    // One slope per model repeats over its channels; C slopes line up with them.
    if (options_.num_parameters() == 1) slopes = slopes.expand({models_, per_model});
    view[1] = x.size(1);
  } else {
    view[0] = models_;
    if (x.dim() > 2) view[2] = options_.num_parameters();
  }
  slopes = slopes.reshape(view);
  // torch::nn::PReLU: x where x > 0, slope * x elsewhere.
  return at::where(x > 0, x, slopes * x);
}

void FusedPReLUImpl::load_slot(std::int64_t slot, const torch::nn::PReLU& plain) {
  torch::NoGradGuard no_grad;
  weight[slot].copy_(plain->weight);
}

torch::nn::PReLU FusedPReLUImpl::extract_slot(std::int64_t slot) const {
  torch::nn::PReLU plain(options_);
  plain->to(weight.device(), weight.scalar_type());
  torch::NoGradGuard no_grad;
  plain->weight.copy_(weight[slot]);
  return plain;
}

void FusedPReLUImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  ScopedSeed scoped(seed);
  load_slot(slot, torch::nn::PReLU(options_));
}

}  // namespace hfta::fusion
