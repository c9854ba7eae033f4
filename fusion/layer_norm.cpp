#include "hfta/fusion/layer_norm.h"

#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The direct kernels as one autograd node over [B, R, D] views; it keeps the
/// input, the weights and each row's mean and reciprocal deviation.
struct DirectLayerNorm : torch::autograd::Function<DirectLayerNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    const std::int64_t models = weight.size(0), dim = weight.numel() / models;
    const at::Tensor in = x.contiguous().view({models, x.numel() / (models * dim), dim});
    const at::Tensor w = weight.contiguous().view({models, dim});
    at::Tensor out = at::empty_like(in);
    at::Tensor mean = at::empty({models, in.size(1)}, in.options());
    at::Tensor rstd = at::empty_like(mean);
    layer_norm_forward_cpu(in, w, bias.contiguous().view({models, dim}), eps, out, mean, rstd);
    ctx->save_for_backward({in, w, mean, rstd});
    ctx->saved_data["x_sizes"] = x.sizes();
    ctx->saved_data["weight_sizes"] = weight.sizes();
    return out.view(x.sizes());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& in = saved[0];
    const at::Tensor grad_out = grads[0].contiguous().view(in.sizes());
    at::Tensor grad_x = at::empty_like(in);
    at::Tensor grad_weight = at::empty_like(saved[1]);
    at::Tensor grad_bias = at::empty_like(saved[1]);
    layer_norm_backward_cpu(grad_out, in, saved[1], saved[2], saved[3], grad_x, grad_weight, grad_bias);
    const auto weight_sizes = ctx->saved_data["weight_sizes"].toIntVector();
    return {grad_x.view(ctx->saved_data["x_sizes"].toIntVector()), grad_weight.view(weight_sizes),
            grad_bias.view(weight_sizes), at::Tensor()};
  }
};

/// A layer norm without affine, then each model's scale and shift broadcast over
/// its batch: for devices and dtypes the direct kernel does not take. (Group norm
/// with one group per model computes the same in one kernel, but its transposes
/// made it 4x slower on CPU.)
at::Tensor normalise_then_scale(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                double eps) {
  const auto shape = weight.sizes().slice(1);
  const at::Tensor y = at::layer_norm(x, shape, {}, {}, eps);
  // [B, 1, ..., 1, *shape] broadcasts over each model's batch dims.
  std::vector<std::int64_t> view(x.dim(), 1);
  view[0] = weight.size(0);
  std::copy(shape.begin(), shape.end(), view.end() - static_cast<std::ptrdiff_t>(shape.size()));
  return at::addcmul(bias.view(view), y, weight.view(view));
}

}  // namespace

at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  const auto shape = weight.sizes().slice(1);
  if (x.dim() < weight.dim() || x.size(0) != weight.size(0) || bias.sizes() != weight.sizes() ||
      x.sizes().slice(x.dim() - static_cast<std::int64_t>(shape.size())) != shape) {
    throw std::invalid_argument("fused layer norm: input " + c10::str(x.sizes()) + " is not [" +
                                std::to_string(weight.size(0)) + ", N..., " + c10::str(shape) +
                                "] for weight " + c10::str(weight.sizes()));
  }
  const bool direct = x.is_cpu() && x.numel() > 0 && x.scalar_type() == weight.scalar_type() &&
                      bias.scalar_type() == weight.scalar_type() &&
                      (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
  return direct ? DirectLayerNorm::apply(x, weight, bias, eps) : normalise_then_scale(x, weight, bias, eps);
}

}  // namespace hfta::fusion
