// Lookups in B embedding tables at once. LibTorch 1.13's CPU index_select
// backward (index_add) zero-fills the whole [B * num, dim] gradient, then adds
// row by row through a tensor iterator; at B >= 16 that made the fused op half
// as fast as B plain embeddings, whose [num, dim] gradients stay in cache. The
// direct kernel zero-fills and accumulates one model's table at a time, and the
// forward copies rows. Values and gradients equal at::embedding's exactly
// (rows are copied; each gradient row sums its lookups in order).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Model b looks up indices[b] in weight[b]: weight [B, num, dim], indices
/// [B, N...] (int64, any strides: an expanded [N...] shares one batch) ->
/// [B, N..., dim]. padding_idx (-1: none, else in [0, num)) rows get no
/// gradient. The direct kernel on CPU for float and double, index_select on
/// the stacked tables otherwise. Throws std::out_of_range for an index outside
/// [0, num).
at::Tensor embed(const at::Tensor& weight, const at::Tensor& indices, std::int64_t padding_idx);

/// The direct kernels (CPU, float or double; weight, out and grads contiguous;
/// indices [B, N] int64 with any strides). The backward overwrites grad_weight.
void embedding_forward_cpu(const at::Tensor& weight, const at::Tensor& indices, at::Tensor& out);
void embedding_backward_cpu(const at::Tensor& grad_out, const at::Tensor& indices,
                            std::int64_t padding_idx, at::Tensor& grad_weight);

}  // namespace hfta::fusion
