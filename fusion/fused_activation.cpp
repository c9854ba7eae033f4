#include "hfta/fusion/fused_activation.h"

#include <stdexcept>

#include <ATen/ATen.h>

namespace hfta::fusion {

Activation activation_from_name(const std::string& name) {
  if (name == "relu") return Activation::kReLU;
  if (name == "leaky_relu") return Activation::kLeakyReLU;
  if (name == "gelu") return Activation::kGELU;
  if (name == "silu" || name == "swish") return Activation::kSiLU;
  if (name == "hardswish") return Activation::kHardswish;
  if (name == "tanh") return Activation::kTanh;
  if (name == "sigmoid") return Activation::kSigmoid;
  throw std::invalid_argument("unknown activation '" + name + "'");
}

at::Tensor FusedActivationImpl::forward(const at::Tensor& x) {
  switch (kind_) {
    case Activation::kReLU: return at::relu(x);
    case Activation::kLeakyReLU: return at::leaky_relu(x, negative_slope_);
    case Activation::kGELU: return at::gelu(x);
    case Activation::kSiLU: return at::silu(x);
    case Activation::kHardswish: return at::hardswish(x);
    case Activation::kTanh: return at::tanh(x);
    case Activation::kSigmoid: return at::sigmoid(x);
  }
  throw std::logic_error("unknown activation");
}

}  // namespace hfta::fusion
