#include "hfta/fusion/fused_activation.h"

#include <stdexcept>

#include <ATen/ATen.h>

#include "hfta/fusion/max_pool.h"

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

at::Tensor FusedMaxPool2dImpl::forward(const at::Tensor& x) {
  const auto& o = options;
  const bool square = (*o.kernel_size())[0] == (*o.kernel_size())[1];
  const bool direct = square && *o.stride() == *o.kernel_size() && (*o.padding())[0] == 0 &&
                      (*o.padding())[1] == 0 && (*o.dilation())[0] == 1 && (*o.dilation())[1] == 1 &&
                      !o.ceil_mode() && x.dim() == 4;
  return direct ? max_pool2d(x, (*o.kernel_size())[0]) : torch::nn::MaxPool2dImpl::forward(x);
}

}  // namespace hfta::fusion
