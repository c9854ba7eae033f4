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

/// at::conv2d(x, weight, bias, stride, padding, dilation, models * groups) for
/// x [N, B*C_in, H, W] (any layout), weight [B*C_out, C_in/groups, kh, kw],
/// bias [B*C_out] or undefined; returns contiguous NCHW. `grouped` computes the
/// forward and input gradient as one grouped convolution, otherwise model by
/// model: the same numbers either way, so a measured choice between them
/// changes only the time. `channels_last` false computes the same way in NCHW
/// (oneDNN's NCHW depthwise kernel also gives each group bitwise what one
/// model's gives), which is faster for some depthwise layers (strategy.h).
at::Tensor channels_last_conv2d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                const ConvGeometry& geometry, std::int64_t models, bool grouped,
                                bool channels_last = true);

}  // namespace hfta::fusion
