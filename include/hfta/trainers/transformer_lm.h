// A Transformer encoder language model (causal, character level) as a fused
// array of B models, and the plain modules its plain form is made of.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/transformerlayer.h>

#include "hfta/fusion/fused_embedding.h"
#include "hfta/fusion/fused_transformer_encoder_layer.h"
#include "hfta/trainers/array_classifier.h"

namespace hfta::trainers {

/// The additive mask that lets position i attend to positions <= i: [T, T], -inf above the diagonal.
at::Tensor causal_mask(std::int64_t length, const at::TensorOptions& options);

/// Token plus learned position embeddings: tokens [N, T] -> [N, T, dim].
class TokenPositionEmbeddingImpl : public torch::nn::Cloneable<TokenPositionEmbeddingImpl> {
 public:
  TokenPositionEmbeddingImpl(std::int64_t vocab, std::int64_t seq_len, std::int64_t dim);
  void reset() override;
  at::Tensor forward(const at::Tensor& tokens);
  torch::nn::Embedding token{nullptr}, position{nullptr};

 private:
  std::int64_t vocab_, seq_len_, dim_;
};
TORCH_MODULE(TokenPositionEmbedding);

/// torch::nn::TransformerEncoderLayer on batch-first [N, T, dim]; `causal`:
/// with the causal mask (language models), else every position sees all (BERT).
class EncoderLayerImpl : public torch::nn::Cloneable<EncoderLayerImpl> {
 public:
  EncoderLayerImpl(torch::nn::TransformerEncoderLayerOptions options, bool causal);
  void reset() override;
  at::Tensor forward(const at::Tensor& x);
  torch::nn::TransformerEncoderLayer layer{nullptr};

 private:
  torch::nn::TransformerEncoderLayerOptions options_;
  bool causal_;
};
TORCH_MODULE(EncoderLayer);

struct TransformerLmShape {
  std::int64_t d_model = 256, heads = 4, layers = 2, ff = 1024, seq_len = 128;
};

/// Tokens [N, T] (T <= seq_len), the same for every model -> next-token logits
/// [B, N*T, vocab] (the matmul layout, one row per position). Post-norm encoder
/// layers with ReLU, as torch::nn::TransformerEncoderLayer.
/// Plain form (names as an nn.Sequential in PyTorch): 0 TokenPositionEmbedding
/// (token: Embedding(vocab, d), position: Embedding(seq_len, d), summed),
/// 1 Dropout, 2..layers+1 EncoderLayer (layer: TransformerEncoderLayer(d,
/// heads, ff, dropout) called with the causal mask), then Linear(d, vocab) and
/// Flatten(0, 1).
class FusedTransformerLm : public ArrayClassifier {
 public:
  FusedTransformerLm(std::int64_t models, std::int64_t vocab, TransformerLmShape shape, double dropout,
                     const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& tokens) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  torch::nn::TransformerEncoderLayerOptions layer_options() const;

  std::int64_t vocab_;
  TransformerLmShape shape_;
  double dropout_;
  fusion::FusedEmbedding token_{nullptr}, position_{nullptr};
  fusion::FusedDropout drop_{nullptr};
  std::vector<fusion::FusedTransformerEncoderLayer> layers_;
  fusion::FusedLinear head_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
