#include "hfta/fusion/batch_norm.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// Buffers the forward updates in place (no gradient; either may be undefined).
/// Not a tensor argument, so autograd does not take them for inputs.
struct RunningStats {
  at::Tensor mean, var;
};

/// The direct kernels (the planes' or, for the matmul layout, the rows') as one
/// autograd node; it keeps the input, the weight and each channel's mean and 1/std. Without affine parameters, weight and bias
/// are ones and zeros that need no gradient.
struct DirectBatchNorm : torch::autograd::Function<DirectBatchNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, RunningStats running, double momentum, double eps, bool rows) {
    at::Tensor out = at::empty_like(x);
    at::Tensor mean = at::empty({weight.numel()}, x.options());
    at::Tensor invstd = at::empty_like(mean);
    (rows ? batch_norm_rows_forward_cpu : batch_norm_forward_cpu)(x, weight, bias, running.mean, running.var, momentum,
                                                                  eps, out, mean, invstd);
    ctx->saved_data["rows"] = rows;
    ctx->save_for_backward({x, weight, mean, invstd});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor grad_out = grads[0].contiguous();
    at::Tensor grad_x = at::empty_like(x);
    at::Tensor grad_weight = at::empty_like(weight);
    at::Tensor grad_bias = at::empty_like(weight);
    (ctx->saved_data["rows"].toBool() ? batch_norm_rows_backward_cpu : batch_norm_backward_cpu)(
        grad_out, x, weight, saved[2], saved[3], grad_x, grad_weight, grad_bias);
    return {grad_x, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

bool direct_applies(const at::Tensor& x, const at::Tensor& weight) {
  return x.is_cpu() && x.dim() >= 3 && x.is_contiguous() && x.numel() > 0 &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble) &&
         (!weight.defined() || weight.scalar_type() == x.scalar_type());
}

at::Tensor direct(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                  const at::Tensor& running_mean, const at::Tensor& running_var, double momentum, double eps,
                  bool rows) {
  const std::int64_t channels = rows ? x.size(0) * x.size(2) : x.size(1);
  const at::Tensor w = weight.defined() ? weight : at::ones({channels}, x.options());
  const at::Tensor b = bias.defined() ? bias : at::zeros({channels}, x.options());
  return DirectBatchNorm::apply(x, w, b, RunningStats{running_mean, running_var}, momentum, eps, rows);
}

}  // namespace

at::Tensor batch_norm_training(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                               const at::Tensor& running_mean, const at::Tensor& running_var, double momentum,
                               double eps) {
  for (const at::Tensor& t : {weight, bias, running_mean, running_var}) {
    if (t.defined() && (x.dim() < 2 || t.numel() != x.size(1))) {
      throw std::invalid_argument("batch norm: input " + c10::str(x.sizes()) + " does not have the " +
                                  std::to_string(t.numel()) + " channels of its parameters");
    }
  }
  if (!direct_applies(x, weight)) {
    return at::batch_norm(x, weight, bias, running_mean, running_var, /*training=*/true, momentum, eps,
                          /*cudnn_enabled=*/true);
  }
  return direct(x, weight, bias, running_mean, running_var, momentum, eps, /*rows=*/false);
}

bool batch_norm_rows_direct(const at::Tensor& x) {
  return x.is_cpu() && x.dim() == 3 && x.is_contiguous() && x.numel() > 0 &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
}

at::Tensor batch_norm_training_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                    const at::Tensor& running_mean, const at::Tensor& running_var,
                                    double momentum, double eps) {
  const std::int64_t channels = x.dim() == 3 ? x.size(0) * x.size(2) : -1;
  for (const at::Tensor& t : {weight, bias, running_mean, running_var}) {
    if (t.defined() && t.numel() != channels) {
      throw std::invalid_argument("batch norm: input " + c10::str(x.sizes()) + " is not [B, N, C] for " +
                                  std::to_string(t.numel()) + " channels of its parameters");
    }
  }
  if (batch_norm_rows_direct(x) && (!weight.defined() || weight.scalar_type() == x.scalar_type())) {
    return direct(x, weight, bias, running_mean, running_var, momentum, eps, /*rows=*/true);
  }
  const std::int64_t c = x.size(2);
  auto part = [c](const at::Tensor& t, std::int64_t b) { return t.defined() ? t.narrow(0, b * c, c) : t; };
  std::vector<at::Tensor> ys;
  for (std::int64_t b = 0; b < x.size(0); ++b) {
    ys.push_back(at::batch_norm(x[b], part(weight, b), part(bias, b), part(running_mean, b), part(running_var, b),
                                /*training=*/true, momentum, eps, /*cudnn_enabled=*/true));
  }
  return at::stack(ys);
}

}  // namespace hfta::fusion
