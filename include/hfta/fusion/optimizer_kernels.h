// One-pass CPU kernels for the fused SGD and Adam updates. The tensor-op form
// of an update makes a dozen passes over every parameter with temporaries; on
// a CPU, where small models are bound by those passes and by per-op overhead,
// one loop over each model's row reads and writes every element once. Each
// element's arithmetic is the same sequence, in the parameter's dtype, as
// torch::optim's tensor ops, so results match them within rounding.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// Whether the kernels take these [k, n] tensors: CPU, float or double,
/// contiguous, and the kernels enabled.
bool cpu_kernel_applies(const std::vector<at::Tensor>& tensors);

/// Turns the kernels off (on by default), so tests cover the tensor-op form
/// that other devices run.
void set_cpu_kernels_enabled(bool enabled);

/// Row r's SGD hyperparameters (torch::optim::SGD's).
struct SgdRow {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;  ///< first_step: the momentum buffer starts as the gradient
};

/// p -= lr * d, d from the gradient, L2 decay and momentum (buffer undefined without momentum).
void sgd_rows(at::Tensor& param, const at::Tensor& grad, at::Tensor& momentum_buffer,
              const std::vector<SgdRow>& rows);

/// Row r's Adam hyperparameters, bias corrections included.
struct AdamRow {
  double beta1, beta2, eps;
  double weight_decay;      ///< L2 (Adam): added to the gradient
  double decay;             ///< AdamW: the parameter is first scaled by 1 - lr * weight_decay (1: none)
  double step_size;         ///< lr / (1 - beta1^t)
  double sqrt_bias_correction2;
  bool amsgrad;
};

/// torch::optim::Adam / AdamW on each row (max_exp_avg_sq undefined without AMSGrad).
void adam_rows(at::Tensor& param, const at::Tensor& grad, at::Tensor& exp_avg, at::Tensor& exp_avg_sq,
               at::Tensor& max_exp_avg_sq, const std::vector<AdamRow>& rows);

}  // namespace hfta::fusion
