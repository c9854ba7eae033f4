// B Linear layers as one batched matrix product.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace hfta::fusion {

/// Layout: [B, N..., in] -> [B, N..., out] (matmul layout).
/// Parameters: weight [B, in, out] (slot b is the plain weight *transposed*: a
/// contiguous right-hand operand makes the backward pass as fast as B separate
/// Linear layers on CPU, where the transposed view cost 20% at width 512), bias [B, out].
class FusedLinearImpl : public torch::nn::Module {
 public:
  FusedLinearImpl(std::int64_t models, std::int64_t in_features, std::int64_t out_features,
                  bool bias = true, const at::TensorOptions& options = {});

  at::Tensor forward(const at::Tensor& x);

  /// Copies a plain Linear (of the same shape) into slot b.
  void load_slot(std::int64_t slot, const torch::nn::Linear& plain);
  /// Slot b as a plain Linear on the same device and dtype.
  torch::nn::Linear extract_slot(std::int64_t slot) const;
  /// Slot b as torch::nn::Linear initialises itself after torch::manual_seed(seed).
  void init_slot(std::int64_t slot, std::uint64_t seed);
  /// Copies a plain weight [out, in] and bias [out] (undefined without bias) into slot b.
  void load_slot(std::int64_t slot, const at::Tensor& plain_weight, const at::Tensor& plain_bias);
  /// Slot b's plain weight [out, in] (a view) and bias [out] (undefined without bias).
  std::pair<at::Tensor, at::Tensor> slot_tensors(std::int64_t slot) const;

  std::int64_t models() const { return models_; }

  at::Tensor weight;
  at::Tensor bias;

 private:
  torch::nn::LinearOptions plain_options() const;
  std::int64_t models_, in_, out_;
  bool has_bias_;
};
TORCH_MODULE(FusedLinear);

}  // namespace hfta::fusion
