// PReLU with one slope per channel of dimension 1, as at::prelu computes it.
// LibTorch 1.13's CPU backward writes every element's share of the slope
// gradient into a tensor of the input's size and then reduces it; the direct
// loops below sum it per channel as they go, one pass forward and one back.
#pragma once

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// at::prelu(x, slopes) for x of [N, C, ...] and slopes of [C]: the direct
/// kernels on CPU for float or double, at::prelu otherwise. The values and the
/// input's gradient are at::prelu's exactly; the slopes' gradient is summed in
/// another order (equal within rounding). No double backward.
at::Tensor prelu(const at::Tensor& x, const at::Tensor& slopes);

/// The direct kernels themselves (CPU, contiguous x of [N, C, inner] with
/// `channels` = C, float or double). y = x > 0 ? x : slope * x; the backward
/// writes the input's gradient and adds each channel's slope gradient,
/// sum over x <= 0 of x * grad, into grad_slopes.
void prelu_forward_cpu(const at::Tensor& x, const at::Tensor& slopes, at::Tensor& y);
void prelu_backward_cpu(const at::Tensor& x, const at::Tensor& slopes, const at::Tensor& grad_y,
                        at::Tensor& grad_x, at::Tensor& grad_slopes);

}  // namespace hfta::fusion
