// Optimizers that update the parameters of all B models of an array in one
// pass, each model with its own hyperparameters, step count and state.
//
// Every fused parameter is seen as [B, n]: model b owns row b. That holds for
// every fused op (Linear [B, in, out], Conv [B*C_out, ...], BatchNorm [B*C], ...),
// so the optimizer needs no knowledge of the op. Each update is element-wise
// within a row, so models never influence each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::fusion {

/// A hyperparameter with one value for all models or one value per model.
class PerModel {
 public:
  PerModel(double all = 0) : values_{all} {}  // NOLINT: one value converts implicitly
  PerModel(std::vector<double> each) : values_(std::move(each)) {}  // NOLINT
  double operator[](std::int64_t model) const {
    return values_.size() == 1 ? values_[0] : values_.at(static_cast<std::size_t>(model));
  }
  void set(std::int64_t model, double value, std::int64_t models);
  bool per_model() const { return values_.size() > 1; }

 private:
  std::vector<double> values_;
};

/// One model's optimizer state: its step count and, per parameter (in the
/// optimizer's order), each state buffer's row for that model.
struct SlotState {
  std::int64_t step = 0;
  std::vector<std::map<std::string, at::Tensor>> buffers;
};

/// The rows of one parameter that a step updates (the active models'), with
/// what an update needs. Updates write param and state in place.
struct RowBatch {
  at::Tensor param;                          ///< [k, n]
  at::Tensor grad;                           ///< [k, n]
  std::map<std::string, at::Tensor>& state;  ///< [k, n] each
  std::vector<std::int64_t> models;          ///< which models the k rows are
  std::vector<std::int64_t> steps;           ///< each row's step count, this step included
  /// A per-model value as a [k, 1] column in the parameter's dtype and device.
  at::Tensor column(const std::vector<double>& per_row) const;
};

/// The shared machinery: rows, freezing, step counts, state in and out.
class FusedOptimizer {
 public:
  FusedOptimizer(std::vector<at::Tensor> params, std::int64_t models);
  virtual ~FusedOptimizer() = default;

  /// One update of every parameter that has a gradient, for every model not frozen.
  void step();
  /// Drops every gradient; a parameter left without one by the next backward
  /// is not stepped (PyTorch's set_to_none behaviour).
  void zero_grad();

  /// A frozen model's parameters and state no longer change (early stopping,
  /// divergence); the others are computed exactly as without it.
  void freeze(std::int64_t model) { frozen_.at(static_cast<std::size_t>(model)) = true; }
  void unfreeze(std::int64_t model) { frozen_.at(static_cast<std::size_t>(model)) = false; }
  bool frozen(std::int64_t model) const { return frozen_.at(static_cast<std::size_t>(model)); }

  std::int64_t models() const { return models_; }
  std::int64_t step_count(std::int64_t model) const { return steps_.at(static_cast<std::size_t>(model)); }

  /// Model b's state (copies of its rows), to resume it in another slot or array.
  SlotState export_slot(std::int64_t model) const;
  /// Puts a model's state into slot b (the parameter rows are loaded separately).
  void import_slot(std::int64_t model, const SlotState& state);

  /// Every model's learning rate (schedules set it each step).
  PerModel& lr() { return lr_; }

 protected:
  /// Names of the state buffers this optimizer keeps per parameter.
  virtual std::vector<std::string> state_names() const = 0;
  /// The update of one parameter's active rows.
  virtual void update(RowBatch& rows) = 0;
  /// Values of a hyperparameter for the models of `rows`.
  static std::vector<double> of(const PerModel& h, const RowBatch& rows);
  /// What a state buffer holds before a model's first step (Adagrad's accumulator).
  virtual double initial_value(const std::string& /*name*/, std::int64_t /*model*/) const {
    return 0;
  }

  PerModel lr_;

 private:
  std::map<std::string, at::Tensor>& state_of(std::size_t param);

  std::vector<at::Tensor> params_;
  std::int64_t models_;
  std::vector<bool> frozen_;
  std::vector<std::int64_t> steps_;
  std::vector<std::map<std::string, at::Tensor>> state_;  ///< per parameter: name -> [B, n]
};

/// SGD as torch::optim::SGD: momentum, dampening, Nesterov, weight decay.
struct FusedSgdOptions {
  PerModel lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0, nesterov = 0;
};
class FusedSgd : public FusedOptimizer {
 public:
  FusedSgd(std::vector<at::Tensor> params, std::int64_t models, FusedSgdOptions options);
  FusedSgdOptions& options() { return options_; }

 protected:
  std::vector<std::string> state_names() const override { return {"momentum_buffer"}; }
  void update(RowBatch& rows) override;

 private:
  FusedSgdOptions options_;
};

/// Adam and AdamW (decoupled weight decay) as torch::optim::Adam/AdamW, with AMSGrad.
struct FusedAdamOptions {
  PerModel lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, amsgrad = 0;
  bool decoupled_weight_decay = false;  ///< true: AdamW
};
class FusedAdam : public FusedOptimizer {
 public:
  FusedAdam(std::vector<at::Tensor> params, std::int64_t models, FusedAdamOptions options);
  FusedAdamOptions& options() { return options_; }

 protected:
  std::vector<std::string> state_names() const override {
    return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  }
  void update(RowBatch& rows) override;

 private:
  FusedAdamOptions options_;
};

/// RMSprop as torch::optim::RMSprop: centered, momentum, weight decay.
struct FusedRmspropOptions {
  PerModel lr = 0.01, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = 0;
};
class FusedRmsprop : public FusedOptimizer {
 public:
  FusedRmsprop(std::vector<at::Tensor> params, std::int64_t models, FusedRmspropOptions options);

 protected:
  std::vector<std::string> state_names() const override {
    return {"square_avg", "momentum_buffer", "grad_avg"};
  }
  void update(RowBatch& rows) override;

 private:
  FusedRmspropOptions options_;
};

/// Adagrad as torch::optim::Adagrad: lr decay, weight decay, initial accumulator.
struct FusedAdagradOptions {
  PerModel lr = 0.01, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
};
class FusedAdagrad : public FusedOptimizer {
 public:
  FusedAdagrad(std::vector<at::Tensor> params, std::int64_t models, FusedAdagradOptions options);

 protected:
  std::vector<std::string> state_names() const override { return {"sum"}; }
  double initial_value(const std::string& name, std::int64_t model) const override;
  void update(RowBatch& rows) override;

 private:
  FusedAdagradOptions options_;
};

/// Adadelta as PyTorch defines it (LibTorch's C++ API has none).
struct FusedAdadeltaOptions {
  PerModel lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0;
};
class FusedAdadelta : public FusedOptimizer {
 public:
  FusedAdadelta(std::vector<at::Tensor> params, std::int64_t models, FusedAdadeltaOptions options);

 protected:
  std::vector<std::string> state_names() const override { return {"square_avg", "acc_delta"}; }
  void update(RowBatch& rows) override;

 private:
  FusedAdadeltaOptions options_;
};

}  // namespace hfta::fusion
