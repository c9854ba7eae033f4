#include "hfta/fusion/fused_prelu.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/prelu.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedPReLUImpl::FusedPReLUImpl(std::int64_t models, torch::nn::PReLUOptions options, Layout layout,
                               const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)), layout_(layout) {
  weight = register_parameter("weight", at::empty({models, options_.num_parameters()}, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, torch::nn::PReLU(options_));
}

at::Tensor FusedPReLUImpl::forward(const at::Tensor& x) {
  // PReLU takes one slope per channel of dimension 1: in the conv layout that
  // is exactly model b's channels; one slope per model repeats over its channels.
  // (One fused kernel, prelu.h: an at::where formulation ran at 0.4x of B plain modules.)
  if (layout_ == Layout::kConv) {
    const std::int64_t per_model = x.size(1) / models_;
    const at::Tensor slopes = options_.num_parameters() == 1
                                  ? weight.expand({models_, per_model}).reshape({-1})
                                  : weight.reshape({-1});
    return fusion::prelu(x, slopes);
  }
  // Matmul layout [B, N, C...]: move the models next to the channels, [N, B*C, ...].
  auto sizes = x.sizes().vec();
  std::vector<std::int64_t> conv = {sizes[1], sizes[0] * (x.dim() > 2 ? sizes[2] : 1)};
  conv.insert(conv.end(), sizes.begin() + std::min<std::size_t>(3, sizes.size()), sizes.end());
  const std::int64_t per_model = conv[1] / models_;
  const at::Tensor slopes = options_.num_parameters() == 1
                                ? weight.expand({models_, per_model}).reshape({-1})
                                : weight.reshape({-1});
  const at::Tensor y = fusion::prelu(x.transpose(0, 1).reshape(conv), slopes);
  std::vector<std::int64_t> stacked = {sizes[1], sizes[0]};
  stacked.insert(stacked.end(), sizes.begin() + 2, sizes.end());
  return y.view(stacked).transpose(0, 1);
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
  load_slot(slot, seeded<torch::nn::PReLU>(seed, options_));
}

}  // namespace hfta::fusion
