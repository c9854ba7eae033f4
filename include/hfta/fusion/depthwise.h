// Direct kernels of a depthwise 2-D convolution in NCHW on CPU (float): the
// forward and input gradient as correlations (stride 1, 3x3 and 5x5), and the
// weight and bias gradients (any geometry), each summed in one fixed order: each output channel's sums are made by
// one thread, the same way whatever the number of channels (models) or
// threads. oneDNN's grouped kernel splits its sums by channel count and thread
// count, so it gives a model other bits in an array of another size; taking
// the gradients model by model instead copies each model's slice of the input
// and the output gradient out of the array (the depthwise row of the op
// benchmark stayed at 0.7-0.95x of the per-model loop that way). All of them
// go image by image, where the array's channels of one image lie together:
// oneDNN's grouped kernels read a channel's images a whole image of B models
// apart, and lose the cache the per-model loop keeps.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

struct DepthwiseGeometry {
  std::int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

/// For x [N, C, H, W] and grad_y [N, C*m, OH, OW] (contiguous float CPU
/// tensors; output channel o reads input channel o / m): the gradient of
/// weight [C*m, 1, KH, KW], written into grad_w (contiguous, that shape), and,
/// when grad_b is defined ([C*m]), of the bias. Each image's products are
/// summed in float (eight lanes over the plane), those sums in double.
/// out[n, c] = bias[c] + sum over taps (kh, kw) of weight[c, 0, kh, kw] *
/// in[n, c, y + kh * dilation_h - pad_h, x + kw * dilation_w - pad_w] (zero
/// outside), with the taps reversed when `flip`: for in [N, C, H, W], weight
/// [C, 1, K, K] with K*K 9 or 25, bias [C] or undefined, stride 1, and out
/// [N, C, OH, OW] of the correlation's size (contiguous float CPU tensors).
/// The forward is one (no flip); the input gradient, when C is the output's
/// channel count and dilation * (K - 1) >= padding, is the output gradient's
/// with the taps flipped and padding dilation * (K - 1) - padding.
void depthwise_correlate_cpu(const at::Tensor& in, const at::Tensor& weight, const at::Tensor& bias,
                             const DepthwiseGeometry& g, bool flip, at::Tensor& out);

void depthwise_weight_grad_cpu(const at::Tensor& x, const at::Tensor& grad_y, const DepthwiseGeometry& g,
                               at::Tensor& grad_w, at::Tensor& grad_b);

}  // namespace hfta::fusion
