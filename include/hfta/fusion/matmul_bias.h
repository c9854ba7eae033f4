// The bias of a batched product (batched_matmul.h), forward and backward, as
// direct loops: LibTorch's broadcast copy and its sum over rows cost more in
// dispatch than in arithmetic at an array's small shapes, and its sum splits
// the work by the whole tensor's size, so an item's bias gradient came out
// differently in arrays of different sizes.
#pragma once

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// c[i, r, :] = bias[i, :] for every row r (CPU, float or double, both contiguous;
/// c [N, M, P], bias [N, P]).
void broadcast_bias_rows_cpu(const at::Tensor& bias, at::Tensor& c);

/// out[i, :] = the sum over r of grad[i, r, :], rows in order, accumulated in
/// double (CPU, float or double, contiguous; grad [N, M, P], out [N, P]): an
/// item's sum is the same whatever N.
void sum_rows_cpu(const at::Tensor& grad, at::Tensor& out);

}  // namespace hfta::fusion
