// B batch norms as one, each model with its own running statistics.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/layout.h"
#include "hfta/fusion/strategy.h"

namespace hfta::fusion {

template <std::size_t D>
struct PlainBatchNorm;
template <> struct PlainBatchNorm<1> { using Module = torch::nn::BatchNorm1d; };
template <> struct PlainBatchNorm<2> { using Module = torch::nn::BatchNorm2d; };

/// BatchNorm2d layout: conv layout [N, B*C, H, W] -> same.
/// BatchNorm1d layout: matmul layout [B, N, C] or [B, N, C, L] -> same (each
/// model's statistics over its own N, and L); or, built with Layout::kConv, the
/// conv layout [N, B*C] or [N, B*C, L] that Conv1d gives, without transposes
/// (on the CPU 6x faster than the matmul layout over many rows).
/// Parameters weight, bias and buffers running_mean, running_var: [B*C], slot b
/// owns [b*C, (b+1)*C); num_batches_tracked: [B]. Momentum must be a number
/// (the cumulative average of momentum=None is not supported).
template <std::size_t D>
class FusedBatchNormImpl : public torch::nn::Module, public StrategicOp {
 public:
  using Plain = typename PlainBatchNorm<D>::Module;

  FusedBatchNormImpl(std::int64_t models, torch::nn::BatchNormOptions options,
                     const at::TensorOptions& tensor_options = {}, Layout layout = default_layout());

  at::Tensor forward(const at::Tensor& x);

  void load_slot(std::int64_t slot, const Plain& plain);
  Plain extract_slot(std::int64_t slot) const;
  void init_slot(std::int64_t slot, std::uint64_t seed);

  /// Measures one batch norm over B*C channels against B separate ones on
  /// `example` and keeps the faster (running statistics are left untouched).
  /// Nothing to measure in the matmul layout on CPU: one direct kernel does both.
  StrategyChoice tune(const at::Tensor& example);

  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  /// Batch norm of x [N, C', *] over all B*C channels (slot -1) or model slot's C.
  at::Tensor normalize(const at::Tensor& x, std::int64_t slot);
  std::int64_t models_;
  torch::nn::BatchNormOptions options_;
  Layout layout_;
  static constexpr Layout default_layout() { return D == 2 ? Layout::kConv : Layout::kMatmul; }
};

using FusedBatchNorm1dImpl = FusedBatchNormImpl<1>;
using FusedBatchNorm2dImpl = FusedBatchNormImpl<2>;
TORCH_MODULE(FusedBatchNorm1d);
TORCH_MODULE(FusedBatchNorm2d);

}  // namespace hfta::fusion
