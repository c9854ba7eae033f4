#include "hfta/fusion/fused_layer_norm.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/layer_norm.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedLayerNormImpl::FusedLayerNormImpl(std::int64_t models, torch::nn::LayerNormOptions options,
                                       const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)) {
  std::vector<std::int64_t> shape = {models};
  for (auto s : options_.normalized_shape()) shape.push_back(s);
  if (options_.elementwise_affine()) {
    weight = register_parameter("weight", at::empty(shape, tensor_options));
    bias = register_parameter("bias", at::empty(shape, tensor_options));
  }
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, torch::nn::LayerNorm(options_));
}

at::Tensor FusedLayerNormImpl::forward(const at::Tensor& x) {
  if (take_tune_request() && models_ > 1) tune(x);
  if (!grouped(strategy_) && options_.elementwise_affine() && models_ > 1) {
    std::vector<at::Tensor> ys;
    for (std::int64_t b = 0; b < models_; ++b) {
      // The kernel an array of model b alone runs, on its slice: the same bits.
      ys.push_back(layer_norm(x.narrow(0, b, 1), weight.narrow(0, b, 1), bias.narrow(0, b, 1), options_.eps()));
    }
    return at::cat(ys);
  }
  if (!options_.elementwise_affine()) return at::layer_norm(x, options_.normalized_shape(), {}, {}, options_.eps());
  return layer_norm(x, weight, bias, options_.eps());
}

StrategyChoice FusedLayerNormImpl::tune(const at::Tensor& example) {
  return tune_strategy(*this, example, [this](const at::Tensor& x) { return forward(x); },
                       [this](Strategy s) { strategy_ = s; });
}

void FusedLayerNormImpl::load_slot(std::int64_t slot, const torch::nn::LayerNorm& plain) {
  if (!options_.elementwise_affine()) return;
  torch::NoGradGuard no_grad;
  weight[slot].copy_(plain->weight);
  bias[slot].copy_(plain->bias);
}

torch::nn::LayerNorm FusedLayerNormImpl::extract_slot(std::int64_t slot) const {
  torch::nn::LayerNorm plain(options_);
  if (!options_.elementwise_affine()) return plain;
  plain->to(weight.device(), weight.scalar_type());
  torch::NoGradGuard no_grad;
  plain->weight.copy_(weight[slot]);
  plain->bias.copy_(bias[slot]);
  return plain;
}

void FusedLayerNormImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<torch::nn::LayerNorm>(seed, options_));
}

}  // namespace hfta::fusion
