// A 2-D convolution of B models computed channels-last, on CPU, where oneDNN's
// NCHW kernels serve the array badly: its blocked NCHW layouts take input
// channels in 8s and 16s, so a group of, say, LeNet's 6 channels falls back to
// GEMM kernels (0.56x of one plain convolution per model), while channels-last
// has a direct kernel for any channel count. Measured on a 2-core Xeon:
// MobileNetV3-Small (its depthwise convolutions) trained 1.7x-2x faster at
// B = 2 to 8, and LeNet's second convolution went from 0.7x-1.1x of the
// per-model loop to 1.0x-1.25x (experiments/results/fused_ops_bench-cpu.md).
//
// Each model's numbers must not depend on the array it trains in, or a fused
// sweep would drift from `--fusion off` (one model per array). oneDNN's
// channels-last forward and input gradient give each group bitwise what one
// model's convolution gives, but its grouped weight gradient reduces in another
// order than the one-group kernel. So the weight and bias gradients are taken
// model by model, with the one-group kernel, at every B including 1: a model's
// every number is the same whatever B (tested bitwise).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Whether a convolution with `in_per_group` input channels per group and
/// `groups` groups per model takes the channels-last path for input x: CPU,
/// float32, not under autocast, a channel count oneDNN's blocked NCHW kernels do
/// not take (not a multiple of 8), and not a one-channel, one-group first layer.
bool channels_last_applies(const at::Tensor& x, std::int64_t in_per_group, std::int64_t groups);

struct ConvGeometry {
  std::vector<std::int64_t> stride, padding, dilation;
  std::int64_t groups = 1;  ///< per model
};

/// Whether a depthwise convolution (one input and one output channel per
/// group) of stride 1 with a 3x3 or 5x5 kernel, and padding its input gradient
/// can take, runs the direct NCHW kernels (depthwise.h) instead: they compute
/// all B models image by image in memory order, each plane alike at any B.
/// The layout follows from the layer's shape alone, never from B or a
/// measurement, so that a model computes alike in an array of any size (the
/// two layouts differ at float rounding). Timed on the 2-core Xeon, the rule
/// picks the faster layout for MobileNetV3-Small's depthwise layers at B = 1,
/// 3 and 8 but for two: 5x5 at 1x1 pixels, B >= 3 (20% slower than
/// channels-last), and 5x5 of stride 2 at 4x4 pixels, B = 1 (13% slower than NCHW).
bool direct_depthwise(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& geometry,
                      std::int64_t models);

/// at::conv2d(x, weight, bias, stride, padding, dilation, models * groups) for
/// x [N, B*C_in, H, W] (any layout), weight [B*C_out, C_in/groups, kh, kw],
/// bias [B*C_out] or undefined; returns contiguous NCHW. `grouped` computes the
/// forward and input gradient as one grouped convolution, otherwise model by
/// model: the same numbers either way, so a measured choice between them
/// changes only the time (a direct depthwise convolution computes alike either
/// way).
at::Tensor channels_last_conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                const ConvGeometry& geometry, std::int64_t models, bool grouped);

}  // namespace hfta::fusion
