// Arrays trained in mixed precision: autocast against each trial alone under
// the same autocast, and per-model loss scaling (exact in float64, and one
// model's overflow skipping that model's step only).
#include <gtest/gtest.h>

#include <cmath>

#include "hfta/trainers/array_trainer.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

std::vector<SlotTrial> mlp_trials() {
  return {{0, 31, 1e-3, 0, 0.0, 0.0, 0.9, 0.999}, {1, 32, 3e-3, 0, 1e-4, 0.0, 0.8, 0.99},
          {2, 33, 5e-4, 0, 0.0, 0.0, 0.95, 0.999}};
}

ArrayTrainerOptions adam_options() {
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 32;
  o.data_seed = 9;
  return o;
}

TEST(MixedPrecision, LossScalingChangesNoNumberInFloat64) {
  // Powers of two scale and unscale exactly: the array with scaling matches
  // each trial trained alone without it.
  ArrayTrainerOptions o = adam_options();
  o.loss_scale = 1024;
  auto model = std::make_shared<FusedMlp>(3, 784, 2, 64, "relu", 0.0, 10, at::TensorOptions().dtype(at::kDouble));
  expect_same_as_alone(model, mlp_trials(), o, 50);
}

TEST(MixedPrecision, OneModelsOverflowSkipsOnlyItsStep) {
  ArrayTrainerOptions o = adam_options();
  o.loss_scale = 1024;
  ArrayTrainer reference(std::make_shared<FusedMlp>(3, 784, 1, 32, "relu", 0.0), mlp_trials(), o, data());
  ArrayTrainer trainer(std::make_shared<FusedMlp>(3, 784, 1, 32, "relu", 0.0), mlp_trials(), o, data());
  const auto initial = trainer.extract(1)->parameters();
  std::vector<at::Tensor> before;
  for (const auto& p : initial) before.push_back(p.clone());
  // Model 1's scale is beyond float32 (2^130): its scaled loss and gradients
  // are infinite until it has backed off three times.
  trainer.loss_scaler()->set(1, std::ldexp(1.0, 130), 0);
  trainer.train(1);
  reference.train(1);
  const auto after = trainer.extract(1)->parameters();
  for (std::size_t k = 0; k < after.size(); ++k) EXPECT_TRUE(at::equal(after[k], before[k]));  // skipped
  EXPECT_EQ(trainer.export_optimizer(1).step, 0);  // its optimizer did not count a step
  EXPECT_EQ(trainer.loss_scaler()->scale_of(1), std::ldexp(1.0, 129));
  EXPECT_EQ(trainer.loss_scaler()->scale_of(0), 1024);
  trainer.train(19);
  reference.train(19);
  for (std::int64_t id : {0, 2}) {  // the others: bit for bit as if model 1 had never overflowed
    const auto got = trainer.extract(id)->parameters(), want = reference.extract(id)->parameters();
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(at::equal(got[k], want[k])) << "model " << id;
  }
  // Model 1 backed off until its gradients were finite, then trained.
  EXPECT_LE(trainer.loss_scaler()->scale_of(1), std::ldexp(1.0, 127));
  EXPECT_GT(trainer.export_optimizer(1).step, 0);
  EXPECT_FALSE(at::equal(trainer.extract(1)->parameters()[0], before[0]));
}

TEST(MixedPrecision, LossScalesMoveWithTheirTrialsThroughExportAndCompaction) {
  ArrayTrainerOptions o = adam_options();
  o.loss_scale = 256;
  ArrayTrainer trainer(std::make_shared<FusedMlp>(3, 784, 1, 32, "relu", 0.0), mlp_trials(), o, data());
  trainer.loss_scaler()->set(2, 64, 7);
  const fusion::SlotState state = trainer.export_optimizer(2);
  ArrayTrainer other(std::make_shared<FusedMlp>(2, 784, 1, 32, "relu", 0.0), {mlp_trials()[0], mlp_trials()[2]}, o,
                     data());
  other.import_optimizer(1, state);
  EXPECT_EQ(other.loss_scaler()->scale_of(1), 64);
  EXPECT_EQ(other.loss_scaler()->growth_tracker(1), 7);
  EXPECT_EQ(other.loss_scaler()->scale_of(0), 256);
}

TEST(MixedPrecision, Bfloat16AutocastArrayMatchesEachTrialAloneUnderAutocast) {
  // LibTorch's CPU autocast computes matrix products in bfloat16 (8 bits of
  // mantissa): the fused and plain products round alike up to the order of
  // their sums, so the two agree to bfloat16's precision, not float32's.
  ArrayTrainerOptions o = adam_options();
  o.precision = fusion::Precision::kBFloat16;
  {
    FusedMlp mlp(3, 784, 1, 64, "relu", 0.0);
    fusion::AutocastScope autocast(o.precision, at::kCPU);
    EXPECT_EQ(mlp.forward(mlp.input(data().train.images.narrow(0, 0, 4))).scalar_type(), at::kBFloat16);
  }
  expect_same_as_alone(std::make_shared<FusedMlp>(3, 784, 1, 64, "relu", 0.0), mlp_trials(), o, 10, data(), 2e-2);
  // The CNN with SGD: Adam's first steps move every weight by about lr whatever
  // the gradient's size, so bfloat16's noise on near-zero gradients shows in
  // Adam's weights as whole steps; SGD's updates are proportional to it.
  ArrayTrainerOptions sgd = o;
  sgd.optimizer = "sgd";
  const std::vector<SlotTrial> cnn_trials = {{7, 21, 0.02, 0.5, 0.0}, {8, 22, 0.01, 0.0, 1e-3}};
  expect_same_as_alone(std::make_shared<FusedCnn>(2, 1, "relu", 0.0, 10), cnn_trials, sgd, 10, data(), 2e-2);
  ArrayTrainer trainer(std::make_shared<FusedMlp>(3, 784, 1, 64, "relu", 0.0), mlp_trials(), o, data());
  trainer.train(100);
  for (const auto& m : trainer.evaluate()) EXPECT_GT(m.val_accuracy, 0.7) << "trial " << m.trial_id;
}

TEST(MixedPrecision, AMatesLabelSmoothingLeavesAnUnsmoothedModelsLossAsAlone) {
  // bfloat16 logits, as autocast gives: each model's loss is computed in
  // float32 whether or not another model of the array smooths its labels.
  const at::Tensor logits = at::randn({2, 64, 10}, at::TensorOptions().dtype(at::kBFloat16));
  const at::Tensor labels = at::randint(0, 10, {64}, at::TensorOptions().dtype(at::kLong));
  fusion::AutocastScope autocast(fusion::Precision::kBFloat16, at::kCPU);
  const at::Tensor alone = per_model_cross_entropy(logits, labels, {0.0, 0.0}, false);
  const at::Tensor mated = per_model_cross_entropy(logits, labels, {0.0, 0.1}, false);
  EXPECT_EQ(alone.scalar_type(), at::kFloat);
  EXPECT_EQ(mated.scalar_type(), at::kFloat);
  EXPECT_NEAR(mated[0].item<double>(), alone[0].item<double>(), 1e-6 * alone[0].item<double>());
}

// On a GPU autocast computes matrix products and convolutions in bfloat16 or
// float16 alike for the array and the plain models: the two agree to those
// precisions. (fp16 arrays scale each model's loss, the plain loop here does
// not: the CLI's GPU test compares fp16 sweeps with fp32 ones instead.)
TEST(MixedPrecision, Bfloat16AutocastArrayMatchesEachTrialAloneOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  ArrayTrainerOptions o = adam_options();
  o.precision = fusion::Precision::kBFloat16;
  const ClassificationData d = on(at::kCUDA, data());
  const auto gpu = at::TensorOptions().device(at::kCUDA);
  {
    FusedMlp mlp(3, 784, 1, 64, "relu", 0.0, 10, gpu);
    fusion::AutocastScope autocast(o.precision, at::kCUDA);
    EXPECT_EQ(mlp.forward(mlp.input(d.train.images.narrow(0, 0, 4))).scalar_type(), at::kBFloat16);
  }
  expect_same_as_alone(std::make_shared<FusedMlp>(3, 784, 1, 64, "relu", 0.0, 10, gpu), mlp_trials(), o, 10, d, 2e-2);
  ArrayTrainerOptions sgd = o;
  sgd.optimizer = "sgd";
  const std::vector<SlotTrial> cnn_trials = {{7, 21, 0.02, 0.5, 0.0}, {8, 22, 0.01, 0.0, 1e-3}};
  expect_same_as_alone(std::make_shared<FusedCnn>(2, 1, "relu", 0.0, 10, gpu), cnn_trials, sgd, 10, d, 2e-2);
}

}  // namespace
}  // namespace hfta::trainers
