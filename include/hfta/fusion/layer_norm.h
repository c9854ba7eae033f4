// B layer norms at once, each model with its own scale and shift. In LibTorch
// that is a layer norm without affine followed by a broadcast multiply-add, and
// its backward a product, two reductions over the batch and the norm's own
// backward: five passes over memory where a plain LayerNorm makes two. At B >= 16
// the fused op ran at 0.6x of B plain ones. The direct kernel normalises, scales
// and shifts each row while it is in cache, and its backward does one row at a
// time, summing the affine gradients as it goes. Values match at::layer_norm's
// to rounding (the sums are ordered differently).
#pragma once

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Model b's layer norm of x[b] with weight[b] and bias[b]: x [B, N..., *shape],
/// weight and bias [B, *shape] -> x's shape. The direct kernel on CPU for float
/// and double, at::layer_norm and a broadcast multiply-add otherwise.
at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);

/// The direct kernels (CPU, float or double, all contiguous): x, out and grads
/// [B, R, D]; weight, bias and their gradients [B, D]; mean and rstd [B, R]
/// (saved by the forward for the backward). The backward overwrites its outputs.
void layer_norm_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            double eps, at::Tensor& out, at::Tensor& mean, at::Tensor& rstd);
void layer_norm_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                             const at::Tensor& mean, const at::Tensor& rstd, at::Tensor& grad_x,
                             at::Tensor& grad_weight, at::Tensor& grad_bias);

}  // namespace hfta::fusion
