// Element-wise activations and pooling: the same for one model or B, because
// they never mix models. In the conv layout [N, B*C, H, W], a plain pooling
// module pools each model's channels on their own, so the fused array uses the
// plain LibTorch modules directly; these names document that choice.
#pragma once

#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

namespace hfta::fusion {

/// The activations a model of the zoo may use.
enum class Activation { kReLU, kLeakyReLU, kGELU, kSiLU, kHardswish, kTanh, kSigmoid };

/// Parses "relu", "leaky_relu", "gelu", "silu" (or "swish"), "hardswish", "tanh", "sigmoid".
Activation activation_from_name(const std::string& name);

/// Applies an activation to a tensor in either layout.
class FusedActivationImpl : public torch::nn::Module {
 public:
  explicit FusedActivationImpl(Activation kind, double negative_slope = 0.01)
      : kind_(kind), negative_slope_(negative_slope) {}
  at::Tensor forward(const at::Tensor& x);

 private:
  Activation kind_;
  double negative_slope_;
};
TORCH_MODULE(FusedActivation);

/// Max pooling in the conv layout [N, B*C, H, W]: the plain module's options
/// and results; non-overlapping windows (kernel = stride, no padding or
/// dilation, floor mode) take the direct kernel of max_pool.h.
class FusedMaxPool2dImpl : public torch::nn::MaxPool2dImpl {
 public:
  using torch::nn::MaxPool2dImpl::MaxPool2dImpl;
  at::Tensor forward(const at::Tensor& x);
};
TORCH_MODULE(FusedMaxPool2d);

/// Other pooling in the conv layout: the plain modules, per channel.
using FusedAvgPool2d = torch::nn::AvgPool2d;
using FusedAdaptiveAvgPool2d = torch::nn::AdaptiveAvgPool2d;

}  // namespace hfta::fusion
