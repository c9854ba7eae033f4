// Dropout for B models: independent masks, and a drop probability per model.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include "hfta/fusion/layout.h"

namespace hfta::fusion {

/// Dropout (element-wise) or Dropout2d (whole channels) for B models; p[b] is
/// model b's drop probability. Kept elements are scaled by 1/(1-p[b]); a model
/// with p = 1 outputs zeros. Identity in eval mode. Masks are independent across
/// elements and models. Once a slot is seeded (seed_slot), every model draws its
/// masks from its own generator, so a trial gets the same masks whether it
/// trains fused or alone, in any slot; unseeded, one draw from the default
/// generator serves the whole array. On a GPU (a CUDA LibTorch) the seeded
/// masks come from per-model CUDA generators, drawn where the input is: CPU
/// masks would cost the GPU a host-side draw and a synchronous copy per layer and
/// step. They differ from the CPU's masks, but not between fused and alone.
class FusedDropoutImpl : public torch::nn::Module {
 public:
  FusedDropoutImpl(std::vector<double> p, Layout layout, bool channels = false);
  /// The same, with the rates as a [B] tensor (of any floating dtype and device).
  FusedDropoutImpl(const at::Tensor& p, Layout layout, bool channels = false);

  at::Tensor forward(const at::Tensor& x);

  /// Changes model b's drop probability (a per-model hyperparameter).
  void set_p(std::int64_t slot, double p);
  /// Gives model b its own mask generator, seeded with `seed`.
  void seed_slot(std::int64_t slot, std::uint64_t seed);
  const std::vector<double>& p() const { return p_; }

 private:
  /// Per element of `shape` (x's, or with a channel's elements collapsed to one):
  /// scale[b] where model b keeps it, 0 where it drops it; keep and scale are [B].
  at::Tensor noise(const at::Tensor& x, const std::vector<std::int64_t>& shape, const at::Tensor& keep,
                   const at::Tensor& scale);
  /// The per-model generators of `device`'s type, seeded as the slots were; null
  /// where the CPU's serve (the CPU, or a LibTorch without CUDA).
  const std::vector<at::Generator>* device_generators(const c10::Device& device);

  std::vector<double> p_;
  Layout layout_;
  bool channels_;
  std::vector<at::Generator> generators_;  ///< per model once seeded; empty: the default one
  std::vector<std::uint64_t> seeds_;       ///< each slot's last seed
  std::vector<at::Generator> device_generators_;  ///< on device_, made at its first draw
  c10::Device device_{c10::kCPU};
};
TORCH_MODULE(FusedDropout);

}  // namespace hfta::fusion
