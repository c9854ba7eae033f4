// B multi-head attentions as one: batched projections, one attention product.
#pragma once

#include <cstdint>
#include <tuple>

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/fused_linear.h"

namespace hfta::fusion {

/// Layout: query [B, N, L, E], key and value [B, N, S, E] (matmul layout, each
/// model's batch first) -> output [B, N, L, E] and, when asked, attention weights
/// averaged over heads [B, N, L, S]. Masks are shared by all models (they see the
/// same batch): key_padding_mask [N, S] (true: ignore that key), attn_mask [L, S]
/// added to the scores (boolean: true means -inf, as in PyTorch; LibTorch 1.13's
/// C++ module would add the booleans as 0 and 1).
/// Parameters: in_proj (a FusedLinear E -> 3E holding torch::nn::MultiheadAttention's
/// in_proj_weight/in_proj_bias), out_proj (FusedLinear E -> E). The attention
/// dropout rate can differ per model. Supported: kdim = vdim = embed_dim, no
/// add_bias_kv, no add_zero_attn (as the zoo's models use).
class FusedMultiheadAttentionImpl : public torch::nn::Module {
 public:
  FusedMultiheadAttentionImpl(std::int64_t models, torch::nn::MultiheadAttentionOptions options,
                              const at::TensorOptions& tensor_options = {});

  std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& query, const at::Tensor& key,
                                             const at::Tensor& value,
                                             const at::Tensor& key_padding_mask = {},
                                             bool need_weights = false,
                                             const at::Tensor& attn_mask = {});

  void load_slot(std::int64_t slot, const torch::nn::MultiheadAttention& plain);
  torch::nn::MultiheadAttention extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);
  /// Model b's attention dropout rate.
  void set_dropout(std::int64_t slot, double p) { attn_dropout->set_p(slot, p); }

  FusedLinear in_proj{nullptr};
  FusedLinear out_proj{nullptr};
  FusedDropout attn_dropout{nullptr};

 private:
  std::int64_t models_;
  torch::nn::MultiheadAttentionOptions options_;
};
TORCH_MODULE(FusedMultiheadAttention);

}  // namespace hfta::fusion
