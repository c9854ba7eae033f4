#include "hfta/fusion/fused_linear.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/batched_matmul.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedLinearImpl::FusedLinearImpl(std::int64_t models, std::int64_t in_features,
                                 std::int64_t out_features, bool bias,
                                 const at::TensorOptions& options)
    : models_(models), in_(in_features), out_(out_features), has_bias_(bias) {
  weight = register_parameter("weight", at::empty({models, in_features, out_features}, options));
  if (bias) this->bias = register_parameter("bias", at::empty({models, out_features}, options));
  // Each slot starts as a plain Linear would, drawing from the global generator.
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, torch::nn::Linear(plain_options()));
}

torch::nn::LinearOptions FusedLinearImpl::plain_options() const {
  return torch::nn::LinearOptions(in_, out_).bias(has_bias_);
}

at::Tensor FusedLinearImpl::forward(const at::Tensor& x) {
  // [B, N, in] as it is: a reshape and a view back would add two autograd nodes,
  // which at small shapes cost as much as the products.
  if (x.dim() == 3 && x.size(0) == models_) return batched_matmul(x, weight, has_bias_ ? bias : at::Tensor());
  // Any number of batch dimensions per model: fold them into one for the batched product.
  const auto sizes = x.sizes();
  const at::Tensor flat = x.reshape({models_, -1, in_});
  at::Tensor y = batched_matmul(flat, weight, has_bias_ ? bias : at::Tensor());
  std::vector<std::int64_t> out(sizes.begin(), sizes.end());
  out.back() = out_;
  return y.view(out);
}

void FusedLinearImpl::load_slot(std::int64_t slot, const torch::nn::Linear& plain) {
  load_slot(slot, plain->weight, plain->bias);
}

void FusedLinearImpl::load_slot(std::int64_t slot, const at::Tensor& plain_weight,
                                const at::Tensor& plain_bias) {
  torch::NoGradGuard no_grad;
  weight[slot].copy_(plain_weight.t());
  if (has_bias_) bias[slot].copy_(plain_bias);
}

std::pair<at::Tensor, at::Tensor> FusedLinearImpl::slot_tensors(std::int64_t slot) const {
  return {weight[slot].t(), has_bias_ ? bias[slot] : at::Tensor()};
}

torch::nn::Linear FusedLinearImpl::extract_slot(std::int64_t slot) const {
  torch::nn::Linear plain(plain_options());
  plain->to(weight.device(), weight.scalar_type());
  torch::NoGradGuard no_grad;
  const auto [w, b] = slot_tensors(slot);
  plain->weight.copy_(w);
  if (has_bias_) plain->bias.copy_(b);
  return plain;
}

void FusedLinearImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<torch::nn::Linear>(seed, plain_options()));
}

}  // namespace hfta::fusion
