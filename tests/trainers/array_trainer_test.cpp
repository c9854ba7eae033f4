// End to end: an array of B=4 trials trained on Fashion-MNIST gives each trial the
// loss curve and final weights it gets trained alone with plain LibTorch.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim.h>

#include "hfta/trainers/array_trainer.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

TEST(ArrayTrainer, MlpArrayEqualsEachTrialTrainedAloneInFloat64) {
  std::vector<SlotTrial> trials = {{0, 11, 0.05, 0.9, 0.0}, {1, 12, 0.01, 0.0, 1e-3}, {2, 13, 0.1, 0.5, 1e-4}};
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 4;
  expect_same_as_alone(std::make_shared<FusedMlp>(3, 784, 2, 64, "tanh", 0.0, 10, at::TensorOptions().dtype(at::kDouble)),
                       trials, o, 100);
}

TEST(ArrayTrainer, MlpArrayWithAdamEqualsEachTrialTrainedAlone) {
  std::vector<SlotTrial> trials = {
      {0, 11, 1e-3, 0, 0.0, 0.0, 0.9, 0.999}, {1, 12, 3e-3, 0, 1e-4, 0.0, 0.8, 0.99},
      {2, 13, 5e-4, 0, 0.0, 0.0, 0.95, 0.999}, {3, 14, 2e-3, 0, 1e-3, 0.0, 0.9, 0.9}};
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 32;
  o.data_seed = 5;
  expect_same_as_alone(std::make_shared<FusedMlp>(4, 784, 2, 64, "relu", 0.0), trials, o, 100);
}

std::vector<SlotTrial> cnn_trials() {
  return {{7, 21, 0.02, 0.5, 0.0}, {8, 22, 0.01, 0.0, 1e-3}, {9, 23, 0.03, 0.0, 1e-4}, {10, 24, 0.01, 0.8, 0.0}};
}

TEST(ArrayTrainer, CnnArrayEqualsEachTrialTrainedAloneInFloat64) {
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 6;
  expect_same_as_alone(std::make_shared<FusedCnn>(4, 1, "relu", 0.0, 10, at::TensorOptions().dtype(at::kDouble)),
                       cnn_trials(), o, 100);
}

// The CNN is compared in float64 only: in float32 the grouped convolution and the
// batched products round differently from the plain kernels (one ulp of the loss
// in the first steps), and ReLU and max-pooling amplify that to 1e-4-2e-4 after
// 100 SGD steps, run to run. Float64 shows the computation itself is the same.

TEST(ArrayTrainer, EvaluatesPerTrialAndStopsDivergedModels) {
  std::vector<SlotTrial> trials = {{0, 1, 0.05, 0.9}, {1, 2, 1e6, 0.0}, {2, 3, 0.01, 0.0}};
  ArrayTrainerOptions o;
  o.batch_size = 64;
  o.divergence = 100;
  ArrayTrainer trainer(std::make_shared<FusedMlp>(3, 784, 1, 32, "relu", 0.1), trials, o, data());
  trainer.train(30);
  const auto metrics = trainer.evaluate();
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[1].trial_id, 1);
  EXPECT_EQ(metrics[1].status, SlotStatus::kDiverged);
  EXPECT_EQ(metrics[0].status, SlotStatus::kRunning);
  EXPECT_GT(metrics[0].val_accuracy, 0.6);  // real learning on real data
  EXPECT_GT(metrics[2].val_accuracy, 0.5);
  // The diverged model is frozen; the others keep training.
  const at::Tensor frozen = trainer.model().extract_slot(1)->parameters()[0].clone();
  const at::Tensor moving = trainer.model().extract_slot(0)->parameters()[0].clone();
  trainer.train(5);
  // (Its weights hold NaN or Inf, which only equal themselves with equal_nan.)
  EXPECT_TRUE(at::allclose(trainer.model().extract_slot(1)->parameters()[0], frozen, 0, 0, true));
  EXPECT_FALSE(at::equal(trainer.model().extract_slot(0)->parameters()[0], moving));
}

TEST(ArrayTrainer, PerModelSchedulesAndGradientClipping) {
  // Trial 0: step schedule and clipping; trial 1: constant, no clipping.
  std::vector<SlotTrial> trials(2);
  trials[0].trial_id = 0, trials[0].seed = 5, trials[0].lr = 0.1, trials[0].grad_clip = 0.5;
  trials[0].schedule.kind = fusion::ScheduleKind::kStep, trials[0].schedule.step_size = 5;
  trials[0].schedule.gamma = 0.1;
  trials[1].trial_id = 1, trials[1].seed = 6, trials[1].lr = 0.05;
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 9;
  auto model = std::make_shared<FusedMlp>(2, 784, 1, 16, "relu", 0.0, 10, at::TensorOptions().dtype(at::kDouble));
  ArrayTrainer trainer(model, trials, o, data());
  trainer.train(12);
  EXPECT_NEAR(trainer.optimizer().lr()[0], 0.1 * 0.01, 1e-15);  // decayed at steps 5 and 10
  EXPECT_DOUBLE_EQ(trainer.optimizer().lr()[1], 0.05);

  // Trial 0 alone, with torch::nn::utils::clip_grad_norm_ and the same schedule.
  torch::manual_seed(5);
  torch::nn::Sequential plain = model->make_plain();
  torch::optim::SGD sgd(plain->parameters(), 0.1);
  at::Tensor order = epoch_order(data().train.size(), 9, 0);
  for (std::int64_t s = 0; s < 12; ++s) {
    static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr(0.1 * std::pow(0.1, s / 5));
    const Split b = batch(data().train, order, s, 32);
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(plain->forward(b.images.to(at::kDouble)), b.labels).backward();
    torch::nn::utils::clip_grad_norm_(plain->parameters(), 0.5);
    sgd.step();
  }
  const auto got = model->extract_slot(0)->parameters();
  const auto want = plain->parameters();
  for (std::size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE((got[k] - want[k]).abs().max().item<double>() / want[k].abs().max().item<double>(), 1e-9) << k;
  }
}

TEST(ClassificationData, SplitNormalisationAndSharedOrder) {
  const auto& d = data();
  EXPECT_EQ(d.train.size(), 10000);
  EXPECT_EQ(d.validation.size(), 2000);
  EXPECT_EQ(d.test.size(), 10000);
  EXPECT_EQ(d.train.images.sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
  EXPECT_NEAR(d.train.images.mean().item<double>(), 0.0, 0.05);
  EXPECT_TRUE(at::equal(epoch_order(100, 3, 2), epoch_order(100, 3, 2)));
  EXPECT_FALSE(at::equal(epoch_order(100, 3, 2), epoch_order(100, 3, 1)));
  FashionMnistOptions padded;
  padded.limit = 2000;
  padded.validation_size = 500;
  padded.pad_to_32 = true;
  EXPECT_EQ(load_fashion_mnist_data(padded).train.images.size(3), 32);
}

}  // namespace
}  // namespace hfta::trainers
