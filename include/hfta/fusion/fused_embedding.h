// B embedding tables looked up by the same indices.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/strategy.h"

namespace hfta::fusion {

/// Layout: indices [N...] shared by every model (all models of an array see the
/// same batch) -> matmul layout [B, N..., dim]; forward_per_model takes [B, N...].
/// Parameters: weight [B, num_embeddings, dim]. padding_idx rows get no gradient,
/// as in torch::nn::Embedding. max_norm is not supported.
class FusedEmbeddingImpl : public torch::nn::Module {
 public:
  FusedEmbeddingImpl(std::int64_t models, torch::nn::EmbeddingOptions options,
                     const at::TensorOptions& tensor_options = {});

  at::Tensor forward(const at::Tensor& indices);
  at::Tensor forward_per_model(const at::Tensor& indices);

  void load_slot(std::int64_t slot, const torch::nn::Embedding& plain);
  torch::nn::Embedding extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);

  /// Measures one gather over the stacked tables against B lookups, keeps the faster.
  StrategyChoice tune(const at::Tensor& example_indices);
  Strategy strategy() const { return strategy_; }
  void set_strategy(Strategy s) { strategy_ = s; }

  at::Tensor weight;

 private:
  /// The padding row in [0, num), or -1 for none.
  std::int64_t padding_index() const;

  std::int64_t models_;
  torch::nn::EmbeddingOptions options_;
  Strategy strategy_ = Strategy::kFused;
};
TORCH_MODULE(FusedEmbedding);

}  // namespace hfta::fusion
