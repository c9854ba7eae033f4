// A 1x1 convolution of B models (stride 1, no padding, one group) as one
// matrix product per model: the conv layout's pixels are the rows, a model's
// input channels the columns, read in place where they already lie so
// (channels-last) and gathered once otherwise. oneDNN's grouped NCHW kernel is
// fast for such layers but sums a model's channels in another order than one
// model's kernel does (tests/fusion/fused_conv_test.cpp), so a model would
// compute differently in arrays of different sizes; channels-last it was 1.5x-3x
// slower for MobileNetV3's 1x1 layers at B = 8. The product per model runs the
// BLAS's gemm with the same sizes at any B (batched_matmul.h): a model's every
// number is the same in an array of any size, including one.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Whether a convolution with a 1x1 kernel, stride 1, no padding and one group
/// per model runs as products per model on x: a 3-D or 4-D float or double
/// input on CPU, not under autocast (the products are the BLAS's own calls).
bool pointwise_applies(const at::Tensor& x);

/// at::conv1d/conv2d(x, weight, bias, 1, 0, 1, models) for x [N, B*C_in, *S]
/// (any layout; S one or two spatial sizes), weight [B*C_out, C_in, 1...] and
/// bias [B*C_out] or undefined; returns [N, B*C_out, *S], contiguous.
/// Differentiable in every operand.
at::Tensor pointwise_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            std::int64_t models);

}  // namespace hfta::fusion
