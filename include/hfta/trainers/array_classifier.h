// Image classifiers of the model zoo as fused arrays of B models. Each has a plain
// counterpart (a torch::nn::Sequential) that any slot loads from and exports to.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>

#include "hfta/fusion/fused_conv.h"
#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/fusion/strategy.h"

namespace hfta::trainers {

/// B classifiers: images [N, C, H, W], the same batch for every model ->
/// logits in the matmul layout [B, N, classes].
class ArrayClassifier : public torch::nn::Module {
 public:
  explicit ArrayClassifier(std::int64_t models) : models_(models) {}
  virtual at::Tensor forward(const at::Tensor& images) = 0;
  /// A freshly initialised plain model of the same shape.
  virtual torch::nn::Sequential make_plain() const = 0;
  /// A new array of `models` models of the same shape (for compaction).
  virtual std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const = 0;
  virtual void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) = 0;
  virtual torch::nn::Sequential extract_slot(std::int64_t slot) const = 0;
  /// The parameters of each optimizer every model has: one for a classifier;
  /// a GAN's discriminator, then its generator.
  virtual std::vector<std::vector<at::Tensor>> optimizer_groups() { return {parameters()}; }
  /// A per-model term [B] the last training forward adds to each model's loss
  /// (PointNet's feature-transform regulariser); undefined: none.
  virtual at::Tensor regularization() const { return {}; }
  /// Model b's dropout rate.
  virtual void set_dropout(std::int64_t slot, double p) = 0;
  /// Seeds model b's dropout masks, so they depend on the trial alone (layers
  /// that drop nothing draw nothing, and are skipped).
  void seed_dropout(std::int64_t slot, std::uint64_t seed);
  /// Slot b initialised as make_plain() initialises after torch::manual_seed(seed).
  void init_slot(std::int64_t slot, std::uint64_t seed);
  std::int64_t models() const { return models_; }
  /// The strategy of each op with a choice (convolutions, batch and layer norms), in module order.
  std::vector<fusion::Strategy> strategies() const;
  void set_strategies(const std::vector<fusion::Strategy>& strategies);
  /// Times each such op's strategies on the inputs it gets from `example` (a
  /// batch) and keeps the fastest; parameters, gradients and buffers are left as
  /// they were.
  void tune_strategies(const at::Tensor& example);
  /// The dtype of the parameters, which inputs are converted to.
  at::ScalarType dtype() const { return parameters().front().scalar_type(); }
  /// A batch as forward takes it: images in the parameters' dtype; token ids stay integers.
  at::Tensor input(const at::Tensor& batch) const {
    return batch.is_floating_point() ? batch.to(dtype()) : batch;
  }

 protected:
  std::int64_t models_;

 private:
  /// The dropout layers, in module order (found once: seeded every step).
  const std::vector<std::shared_ptr<fusion::FusedDropoutImpl>>& dropout_layers();
  std::optional<std::vector<std::shared_ptr<fusion::FusedDropoutImpl>>> dropout_layers_;
};

/// An MLP on flattened images: depth hidden layers of `width`, activation, dropout.
/// Plain form: Flatten, (Linear, activation, Dropout) x depth, Linear.
class FusedMlp : public ArrayClassifier {
 public:
  FusedMlp(std::int64_t models, std::int64_t inputs, std::int64_t depth, std::int64_t width,
           std::string activation, double dropout, std::int64_t classes = 10,
           const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& images) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  std::int64_t inputs_, depth_, width_, classes_;
  std::string activation_;
  double dropout_;
  std::vector<fusion::FusedLinear> layers_;
  std::vector<fusion::FusedDropout> dropouts_;
  at::TensorOptions options_;
};

/// A LeNet-5 style CNN for 28x28 images, channels 6w and 16w.
/// Plain form: Conv2d(1, 6w, 5, pad 2), act, MaxPool2d(2), Conv2d(6w, 16w, 5), act,
/// MaxPool2d(2), Flatten, Linear(400w, 120), act, Dropout, Linear(120, 84), act, Linear(84, 10).
class FusedCnn : public ArrayClassifier {
 public:
  FusedCnn(std::int64_t models, std::int64_t width, std::string activation, double dropout,
           std::int64_t classes = 10, const at::TensorOptions& tensor_options = {});
  at::Tensor forward(const at::Tensor& images) override;
  torch::nn::Sequential make_plain() const override;
  std::shared_ptr<ArrayClassifier> resized(std::int64_t models) const override;
  void load_slot(std::int64_t slot, const torch::nn::Sequential& plain) override;
  torch::nn::Sequential extract_slot(std::int64_t slot) const override;
  void set_dropout(std::int64_t slot, double p) override;

 private:
  at::Tensor activate_and_pool(const at::Tensor& x) const;

  std::int64_t width_, classes_;
  std::string activation_;
  double dropout_;
  fusion::FusedConv2d conv1_{nullptr}, conv2_{nullptr};
  fusion::FusedLinear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
  fusion::FusedDropout drop_{nullptr};
  at::TensorOptions options_;
};

}  // namespace hfta::trainers
