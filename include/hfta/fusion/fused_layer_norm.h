// B layer norms as one, each model with its own affine parameters.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/strategy.h"

namespace hfta::fusion {

/// Layout: matmul layout [B, N..., *normalized_shape] -> same.
/// Parameters: weight, bias [B, *normalized_shape].
class FusedLayerNormImpl : public torch::nn::Module, public StrategicOp {
 public:
  FusedLayerNormImpl(std::int64_t models, torch::nn::LayerNormOptions options,
                     const at::TensorOptions& tensor_options = {});

  at::Tensor forward(const at::Tensor& x);

  void load_slot(std::int64_t slot, const torch::nn::LayerNorm& plain);
  torch::nn::LayerNorm extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);

  /// Measures the batched form against B separate layer norms and keeps the faster.
  StrategyChoice tune(const at::Tensor& example);

  at::Tensor weight, bias;

 private:
  std::int64_t models_;
  torch::nn::LayerNormOptions options_;
};
TORCH_MODULE(FusedLayerNorm);

}  // namespace hfta::fusion
