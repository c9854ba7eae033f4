// PReLU with each model's own learned slopes.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/fused_dropout.h"  // Layout

namespace hfta::fusion {

/// Layout: conv layout [N, B*C, ...] (slopes per channel, as torch::nn::PReLU
/// uses dimension 1) or matmul layout [B, N, C] -> same.
/// Parameters: weight [B, num_parameters] (num_parameters is 1 or C).
class FusedPReLUImpl : public torch::nn::Module {
 public:
  FusedPReLUImpl(std::int64_t models, torch::nn::PReLUOptions options, Layout layout,
                 const at::TensorOptions& tensor_options = {});

  at::Tensor forward(const at::Tensor& x);

  void load_slot(std::int64_t slot, const torch::nn::PReLU& plain);
  torch::nn::PReLU extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);

  at::Tensor weight;

 private:
  std::int64_t models_;
  torch::nn::PReLUOptions options_;
  Layout layout_;
};
TORCH_MODULE(FusedPReLU);

}  // namespace hfta::fusion
