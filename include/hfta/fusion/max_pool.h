// Non-overlapping max pooling (kernel = stride, no padding, floor mode), the
// pooling of LeNet-style models. LibTorch 1.13's CPU max_pool2d runs a generic
// windowed loop that measured about 3.5 ns per input element on this machine,
// so a LeNet array spent a quarter of its step there; a direct loop over each
// window's k x k values is several times faster. Values and gradients equal
// at::max_pool2d's exactly: the first maximum of a window wins, a NaN wins
// over numbers (the last NaN), and the gradient goes to the winner only.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// at::max_pool2d(x, {kernel, kernel}) for x of [N, C, H, W] (any layout): the
/// direct kernel on CPU for contiguous float or double, at::max_pool2d otherwise.
at::Tensor max_pool2d(const at::Tensor& x, std::int64_t kernel);

/// at::relu(at::max_pool2d(x, {kernel, kernel})) in one pass, values and
/// gradients exactly (ReLU after the pooling touches a k-th of the values that
/// ReLU before it would, and with the pooling's own pass none at all).
at::Tensor relu_max_pool2d(const at::Tensor& x, std::int64_t kernel);

/// A winner meaning "no gradient": the window's maximum was at most 0 and ReLU
/// zeroed it (NaN is not cut: at::relu keeps it, and its backward passes it).
constexpr std::uint8_t kNoWinner = 255;

/// The direct kernels themselves (CPU, contiguous [N, C, H, W], float or
/// double). The forward writes each window's winner as its position in the
/// window, row-major (with `relu`, kNoWinner where ReLU cut the maximum); the
/// backward puts each output's gradient there and zeros the rest of the input.
void max_pool2d_forward_cpu(const at::Tensor& x, std::int64_t kernel, at::Tensor& out,
                            at::Tensor& winner, bool relu = false);
void max_pool2d_backward_cpu(const at::Tensor& grad_out, const at::Tensor& winner,
                             std::int64_t kernel, at::Tensor& grad_in);

}  // namespace hfta::fusion
