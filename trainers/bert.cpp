#include "hfta/trainers/bert.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "hfta/fusion/module_cast.h"
#include "hfta/trainers/transformer_lm.h"
#include "plain_layers.h"

namespace hfta::trainers {
namespace {

template <typename Impl>
std::shared_ptr<Impl> layer_at(const torch::nn::Sequential& plain, std::size_t index) {
  return std::dynamic_pointer_cast<Impl>(plain->ptr(index));
}

}  // namespace

BertShape bert_shape(const std::string& size, std::int64_t seq_len) {
  BertShape s;
  s.seq_len = seq_len;
  if (size == "tiny") s.layers = 2, s.hidden = 128, s.heads = 2;
  else if (size == "mini") s.layers = 4, s.hidden = 256, s.heads = 4;
  else if (size == "small") s.layers = 4, s.hidden = 512, s.heads = 8;
  else if (size == "medium") s.layers = 8, s.hidden = 512, s.heads = 8;
  else throw std::invalid_argument("BERT size " + size + " is not one of tiny, mini, small, medium");
  return s;
}

FusedBert::FusedBert(std::int64_t models, std::int64_t vocab, BertShape shape, double dropout,
                     const at::TensorOptions& tensor_options)
    : ArrayClassifier(models), vocab_(vocab), shape_(shape), dropout_(dropout), options_(tensor_options) {
  const std::int64_t h = shape.hidden;
  token_ = register_module("token", fusion::FusedEmbedding(models, torch::nn::EmbeddingOptions(vocab, h), tensor_options));
  position_ = register_module(
      "position", fusion::FusedEmbedding(models, torch::nn::EmbeddingOptions(shape.seq_len, h), tensor_options));
  embedding_norm_ = register_module("embedding_norm",
                                    fusion::FusedLayerNorm(models, torch::nn::LayerNormOptions({h}), tensor_options));
  drop_ = register_module("dropout", fusion::FusedDropout(std::vector<double>(models, dropout), fusion::Layout::kMatmul));
  for (std::int64_t i = 0; i < shape.layers; ++i) {
    layers_.push_back(register_module("layer" + std::to_string(i),
                                      fusion::FusedTransformerEncoderLayer(models, layer_options(), tensor_options)));
  }
  transform_ = register_module("transform", fusion::FusedLinear(models, h, h, true, tensor_options));
  head_norm_ = register_module("head_norm", fusion::FusedLayerNorm(models, torch::nn::LayerNormOptions({h}), tensor_options));
  decoder_ = register_module("decoder", fusion::FusedLinear(models, h, vocab, true, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, make_plain());
}

torch::nn::TransformerEncoderLayerOptions FusedBert::layer_options() const {
  return torch::nn::TransformerEncoderLayerOptions(shape_.hidden, shape_.heads)
      .dim_feedforward(4 * shape_.hidden)
      .dropout(dropout_)
      .activation(torch::kGELU);
}

at::Tensor FusedBert::forward(const at::Tensor& tokens) {
  const std::int64_t n = tokens.size(0), t = tokens.size(1);
  const at::Tensor positions = at::arange(t, tokens.options().dtype(at::kLong));
  at::Tensor x = token_->forward(tokens) + position_->forward(positions).unsqueeze(1);  // [B, N, T, H]
  x = drop_->forward(embedding_norm_->forward(x));
  for (auto& layer : layers_) x = layer->forward(x);
  x = x.reshape({models_, n * t, shape_.hidden});
  x = head_norm_->forward(at::gelu(transform_->forward(x)));
  return decoder_->forward(x);
}

torch::nn::Sequential FusedBert::make_plain() const {
  using namespace torch::nn;
  const std::int64_t h = shape_.hidden;
  Sequential net;
  net->push_back(TokenPositionEmbedding(vocab_, shape_.seq_len, h));
  net->push_back(LayerNorm(LayerNormOptions({h})));
  net->push_back(Dropout(dropout_));
  for (std::int64_t i = 0; i < shape_.layers; ++i) net->push_back(EncoderLayer(layer_options(), /*causal=*/false));
  net->push_back(Linear(h, h));
  net->push_back(GELU());
  net->push_back(LayerNorm(LayerNormOptions({h})));
  net->push_back(Linear(h, vocab_));
  net->push_back(Flatten(FlattenOptions().start_dim(0).end_dim(1)));
  fusion::to_floating(*net, options_.dtype().toScalarType());
  return net;
}

std::shared_ptr<ArrayClassifier> FusedBert::resized(std::int64_t models) const {
  return std::make_shared<FusedBert>(models, vocab_, shape_, dropout_, options_);
}

void FusedBert::load_slot(std::int64_t slot, const torch::nn::Sequential& plain) {
  const auto embedding = layer_at<TokenPositionEmbeddingImpl>(plain, 0);
  token_->load_slot(slot, embedding->token);
  position_->load_slot(slot, embedding->position);
  embedding_norm_->load_slot(slot, torch::nn::LayerNorm(layer_at<torch::nn::LayerNormImpl>(plain, 1)));
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->load_slot(slot, layer_at<EncoderLayerImpl>(plain, 3 + i)->layer);
  }
  transform_->load_slot(slot, torch::nn::Linear(layer_at<torch::nn::LinearImpl>(plain, head_index())));
  head_norm_->load_slot(slot, torch::nn::LayerNorm(layer_at<torch::nn::LayerNormImpl>(plain, head_index() + 2)));
  decoder_->load_slot(slot, torch::nn::Linear(layer_at<torch::nn::LinearImpl>(plain, head_index() + 3)));
}

torch::nn::Sequential FusedBert::extract_slot(std::int64_t slot) const {
  torch::nn::Sequential plain = make_plain();
  const auto embedding = layer_at<TokenPositionEmbeddingImpl>(plain, 0);
  copy_parameters(*token_->extract_slot(slot), *embedding->token);
  copy_parameters(*position_->extract_slot(slot), *embedding->position);
  copy_parameters(*embedding_norm_->extract_slot(slot), *plain->ptr(1));
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    copy_parameters(*layers_[i]->extract_slot(slot), *layer_at<EncoderLayerImpl>(plain, 3 + i)->layer);
  }
  copy_parameters(*transform_->extract_slot(slot), *plain->ptr(head_index()));
  copy_parameters(*head_norm_->extract_slot(slot), *plain->ptr(head_index() + 2));
  copy_parameters(*decoder_->extract_slot(slot), *plain->ptr(head_index() + 3));
  return plain;
}

void FusedBert::set_dropout(std::int64_t slot, double p) {
  drop_->set_p(slot, p);
  for (auto& layer : layers_) layer->set_dropout(slot, p);
}

}  // namespace hfta::trainers
