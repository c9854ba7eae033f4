// Test support: trains a trial alone with its plain model and torch::optim, and
// checks that an array gives every trial the losses and weights it gets alone.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include <ATen/Context.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim.h>

#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/pointnet.h"

namespace hfta::trainers {

inline const ClassificationData& data() {
  static const ClassificationData d = [] {
    FashionMnistOptions o;
    o.limit = 12000;  // enough for 100 steps, quick to prepare
    o.validation_size = 2000;
    return load_fashion_mnist_data(o);
  }();
  return d;
}

inline std::int64_t count_parameters(const torch::nn::Sequential& net) {
  std::int64_t n = 0;
  for (const auto& p : net->parameters()) n += p.numel();
  return n;
}

inline double relative(double got, double want) { return std::abs(got - want) / std::max(std::abs(want), 1e-12); }

// A plain model's regression loss, as PyTorch computes it: outputs [N, 1]
// against targets [N], in at least float32 (as autocast runs these losses).
inline at::Tensor plain_regression_loss(const std::string& loss, const at::Tensor& outputs, const at::Tensor& targets) {
  namespace F = torch::nn::functional;
  const at::ScalarType type = at::promote_types(outputs.scalar_type(), at::kFloat);
  const at::Tensor x = outputs.to(type), y = targets.to(type).view({-1, 1});
  if (loss == "mse") return F::mse_loss(x, y);
  if (loss == "l1") return F::l1_loss(x, y);
  if (loss == "huber") return F::huber_loss(x, y, F::HuberLossFuncOptions().delta(1.0));
  ADD_FAILURE() << "no plain regression loss " << loss;
  return {};
}

// n_samples / (n_classes * bincount(y)), as sklearn's compute_class_weight
// documents "balanced" (every class of these sets is present).
inline at::Tensor plain_balanced_weights(const at::Tensor& labels, std::int64_t classes) {
  const at::Tensor counts = at::bincount(labels.cpu(), {}, classes).to(at::kDouble);
  return static_cast<double>(labels.numel()) / (static_cast<double>(classes) * counts);
}

// Trains one trial alone, with the plain model and torch::optim, over the same batches.
inline std::vector<double> train_alone(const ArrayClassifier& array, const SlotTrial& t, const ArrayTrainerOptions& o,
                                std::int64_t steps, torch::nn::Sequential& out,
                                const ClassificationData& d = data()) {
  torch::manual_seed(t.seed);
  torch::nn::Sequential plain = array.make_plain();
  plain->to(d.train.images.device());  // where the data is: the CPU, or the GPU's checks'
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (o.optimizer == "sgd") {
    opt = std::make_unique<torch::optim::SGD>(
        plain->parameters(), torch::optim::SGDOptions(t.lr).momentum(t.momentum).weight_decay(t.weight_decay));
  } else {
    opt = std::make_unique<torch::optim::Adam>(
        plain->parameters(),
        torch::optim::AdamOptions(t.lr).betas({t.beta1, t.beta2}).eps(t.eps).weight_decay(t.weight_decay));
  }
  std::vector<double> losses;
  Augmentation augmentation = o.augmentation;  // padded with the darkest pixel, as the batch stream pads
  if (augmentation.crop > 0) augmentation.fill = d.train.images.min().item<double>();
  std::int64_t epoch = 0, index = 0;
  const std::int64_t per_epoch = (d.train.size() + o.batch_size - 1) / o.batch_size;
  at::Tensor order = epoch_order(d.train.size(), o.data_seed, epoch);
  for (std::int64_t s = 0; s < steps; ++s) {
    if (index == per_epoch) {
      index = 0;
      order = epoch_order(d.train.size(), o.data_seed, ++epoch);
    }
    const Split b = augment(batch(d.train, order, index++, o.batch_size, o.least_batch), augmentation, o.data_seed, s);
    opt->zero_grad();
    at::Tensor loss;
    {
      // The array's precision, as torch.autocast around the forward pass and loss.
      fusion::AutocastScope autocast(o.precision, b.images.device());
      const at::Tensor logits = plain->forward(array.input(b.images));  // before the regulariser reads it
      // PyTorch's CrossEntropyLoss(weight=, label_smoothing=), the weights
      // sklearn's compute_class_weight("balanced") of the training labels.
      auto ce = torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(t.label_smoothing);
      if (t.balanced_class_weight != 0) {
        ce.weight(plain_balanced_weights(d.train.labels, d.classes)
                      .to(logits.device(), at::promote_types(logits.scalar_type(), at::kFloat)));
      }
      loss = d.regression() ? plain_regression_loss(o.loss, logits, b.labels)
                            : torch::nn::functional::cross_entropy(logits, b.labels.reshape({-1}), ce) +
                                  plain_regularization(plain);
    }
    loss.backward();
    opt->step();
    losses.push_back(loss.item<double>());
  }
  out = plain;
  return losses;
}

// The bounds: 1e-4 in float32, 1e-9 in float64 (or `tolerance`).
inline void expect_same_as_alone(std::shared_ptr<ArrayClassifier> model, std::vector<SlotTrial> trials,
                                 ArrayTrainerOptions options, std::int64_t steps, const ClassificationData& d = data(),
                                 double tolerance = 0) {
  const double tol = tolerance > 0 ? tolerance : model->dtype() == at::kDouble ? 1e-9 : 1e-4;
  ArrayTrainer trainer(model, trials, options, d);
  const auto fused_losses = trainer.train(steps);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    SCOPED_TRACE("trial " + std::to_string(trials[i].trial_id));
    torch::nn::Sequential alone{nullptr};
    const auto losses = train_alone(*model, trials[i], options, steps, alone, d);
    for (std::int64_t s = 0; s < steps; ++s) {
      ASSERT_LE(relative(fused_losses[s][i], losses[s]), tol) << "step " << s;
    }
    // Parameters and buffers (batch-norm running statistics) alike.
    const torch::nn::Sequential fused = model->extract_slot(static_cast<std::int64_t>(i));
    auto got = fused->parameters(), want = alone->parameters();
    for (const auto& t : fused->buffers()) got.push_back(t);
    for (const auto& t : alone->buffers()) want.push_back(t);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      const at::Tensor g = got[k].to(at::kCPU, at::kDouble), w = want[k].to(at::kCPU, at::kDouble);
      // In float64, the largest entry's difference relative to the tensor's largest entry.
      // In float32, the difference's norm relative to the tensor's: there a last-bit
      // difference may break a max-pool tie the other way (seen on an AVX-512 CPU between
      // steps 70 and 80 of the CNN test below: a few entries of a convolution's weight
      // moved by 1.6e-4 of its largest, the tensor as a whole by 2.9e-5), and from then on
      // those entries differ by more than rounding. A tensor whose gradient is zero in
      // exact arithmetic (a bias just before a batch norm) holds only rounding noise, so
      // values below 1e-6 compare absolutely.
      const bool norms = model->dtype() == at::kFloat;
      const double err = norms ? (g - w).norm().item<double>() / std::max(w.norm().item<double>(), 1e-6)
                               : (g - w).abs().max().item<double>() / std::max(w.abs().max().item<double>(), 1e-6);
      EXPECT_LE(err, tol) << "tensor " << k << " of shape " << w.sizes();
    }
  }
}

// Packing never changes a trial's numbers: each trial of an array trains bit
// for bit as in an array of itself alone (`resized(1)`), losses, parameters and
// buffers, with every op's strategy fused and then per model, on two threads
// as a sweep's one worker runs. What a fused sweep, `--fusion off`, compaction
// and a resume into another array rely on.
inline void expect_bitwise_in_an_array_of_one(const ArrayClassifier& prototype, const std::vector<SlotTrial>& trials,
                                              ArrayTrainerOptions options, std::int64_t steps,
                                              const ClassificationData& d = data()) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  for (fusion::Strategy strategy : {fusion::Strategy::kFused, fusion::Strategy::kPerModel}) {
    SCOPED_TRACE(fusion::to_string(strategy));
    auto model = prototype.resized(static_cast<std::int64_t>(trials.size()));
    options.strategies.assign(model->strategies().size(), strategy);
    ArrayTrainer array(model, trials, options, d);
    const auto array_losses = array.train(steps);
    for (std::size_t i = 0; i < trials.size(); ++i) {
      SCOPED_TRACE("trial " + std::to_string(trials[i].trial_id));
      auto alone_model = prototype.resized(1);
      ArrayTrainerOptions alone_options = options;
      alone_options.strategies.clear();
      ArrayTrainer alone(alone_model, {trials[i]}, alone_options, d);
      const auto losses = alone.train(steps);
      for (std::int64_t s = 0; s < steps; ++s) EXPECT_EQ(array_losses[s][i], losses[s][0]) << "loss of step " << s;
      const torch::nn::Sequential got = model->extract_slot(static_cast<std::int64_t>(i));
      const torch::nn::Sequential want = alone_model->extract_slot(0);
      const auto got_params = got->named_parameters(), got_buffers = got->named_buffers();
      for (const auto& p : want->named_parameters()) EXPECT_TRUE(at::equal(got_params[p.key()], p.value())) << p.key();
      for (const auto& b : want->named_buffers()) EXPECT_TRUE(at::equal(got_buffers[b.key()], b.value())) << b.key();
    }
  }
  at::set_num_threads(threads);
}

// The GPU versions of these checks run where LibTorch sees a GPU, with TF32 off
// (cuDNN's convolutions default to it: float32 products would round to 10 bits)
// and cuDNN's deterministic algorithms, so that arrays and plain models compute
// in their own precision. Elsewhere the test is skipped.
inline bool gpu_for_equivalence() {
  if (!torch::cuda::is_available()) return false;
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setDeterministicCuDNN(true);
  return true;
}
// `d` on `device`: itself for the CPU, else a copy there.
inline ClassificationData on(const at::Device& device, const ClassificationData& d) {
  return device.is_cpu() ? d : to_device(d, device);
}

#define HFTA_SKIP_WITHOUT_GPU() \
  if (!gpu_for_equivalence()) GTEST_SKIP() << "no CUDA device: scripts/gpu/build-and-bench.sh runs this on a GPU"

// Trains an array of two language models (Adam, lr 3e-3 and 1e-3, batch 32)
// for `steps`: each one's validation perplexity must fall from above `before`
// (untrained: about the vocabulary's size) to below `after`.
inline void expect_perplexity_falls(std::shared_ptr<ArrayClassifier> model, const ClassificationData& d,
                                    std::int64_t steps, double before, double after) {
  std::vector<SlotTrial> trials = {{0, 5, 3e-3}, {1, 6, 1e-3}};
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 32;
  o.metric = "val_perplexity";
  ArrayTrainer trainer(std::move(model), trials, o, d);
  const auto first = trainer.evaluate();
  trainer.train(steps);
  const auto last = trainer.evaluate();
  for (std::size_t i = 0; i < last.size(); ++i) {
    SCOPED_TRACE("trial " + std::to_string(last[i].trial_id));
    EXPECT_GT(first[i].val_perplexity, before);
    EXPECT_LT(last[i].val_perplexity, after);
    EXPECT_NEAR(last[i].val_perplexity, std::exp(last[i].val_loss), 1e-9);
  }
}

}  // namespace hfta::trainers
