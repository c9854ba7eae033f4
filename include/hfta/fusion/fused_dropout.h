// Dropout for B models: independent masks, and a drop probability per model.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

namespace hfta::fusion {

/// Where the model dimension sits in the input.
enum class Layout {
  kMatmul,  ///< [B, N, ...]
  kConv,    ///< [N, B*C, ...]
};

/// Dropout (element-wise) or Dropout2d (whole channels) for B models; p[b] is
/// model b's drop probability. Kept elements are scaled by 1/(1-p[b]); a model
/// with p = 1 outputs zeros. Identity in eval mode. The masks come from the
/// device's default generator, drawn once for the whole array, so every element
/// (and every model) gets its own independent draw.
class FusedDropoutImpl : public torch::nn::Module {
 public:
  FusedDropoutImpl(std::vector<double> p, Layout layout, bool channels = false);

  at::Tensor forward(const at::Tensor& x);

  /// Changes model b's drop probability (a per-model hyperparameter).
  void set_p(std::int64_t slot, double p);
  const std::vector<double>& p() const { return p_; }

 private:
  std::vector<double> p_;
  Layout layout_;
  bool channels_;
};
TORCH_MODULE(FusedDropout);

}  // namespace hfta::fusion
