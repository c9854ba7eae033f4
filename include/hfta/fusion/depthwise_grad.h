// The weight and bias gradients of a depthwise 2-D convolution in NCHW, summed
// channel by channel in one fixed order: each output channel's sums are made by
// one thread, the same way whatever the number of channels (models) or
// threads. oneDNN's grouped kernel splits its sums by channel count and thread
// count, so it gives a model other bits in an array of another size; taking
// the gradients model by model instead copies each model's slice of the input
// and the output gradient out of the array (the depthwise row of the op
// benchmark stayed at 0.7-0.95x of the per-model loop that way).
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
void depthwise_weight_grad_cpu(const at::Tensor& x, const at::Tensor& grad_y, const DepthwiseGeometry& g,
                               at::Tensor& grad_w, at::Tensor& grad_b);

}  // namespace hfta::fusion
