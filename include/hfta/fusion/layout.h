// Tensor layouts of fused arrays, and moves between them.
//
// Every fused op holds B models. Activations flow in one of two layouts:
//  - matmul layout: [B, N, ...features]: the model dimension first, then each
//    model's own batch. Linear, LayerNorm, BatchNorm1d, Embedding outputs,
//    attention and matmul-style dropout use it.
//  - conv layout: [N, B*C, ...spatial]: the batch first, the B models' channels
//    stacked along dimension 1 (model b owns channels [b*C, (b+1)*C)). Conv,
//    BatchNorm2d, BatchNorm1d after Conv1d, pooling and Dropout2d use it, so that one grouped convolution
//    computes all B models.
// Element-wise activations work in either layout.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Where the model dimension sits in an op's input.
enum class Layout {
  kMatmul,  ///< [B, N, ...]
  kConv,    ///< [N, B*C, ...]
};

/// [B, N, C, ...spatial] (one tensor per model, stacked) -> conv layout [N, B*C, ...spatial].
at::Tensor stack_to_conv(const at::Tensor& x);

/// Conv layout [N, B*C, ...spatial] -> [B, N, C, ...spatial].
at::Tensor conv_to_stack(const at::Tensor& x, std::int64_t models);

/// Conv layout [N, B*C, ...spatial] -> matmul layout [B, N, C*prod(spatial)]: each
/// model's features flattened in the order torch::flatten(x, 1) gives a plain model.
at::Tensor conv_to_matmul(const at::Tensor& x, std::int64_t models);

/// Matmul layout [B, N, C*prod(spatial)] -> conv layout [N, B*C, ...spatial].
at::Tensor matmul_to_conv(const at::Tensor& x, std::int64_t channels,
                          const std::vector<std::int64_t>& spatial);

/// The same input for every model: [N, ...] -> matmul layout [B, N, ...] (a view).
at::Tensor broadcast_to_models(const at::Tensor& x, std::int64_t models);

}  // namespace hfta::fusion
