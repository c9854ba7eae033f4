// A BERT-style encoder trained with the masked-language-model loss, as a fused
// array of B models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hfta/fusion/fused_embedding.h"
#include "hfta/fusion/fused_layer_norm.h"
#include "hfta/fusion/fused_transformer_encoder_layer.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

struct BertShape {
  std::int64_t layers = 8, hidden = 512, heads = 8, seq_len = 128;  ///< feed-forward: 4 x hidden
};

/// The sizes of Turc et al. 2019 (google-research/bert's smaller models):
/// tiny 2/128/2, mini 4/256/4, small 4/512/8, medium 8/512/8 (layers/hidden/heads).
BertShape bert_shape(const std::string& size, std::int64_t seq_len);

/// Tokens [N, T] (masked input, the same for every model) -> logits over the
/// vocabulary at every position [B, N*T, vocab]; the loss counts the masked
/// positions only (labels elsewhere are kIgnoreLabel). GELU encoder layers,
/// post-norm, as BERT; the output layer is not tied to the embedding.
/// Plain form (names as an nn.Sequential in PyTorch): 0 TokenPositionEmbedding
/// (token: Embedding(vocab, H), position: Embedding(seq_len, H)), 1 LayerNorm(H),
/// 2 Dropout, then layers x EncoderLayer (layer: TransformerEncoderLayer(H,
/// heads, 4H, dropout, GELU), no mask), then the masked-LM head Linear(H, H),
/// GELU, LayerNorm(H), Linear(H, vocab), and Flatten(0, 1).
class FusedBert : public ArrayClassifier {
 public:
  FusedBert(std::int64_t models, std::int64_t vocab, BertShape shape, double dropout,
            const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& tokens) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  torch::nn::TransformerEncoderLayerOptions layer_options() const;
  std::size_t head_index() const { return static_cast<std::size_t>(3 + shape_.layers); }

  std::int64_t vocab_;
  BertShape shape_;
  double dropout_;
  fusion::FusedEmbedding token_{nullptr}, position_{nullptr};
  fusion::FusedLayerNorm embedding_norm_{nullptr}, head_norm_{nullptr};
  fusion::FusedDropout drop_{nullptr};
  std::vector<fusion::FusedTransformerEncoderLayer> layers_;
  fusion::FusedLinear transform_{nullptr}, decoder_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
