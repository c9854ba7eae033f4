// B Transformer encoder layers (post-norm, as torch::nn::TransformerEncoderLayer)
// built from the fused attention, linear, layer norm and dropout ops.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/transformerlayer.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/fused_activation.h"
#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/fused_layer_norm.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/fusion/fused_multihead_attention.h"

namespace hfta::fusion {

/// Layout: src [B, N, L, E] -> [B, N, L, E]; src_mask [L, L] and
/// src_key_padding_mask [N, L] are shared by the models. Sub-modules and their
/// names follow torch::nn::TransformerEncoderLayer (self_attn, linear1, dropout,
/// linear2, norm1, norm2, dropout1, dropout2); every dropout rate can differ per
/// model. Activation: relu or gelu.
class FusedTransformerEncoderLayerImpl : public torch::nn::Module {
 public:
  FusedTransformerEncoderLayerImpl(std::int64_t models,
                                   torch::nn::TransformerEncoderLayerOptions options,
                                   const at::TensorOptions& tensor_options = {});

  at::Tensor forward(const at::Tensor& src, const at::Tensor& src_mask = {},
                     const at::Tensor& src_key_padding_mask = {});

  void load_slot(std::int64_t slot, const torch::nn::TransformerEncoderLayer& plain);
  torch::nn::TransformerEncoderLayer extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);
  /// Model b's dropout rate, everywhere in the layer.
  void set_dropout(std::int64_t slot, double p);

  FusedMultiheadAttention self_attn{nullptr};
  FusedLinear linear1{nullptr}, linear2{nullptr};
  FusedLayerNorm norm1{nullptr}, norm2{nullptr};
  FusedDropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  FusedActivation activation{nullptr};

 private:
  std::int64_t models_;
  torch::nn::TransformerEncoderLayerOptions options_;
};
TORCH_MODULE(FusedTransformerEncoderLayer);

}  // namespace hfta::fusion
