// Training-mode batch norm on CPU, channel by channel. LibTorch 1.13 collects
// each channel's mean and variance with scalar loops in double (about 1.6 ns
// per element for forward and backward together), and the plain modules of a
// per-model loop pay the same; an array's batch norm is one such call over
// B x C channels. The direct kernel takes each channel's sums in vector lanes
// (still accumulating in double) and makes its later passes while the
// channel's values are in cache. Values match at::batch_norm's to rounding;
// running statistics are updated as LibTorch does (unbiased variance).
#pragma once

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// at::batch_norm(x, weight, bias, running_mean, running_var, training=true,
/// momentum, eps) for x [N, C, *] (weight, bias and running statistics may be
/// undefined): the direct kernel on CPU for contiguous float or double input of
/// three or more dimensions, at::batch_norm otherwise.
at::Tensor batch_norm_training(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                               const at::Tensor& running_mean, const at::Tensor& running_var, double momentum,
                               double eps);

/// Batch norm of the matmul layout x [B, N, C], each model b's channel c over
/// x[b, :, c] (weight, bias and running statistics [B*C], slot b owning
/// [b*C, (b+1)*C); any may be undefined): one direct call for all B models on
/// CPU for contiguous float or double input, and for any B a model computes
/// bit for bit alike; at::batch_norm model by model otherwise.
at::Tensor batch_norm_training_rows(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                    const at::Tensor& running_mean, const at::Tensor& running_var,
                                    double momentum, double eps);

/// Whether batch_norm_training_rows takes its direct kernel for x.
bool batch_norm_rows_direct(const at::Tensor& x);

/// The direct kernels (CPU, float or double, contiguous; x and grads viewed as
/// [N, C, S]; weight and bias may be undefined, then 1 and 0; so may the running
/// statistics, then they are not updated). The forward writes out and each
/// channel's mean and 1/sqrt(var + eps); the backward writes grad_x and, where
/// defined, grad_weight and grad_bias.
void batch_norm_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps,
                            at::Tensor& out, at::Tensor& mean, at::Tensor& invstd);
void batch_norm_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                             const at::Tensor& mean, const at::Tensor& invstd, at::Tensor& grad_x,
                             at::Tensor& grad_weight, at::Tensor& grad_bias);

/// The same for the matmul layout [B, N, C] (mean and invstd [B*C]).
void batch_norm_rows_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                 at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps,
                                 at::Tensor& out, at::Tensor& mean, at::Tensor& invstd);
void batch_norm_rows_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                                  const at::Tensor& mean, const at::Tensor& invstd, at::Tensor& grad_x,
                                  at::Tensor& grad_weight, at::Tensor& grad_bias);

}  // namespace hfta::fusion
