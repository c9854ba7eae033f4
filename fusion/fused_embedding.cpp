#include "hfta/fusion/fused_embedding.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "hfta/fusion/embedding.h"
#include "hfta/fusion/slot_init.h"

namespace hfta::fusion {

FusedEmbeddingImpl::FusedEmbeddingImpl(std::int64_t models, torch::nn::EmbeddingOptions options,
                                       const at::TensorOptions& tensor_options)
    : models_(models), options_(std::move(options)) {
  // Options whose gradients or updates the fused kernel does not reproduce: refused,
  // never ignored, so an array cannot train differently from its plain modules.
  if (options_.max_norm().has_value()) {
    throw std::invalid_argument("fused embeddings do not support max_norm");
  }
  if (options_.scale_grad_by_freq()) {
    throw std::invalid_argument("fused embeddings do not support scale_grad_by_freq");
  }
  if (options_.sparse()) throw std::invalid_argument("fused embeddings do not support sparse gradients");
  weight = register_parameter(
      "weight",
      at::empty({models, options_.num_embeddings(), options_.embedding_dim()}, tensor_options));
  for (std::int64_t b = 0; b < models; ++b) load_slot(b, torch::nn::Embedding(options_));
}

at::Tensor FusedEmbeddingImpl::forward(const at::Tensor& indices) {
  auto sizes = indices.sizes().vec();
  sizes.insert(sizes.begin(), models_);
  return forward_per_model(indices.unsqueeze(0).expand(sizes));
}

at::Tensor FusedEmbeddingImpl::forward_per_model(const at::Tensor& indices) {
  if (!grouped(strategy_) && models_ > 1) {
    std::vector<at::Tensor> ys;
    // The kernel an array of model b alone runs, on its slice: the same bits.
    for (std::int64_t b = 0; b < models_; ++b) {
      ys.push_back(embed(weight.narrow(0, b, 1), indices.narrow(0, b, 1), padding_index()));
    }
    return at::cat(ys);
  }
  return embed(weight, indices, padding_index());
}

std::int64_t FusedEmbeddingImpl::padding_index() const {
  if (!options_.padding_idx()) return -1;  // at::embedding's "no padding"
  const std::int64_t pad = *options_.padding_idx();
  return pad < 0 ? pad + options_.num_embeddings() : pad;
}

StrategyChoice FusedEmbeddingImpl::tune(const at::Tensor& example_indices) {
  return tune_strategy(*this, example_indices, [this](const at::Tensor& i) { return forward(i); },
                       [this](Strategy s) { strategy_ = s; });
}

void FusedEmbeddingImpl::load_slot(std::int64_t slot, const torch::nn::Embedding& plain) {
  torch::NoGradGuard no_grad;
  weight[slot].copy_(plain->weight);
}

torch::nn::Embedding FusedEmbeddingImpl::extract_slot(std::int64_t slot) const {
  torch::nn::Embedding plain(options_);
  plain->to(weight.device(), weight.scalar_type());
  torch::NoGradGuard no_grad;
  plain->weight.copy_(weight[slot]);
  return plain;
}

void FusedEmbeddingImpl::init_slot(std::int64_t slot, std::uint64_t seed) {
  load_slot(slot, seeded<torch::nn::Embedding>(seed, options_));
}

}  // namespace hfta::fusion
