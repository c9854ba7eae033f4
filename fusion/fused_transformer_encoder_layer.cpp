#include "hfta/fusion/fused_transformer_encoder_layer.h"

#include <stdexcept>
#include <variant>

#include <ATen/ATen.h>

#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {
namespace {

// LibTorch 1.13 holds the activation in a c10::variant, later ones in std::variant.
using std::holds_alternative;

Activation activation_of(const torch::nn::TransformerEncoderLayerOptions& o) {
  if (holds_alternative<torch::enumtype::kReLU>(o.activation())) return Activation::kReLU;
  if (holds_alternative<torch::enumtype::kGELU>(o.activation())) return Activation::kGELU;
  throw std::invalid_argument("fused encoder layers support relu and gelu activations");
}

}  // namespace

FusedTransformerEncoderLayerImpl::FusedTransformerEncoderLayerImpl(
    std::int64_t models, torch::nn::TransformerEncoderLayerOptions options,
    const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)) {
  const std::int64_t d = options_.d_model(), ff = options_.dim_feedforward();
  const std::vector<double> p(models, options_.dropout());
  self_attn = register_module(
      "self_attn",
      FusedMultiheadAttention(
          models, torch::nn::MultiheadAttentionOptions(d, options_.nhead()).dropout(options_.dropout()),
          tensor_options));
  linear1 = register_module("linear1", FusedLinear(models, d, ff, true, tensor_options));
  dropout = register_module("dropout", FusedDropout(p, Layout::kMatmul));
  linear2 = register_module("linear2", FusedLinear(models, ff, d, true, tensor_options));
  const auto norm = torch::nn::LayerNormOptions({d}).eps(1e-5);
  norm1 = register_module("norm1", FusedLayerNorm(models, norm, tensor_options));
  norm2 = register_module("norm2", FusedLayerNorm(models, norm, tensor_options));
  dropout1 = register_module("dropout1", FusedDropout(p, Layout::kMatmul));
  dropout2 = register_module("dropout2", FusedDropout(p, Layout::kMatmul));
  activation = register_module("activation", FusedActivation(activation_of(options_)));
  for (std::int64_t b = 0; b < models; ++b) {
    load_slot(b, torch::nn::TransformerEncoderLayer(options_));
  }
}

at::Tensor FusedTransformerEncoderLayerImpl::forward(const at::Tensor& src, const at::Tensor& src_mask,
                                                     const at::Tensor& src_key_padding_mask) {
  const at::Tensor attended =
      std::get<0>(self_attn->forward(src, src, src, src_key_padding_mask, false, src_mask));
  const at::Tensor x = norm1->forward(src + dropout1->forward(attended));
  const at::Tensor hidden = linear2->forward(dropout->forward(activation->forward(linear1->forward(x))));
  return norm2->forward(x + dropout2->forward(hidden));
}

void FusedTransformerEncoderLayerImpl::load_slot(std::int64_t slot,
                                                 const torch::nn::TransformerEncoderLayer& plain) {
  self_attn->load_slot(slot, plain->self_attn);
  linear1->load_slot(slot, plain->linear1);
  linear2->load_slot(slot, plain->linear2);
  norm1->load_slot(slot, plain->norm1);
  norm2->load_slot(slot, plain->norm2);
}

torch::nn::TransformerEncoderLayer FusedTransformerEncoderLayerImpl::extract_slot(
    std::int64_t slot) const {
  torch::nn::TransformerEncoderLayer plain(options_);
  plain->to(linear1->weight.device(), linear1->weight.scalar_type());
  torch::NoGradGuard no_grad;
  // Copy each extracted part into the layer's own modules, keeping their registration.
  auto copy = [](const torch::nn::Module& from, torch::nn::Module& to) {
    const auto src = from.named_parameters();
    for (auto& p : to.named_parameters()) p.value().copy_(src[p.key()]);
  };
  copy(*self_attn->extract_slot(slot), *plain->self_attn);
  copy(*linear1->extract_slot(slot), *plain->linear1);
  copy(*linear2->extract_slot(slot), *plain->linear2);
  copy(*norm1->extract_slot(slot), *plain->norm1);
  copy(*norm2->extract_slot(slot), *plain->norm2);
  return plain;
}

void FusedTransformerEncoderLayerImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<torch::nn::TransformerEncoderLayer>(seed, options_));
}

void FusedTransformerEncoderLayerImpl::set_dropout(std::int64_t slot, double p) {
  self_attn->set_dropout(slot, p);
  dropout->set_p(slot, p);
  dropout1->set_p(slot, p);
  dropout2->set_p(slot, p);
}

}  // namespace hfta::fusion
