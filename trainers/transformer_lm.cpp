#include "hfta/trainers/transformer_lm.h"

#include <limits>

#include <ATen/ATen.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "hfta/fusion/layout.h"
#include "hfta/fusion/module_cast.h"
#include "plain_layers.h"

namespace hfta::trainers {
at::Tensor causal_mask(std::int64_t length, const at::TensorOptions& options) {
  return at::full({length, length}, -std::numeric_limits<double>::infinity(), options).triu(1);
}

TokenPositionEmbeddingImpl::TokenPositionEmbeddingImpl(std::int64_t vocab, std::int64_t seq_len, std::int64_t dim)
    : vocab_(vocab), seq_len_(seq_len), dim_(dim) {
  reset();
}

void TokenPositionEmbeddingImpl::reset() {
  token = register_module("token", torch::nn::Embedding(vocab_, dim_));
  position = register_module("position", torch::nn::Embedding(seq_len_, dim_));
}

at::Tensor TokenPositionEmbeddingImpl::forward(const at::Tensor& tokens) {
  const at::Tensor positions = at::arange(tokens.size(1), tokens.options().dtype(at::kLong));
  return token->forward(tokens) + position->forward(positions);
}

EncoderLayerImpl::EncoderLayerImpl(torch::nn::TransformerEncoderLayerOptions options, bool causal)
    : options_(std::move(options)), causal_(causal) {
  reset();
}

void EncoderLayerImpl::reset() { layer = register_module("layer", torch::nn::TransformerEncoderLayer(options_)); }

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x) {
  // LibTorch's layer takes [T, N, d].
  const at::Tensor mask = causal_ ? causal_mask(x.size(1), x.options()) : at::Tensor();
  return layer->forward(x.transpose(0, 1), mask).transpose(0, 1);
}

FusedTransformerLm::FusedTransformerLm(std::int64_t models, std::int64_t vocab, TransformerLmShape shape,
                                       double dropout, const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), vocab_(vocab), shape_(shape), dropout_(dropout), options_(tensor_options) {
  token_ = register_module("token", fusion::FusedEmbedding(models, torch::nn::EmbeddingOptions(vocab, shape.d_model),
                                                           tensor_options));
  position_ = register_module(
      "position", fusion::FusedEmbedding(models, torch::nn::EmbeddingOptions(shape.seq_len, shape.d_model),
                                         tensor_options));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout),
                                                          fusion::Layout::kMatmul));
  for (std::int64_t i = 0; i < shape.layers; ++i) {
    layers_.push_back(register_module("layer" + std::to_string(i),
                                      fusion::FusedTransformerEncoderLayer(models, layer_options(), tensor_options)));
  }
  head_ = register_module("head", fusion::FusedLinear(models, shape.d_model, vocab, true, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

torch::nn::TransformerEncoderLayerOptions FusedTransformerLm::layer_options() const {
  return torch::nn::TransformerEncoderLayerOptions(shape_.d_model, shape_.heads)
      .dim_feedforward(shape_.ff)
      .dropout(dropout_);
}

at::Tensor FusedTransformerLm::forward(const at::Tensor& tokens) {
  const std::int64_t n = tokens.size(0), t = tokens.size(1);
  const at::Tensor positions = at::arange(t, tokens.options().dtype(at::kLong));
  // [B, N, T, d] + [B, 1, T, d]
  at::Tensor x = token_->forward(tokens) + position_->forward(positions).unsqueeze(1);
  x = drop_->forward(x);
  const at::Tensor mask = causal_mask(t, x.options());
  for (auto& layer : layers_) x = layer->forward(x, mask);
  return head_->forward(x.reshape({models_, n * t, shape_.d_model}));
}

torch::nn::Sequential FusedTransformerLm::make_plain() const {
  using namespace torch::nn;
  Sequential net;
  net->push_back(TokenPositionEmbedding(vocab_, shape_.seq_len, shape_.d_model));
  net->push_back(Dropout(dropout_));
  for (std::int64_t i = 0; i < shape_.layers; ++i) net->push_back(EncoderLayer(layer_options(), /*causal=*/true));
  net->push_back(Linear(shape_.d_model, vocab_));
  net->push_back(Flatten(FlattenOptions().start_dim(0).end_dim(1)));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedTransformerLm::resized(std::int64_t models) const {
  return std::make_shared<FusedTransformerLm>(models, vocab_, shape_, dropout_, options_);
}

void FusedTransformerLm::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  const auto embedding = plain->ptr(0)->as<TokenPositionEmbeddingImpl>();
  token_->load_slot(slot, embedding->token);
  position_->load_slot(slot, embedding->position);
  for (std::int64_t i = 0; i < shape_.layers; ++i) {
    layers_[static_cast<std::size_t>(i)]->load_slot(
        slot, plain->ptr(static_cast<std::size_t>(2 + i))->as<EncoderLayerImpl>()->layer);
  }
  head_->load_slot(slot, torch::nn::Linear(std::dynamic_pointer_cast<torch::nn::LinearImpl>(
                             plain->ptr(static_cast<std::size_t>(2 + shape_.layers)))));
}

torch::nn::Sequential FusedTransformerLm::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  const auto embedding = plain->ptr(0)->as<TokenPositionEmbeddingImpl>();
  copy_parameters(*token_->extract_slot(slot), *embedding->token);
  copy_parameters(*position_->extract_slot(slot), *embedding->position);
  for (std::int64_t i = 0; i < shape_.layers; ++i) {
    copy_parameters(*layers_[static_cast<std::size_t>(i)]->extract_slot(slot),
                    *plain->ptr(static_cast<std::size_t>(2 + i))->as<EncoderLayerImpl>()->layer);
  }
  copy_parameters(*head_->extract_slot(slot), *plain->ptr(static_cast<std::size_t>(2 + shape_.layers)));
  return plain;
}

void FusedTransformerLm::set_dropout(std::int64_t slot, double p) {
  drop_->set_p(slot, p);
  for (auto& layer : layers_) layer->set_dropout(slot, p);
}

}  // namespace hfta::trainers
