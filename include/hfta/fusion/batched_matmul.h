// Batched matrix products of many small matrices. LibTorch 1.13's CPU bmm,
// built without MKL (as Debian's is), runs a batch of products above 400
// multiply-adds one by one through the dispatcher: three select()s, a conj
// check and an addmm per item, several microseconds each. Attention in an array
// is such a batch (models x samples x heads products of, say, 64x16 by 16x64),
// so that overhead outweighed the arithmetic; so it did for an array of small
// linear layers (B products of, say, 32x64 by 64x64). This op calls the BLAS that
// LibTorch uses (sgemm_/dgemm_) for each item directly, reading strided and
// transposed operands in place, forward and backward.
#pragma once

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// at::bmm(a, b) for a [N, M, K] and b [N, K, P], or with bias [N, P]
/// at::baddbmm(bias.unsqueeze(1), a, b): the direct loop on CPU for float and
/// double when the process has a BLAS with sgemm_/dgemm_ and CPU autocast is
/// off, LibTorch's otherwise.
/// Differentiable in every operand.
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {});

}  // namespace hfta::fusion
