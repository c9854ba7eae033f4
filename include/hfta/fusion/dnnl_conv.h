// The convolutions of B models, each on its own channels of the conv layout,
// computed by oneDNN reading and writing those channels where they lie.
//
// On CPU an array's convolutions run model by model with oneDNN's one-model
// kernels (fused_conv.cpp says why: grouped, oneDNN sums a model's channels in
// another order than alone). Through ATen that meant copying each model's
// channels out of the conv layout [N, B*C, ...] and the outputs back together,
// forward and backward: four passes over the activations the per-model loop
// does not make, 0.77x-0.85x of it (fused_ops_bench, fourteenth session).
// oneDNN takes a tensor of any strides: one model's channels are a strided
// tensor [N, C, ...] (batch stride B*C*pixels), which its reorder into the
// kernel's blocked layout reads as cheaply as a dense one, and whose output
// reorder writes into y's slice directly. Each model's convolution is the same
// primitive on the same blocked data at any B, so it computes bitwise alike.
//
// Built where oneDNN's headers are (Debian's libdnnl-dev, the library ATen's
// own convolutions call); elsewhere dnnl_conv_applies is false.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "hfta/fusion/channels_last_conv.h"

namespace hfta::fusion {

/// Whether dnnl_conv computes this convolution: oneDNN built in, float32 on the
/// CPU, not under autocast, 1-D or 2-D.
bool dnnl_conv_applies(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& g);

/// Model b's convolution of its channels of x (conv layout [N, B*C, ...]) with
/// its rows of weight ([B*O, C/groups, k...]) and bias ([B*O] or undefined),
/// for every b: the conv layout [N, B*O, ...]. With `shared`, x is one input
/// [N, C, ...] every model reads (it takes no gradient then).
at::Tensor dnnl_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, const ConvGeometry& g,
                     std::int64_t models, bool shared = false);

/// The same for a transposed convolution (ConvTranspose's weight [B*C_in,
/// C_out/groups, k...], oneDNN's deconvolution): whether it applies (also: an
/// output padding no larger than the padding) ...
bool dnnl_conv_transpose_applies(const at::Tensor& x, const at::Tensor& weight, const ConvGeometry& g,
                                 const std::vector<std::int64_t>& output_padding);
/// ... and model b's transposed convolution of its channels of x, for every b.
at::Tensor dnnl_conv_transpose(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                               const ConvGeometry& g, const std::vector<std::int64_t>& output_padding,
                               std::int64_t models);

}  // namespace hfta::fusion
