// End to end: an array of B=4 trials trained on Fashion-MNIST gives each trial the
// loss curve and final weights it gets trained alone with plain LibTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <torch/nn/functional/loss.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim.h>

#include "hfta/fusion/caching_host_allocator.h"
#include "hfta/trainers/array_trainer.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

TEST(ArrayTrainer, MlpArrayEqualsEachTrialTrainedAloneInFloat64) {
  std::vector<SlotTrial> trials = {
      {0, 11, 0.05, 0.9, 0.0}, {1, 12, 0.01, 0.0, 1e-3}, {2, 13, 0.1, 0.5, 1e-4}, {3, 14, 0.02, 0.8, 1e-5}};
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 4;
  expect_same_as_alone(std::make_shared<FusedMlp>(4, 784, 2, 64, "tanh", 0.0, 10, at::TensorOptions().dtype(at::kDouble)),
                       trials, o, 100);
}

void expect_mlp_with_adam_as_alone(const at::Device& device) {
  std::vector<SlotTrial> trials = {
      {0, 11, 1e-3, 0, 0.0, 0.0, 0.9, 0.999}, {1, 12, 3e-3, 0, 1e-4, 0.0, 0.8, 0.99},
      {2, 13, 5e-4, 0, 0.0, 0.0, 0.95, 0.999}, {3, 14, 2e-3, 0, 1e-3, 0.0, 0.9, 0.9}};
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 32;
  o.data_seed = 5;
  const ClassificationData d = on(device, data());
  expect_same_as_alone(std::make_shared<FusedMlp>(4, 784, 2, 64, "relu", 0.0, 10, at::TensorOptions().device(device)),
                       trials, o, 100, d);
}

TEST(ArrayTrainer, MlpArrayWithAdamEqualsEachTrialTrainedAlone) { expect_mlp_with_adam_as_alone(at::kCPU); }

TEST(ArrayTrainer, MlpArrayWithAdamEqualsEachTrialTrainedAloneOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_mlp_with_adam_as_alone(at::kCUDA);
}

std::vector<SlotTrial> cnn_trials() {
  return {{7, 21, 0.02, 0.5, 0.0}, {8, 22, 0.01, 0.0, 1e-3}, {9, 23, 0.03, 0.0, 1e-4}, {10, 24, 0.01, 0.8, 0.0}};
}

void expect_cnn_as_alone_in_float64(const at::Device& device) {
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 6;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  const ClassificationData d = on(device, data());
  expect_same_as_alone(std::make_shared<FusedCnn>(4, 1, "relu", 0.0, 10, f64), cnn_trials(), o, 100, d);
  // Other activations run before the pooling, ReLU after it: both orders are covered.
  expect_same_as_alone(std::make_shared<FusedCnn>(4, 1, "tanh", 0.0, 10, f64), cnn_trials(), o, 30, d);
}

TEST(ArrayTrainer, CnnArrayEqualsEachTrialTrainedAloneInFloat64) { expect_cnn_as_alone_in_float64(at::kCPU); }

// Flipped and cropped batches (the cnn's flip and crop options): every model
// of the array trains on the batch each trains on alone, augmented by (data
// seed, step) as train_alone does it from augmentation.h.
void expect_augmented_cnn_as_alone(const at::Device& device) {
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 6;
  o.augmentation.flip = true;
  o.augmentation.crop = 3;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  expect_same_as_alone(std::make_shared<FusedCnn>(4, 1, "relu", 0.0, 10, f64), cnn_trials(), o, 40, on(device, data()));
}

TEST(ArrayTrainer, CnnArrayOnFlippedAndCroppedBatchesEqualsEachTrialTrainedAlone) {
  expect_augmented_cnn_as_alone(at::kCPU);
}

TEST(ArrayTrainer, CnnArrayOnFlippedAndCroppedBatchesEqualsEachTrialTrainedAloneOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_augmented_cnn_as_alone(at::kCUDA);
}

TEST(ArrayTrainer, CnnArrayEqualsEachTrialTrainedAloneInFloat64OnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_cnn_as_alone_in_float64(at::kCUDA);
}

// In float32 too, under either strategy (one grouped convolution and batched
// products, or each model's own kernels): the 1e-4 holds with room
// (measured on an AMD EPYC with AVX-512, CPU family 26: weights within 3e-7 of plain LibTorch's after 100
// SGD steps, losses within 3e-7). Trials other than cnn_trials(): in float32 a
// max-pool window whose two largest inputs, or a ReLU input near 0, lie within
// rounding of each other can fall one way in the array and the other in
// LibTorch's kernels (which round differently: OpenBLAS and oneDNN pick their
// kernels by CPU), and from there the two trajectories part like any chaotic
// ones. There, cnn_trials()'s {lr 0.01, momentum 0.8, seed 24} went from 1.4e-7
// at step 20 to 1.7e-4 at step 40 and 0.1 at step 100, while in float64 (the
// test above) it agrees within 1e-9: rounding, not different math. These trials
// stay clear of such a tie there (cnn_trials() did on earlier sessions' CPUs).
TEST(ArrayTrainer, CnnArrayEqualsEachTrialTrainedAloneInFloat32UnderEitherStrategy) {
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 6;
  const std::vector<SlotTrial> trials = {
      {7, 25, 0.03, 0.0, 1e-4}, {8, 22, 0.01, 0.0, 1e-3}, {9, 26, 0.01, 0.5, 0.0}, {10, 24, 0.005, 0.8, 0.0}};
  for (const auto strategy : {fusion::Strategy::kFused, fusion::Strategy::kPerModel}) {
    SCOPED_TRACE(fusion::to_string(strategy));
    auto model = std::make_shared<FusedCnn>(4, 1, "relu", 0.0, 10);
    o.strategies.assign(model->strategies().size(), strategy);
    expect_same_as_alone(model, trials, o, 100);
  }
}

// A program that trains arrays through the library, without hfta-tune's main,
// still gets the caching host allocator (or its arrays page-fault every step).
TEST(ArrayTrainer, InstallsTheCachingHostAllocator) {
  ArrayTrainerOptions o;
  o.batch_size = 16;
  ArrayTrainer trainer(std::make_shared<FusedMlp>(2, 784, 1, 8, "relu", 0.0), {{0, 1, 0.05}, {1, 2, 0.05}}, o, data());
  EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), &hfta::fusion::CachingHostAllocator::instance());
  // From an empty cache: a block cached by an earlier test in this process
  // would otherwise serve the tensor below and leave the count as it was.
  hfta::fusion::CachingHostAllocator::instance().empty_cache();
  at::Tensor large = at::empty({1 << 20});  // 4 MiB: a cached block once freed
  large.reset();
  EXPECT_GE(hfta::fusion::CachingHostAllocator::instance().cached_bytes(), 4u << 20);
}

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
  // The diverged model is frozen (and, by default, compacted away); the others keep training.
  EXPECT_EQ(trainer.trial_ids(), (std::vector<std::int64_t>{0, 2}));
  const at::Tensor frozen = trainer.extract(1)->parameters()[0].clone();
  const at::Tensor moving = trainer.extract(0)->parameters()[0].clone();
  trainer.train(5);
  // (Its weights hold NaN or Inf, which only equal themselves with equal_nan.)
  EXPECT_TRUE(at::allclose(trainer.extract(1)->parameters()[0], frozen, 0, 0, true));
  EXPECT_FALSE(at::equal(trainer.extract(0)->parameters()[0], moving));
}

// Patience and min_delta, replayed independently from the metrics each
// evaluation reports: a trial stops at the evaluation where it has gone
// `patience` evaluations without beating its best by more than min_delta, not
// before and not after, and is not reported again. Watched here: val_loss,
// minimised, so "beating" means falling.
TEST(ArrayTrainer, EarlyStoppingStopsEachTrialExactlyWhenItsPatienceRunsOut) {
  // A learning rate of 0 never improves after the first evaluation: it must stop at the third.
  std::vector<SlotTrial> trials = {{0, 1, 0.0}, {1, 2, 0.05, 0.9}, {2, 3, 0.01}, {3, 4, 0.002}};
  ArrayTrainerOptions o;
  o.batch_size = 64;
  o.patience = 2;
  o.min_delta = 0.01;
  o.metric = "val_loss";
  o.maximize = false;
  o.compact_fraction = 2.0;  // never compact: the survivors' slots stay put (compaction has its own test)
  ArrayTrainer trainer(std::make_shared<FusedMlp>(4, 784, 1, 16, "relu", 0.0), trials, o, data());
  std::map<std::int64_t, double> best;
  std::map<std::int64_t, int> bad;
  std::map<std::int64_t, int> stopped_at;
  for (int e = 0; e < 12; ++e) {
    trainer.train(4);
    for (const auto& m : trainer.evaluate()) {
      ASSERT_EQ(stopped_at.count(m.trial_id), 0u) << "trial " << m.trial_id << " reported after it stopped";
      const double v = -m.val_loss;
      bool stop = false;
      if (!best.count(m.trial_id) || v > best[m.trial_id] + o.min_delta) {
        best[m.trial_id] = v, bad[m.trial_id] = 0;
      } else {
        stop = ++bad[m.trial_id] >= o.patience;
      }
      EXPECT_EQ(m.status, stop ? SlotStatus::kStopped : SlotStatus::kRunning) << "trial " << m.trial_id << " at evaluation " << e;
      if (m.status != SlotStatus::kRunning) stopped_at[m.trial_id] = e;
    }
  }
  ASSERT_EQ(stopped_at.count(0), 1u);
  EXPECT_EQ(stopped_at[0], 2);
  EXPECT_LT(stopped_at.size(), trials.size()) << "every trial stopped: nothing tells patience from always stopping";
}

// Divergence is caught by a non-finite loss with no bound set, and by the bound
// alone while the loss is still finite.
TEST(ArrayTrainer, DivergenceIsANonFiniteLossOrOneAboveTheBound) {
  std::vector<SlotTrial> trials = {{0, 1, 0.05, 0.9}, {1, 2, 1e12, 0.9}};
  ArrayTrainerOptions o;
  o.batch_size = 64;
  o.compact_fraction = 2.0;
  ArrayTrainer unbounded(std::make_shared<FusedMlp>(2, 784, 1, 16, "relu", 0.0), trials, o, data());
  unbounded.train(20);
  const auto m = unbounded.evaluate();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_FALSE(std::isfinite(m[1].train_loss) && std::isfinite(m[1].val_loss)) << m[1].train_loss;
  EXPECT_EQ(m[1].status, SlotStatus::kDiverged);
  EXPECT_EQ(m[0].status, SlotStatus::kRunning);
  // A bound below every early loss: a finite loss above it diverges, one below stays.
  o.divergence = 1.8;
  ArrayTrainer bounded(std::make_shared<FusedMlp>(2, 784, 1, 16, "relu", 0.0), {{0, 1, 0.05, 0.9}, {1, 2, 0.0}}, o,
                       data());
  bounded.train(20);
  const auto b = bounded.evaluate();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_LT(b[0].train_loss, 1.8);
  EXPECT_EQ(b[0].status, SlotStatus::kRunning);
  EXPECT_TRUE(std::isfinite(b[1].train_loss) && b[1].train_loss > 1.8) << b[1].train_loss;  // untrained: about ln 10
  EXPECT_EQ(b[1].status, SlotStatus::kDiverged);
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

namespace hfta::trainers {
namespace {

// Four trials with dropout, Adam and a step schedule; trials 11 and 12 diverge
// (learning rate 1e4) at the first evaluation, so half the array stops.
std::vector<SlotTrial> half_diverging() {
  std::vector<SlotTrial> t(4);
  for (std::size_t i = 0; i < t.size(); ++i) {
    t[i].trial_id = 10 + static_cast<std::int64_t>(i), t[i].seed = 100 + i, t[i].lr = 1e-3, t[i].dropout = 0.2;
  }
  t[1].lr = t[2].lr = 1e4;
  t[3].schedule.kind = fusion::ScheduleKind::kStep, t[3].schedule.step_size = 7, t[3].schedule.gamma = 0.5;
  return t;
}

ArrayTrainerOptions adam_options(double compact_fraction) {
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 32;
  o.data_seed = 3;
  o.divergence = 50;
  o.compact_fraction = compact_fraction;
  return o;
}

std::shared_ptr<FusedMlp> small_mlp(std::int64_t models) {
  return std::make_shared<FusedMlp>(models, 784, 1, 32, "relu", 0.2, 10, at::TensorOptions().dtype(at::kDouble));
}

// Train 10 steps, evaluate (the diverged stop), train 15 more, evaluate, train 5.
std::vector<std::vector<double>> run_schedule(ArrayTrainer& t) {
  t.train(10);
  t.evaluate();
  auto losses = t.train(15);
  t.evaluate();
  for (auto& row : t.train(5)) losses.push_back(row);
  return losses;
}

void expect_same_model(const torch::nn::Sequential& a, const torch::nn::Sequential& b) {
  const auto pa = a->parameters(), pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t k = 0; k < pa.size(); ++k) EXPECT_TRUE(at::allclose(pa[k], pb[k], 0, 1e-12, true)) << k;
}

TEST(ArrayTrainer, CompactionKeepsSurvivorsExactlyOnTheirTrajectories) {
  const auto trials = half_diverging();
  ArrayTrainer compacted(small_mlp(4), trials, adam_options(0.5), data());
  ArrayTrainer kept(small_mlp(4), trials, adam_options(0), data());
  ArrayTrainer survivors_only(small_mlp(2), {trials[0], trials[3]}, adam_options(0.5), data());
  const auto a = run_schedule(compacted), b = run_schedule(kept), c = run_schedule(survivors_only);

  // The stopped models left: two slots remain, holding the survivors.
  EXPECT_EQ(compacted.trial_ids(), (std::vector<std::int64_t>{10, 13}));
  EXPECT_EQ(compacted.model().models(), 2);
  EXPECT_EQ(kept.model().models(), 4);
  for (std::size_t s = 0; s < a.size(); ++s) {
    ASSERT_EQ(a[s].size(), 2u);
    EXPECT_NEAR(a[s][0], b[s][0], 1e-12) << "step " << s;
    EXPECT_NEAR(a[s][1], b[s][3], 1e-12) << "step " << s;
    EXPECT_NEAR(a[s][0], c[s][0], 1e-12) << "step " << s;
    EXPECT_NEAR(a[s][1], c[s][1], 1e-12) << "step " << s;
  }
  for (std::int64_t id : {10, 13}) {
    SCOPED_TRACE("trial " + std::to_string(id));
    expect_same_model(compacted.extract(id), kept.extract(id));
    expect_same_model(compacted.extract(id), survivors_only.extract(id));
    const auto sa = compacted.export_optimizer(id), sb = kept.export_optimizer(id);
    EXPECT_EQ(sa.step, sb.step);
    EXPECT_TRUE(at::allclose(sa.buffers[0].at("exp_avg_sq"), sb.buffers[0].at("exp_avg_sq"), 0, 1e-15));
  }
  // The stopped trials are still there to read, as they stopped.
  expect_same_model(compacted.extract(11), kept.extract(11));
  EXPECT_EQ(compacted.export_optimizer(12).step, kept.export_optimizer(12).step);
}

// Stopped by patience rather than divergence, and left in its slot (no
// compaction): the trial is frozen there, and the others train exactly as in
// an array that never held it.
TEST(ArrayTrainer, APatienceStoppedTrialIsFrozenInPlaceAndTheOthersTrainAsIfItWereNeverThere) {
  auto trials = half_diverging();
  trials[1].lr = 0;     // never improves after its first evaluation: stops at the third
  trials[2].lr = 3e-3;  // the others keep improving by more than min_delta for a while
  ArrayTrainerOptions o = adam_options(2.0);
  o.patience = 2;
  o.min_delta = 1e-3;
  o.metric = "val_loss";
  o.maximize = false;
  ArrayTrainer with(small_mlp(4), trials, o, data());
  ArrayTrainer without(small_mlp(3), {trials[0], trials[2], trials[3]}, o, data());
  ASSERT_EQ(with.trial_ids(), (std::vector<std::int64_t>{10, 11, 12, 13}));  // slot b holds trial 10 + b
  auto slot = [](std::int64_t id) { return id - 10; };
  torch::nn::Sequential at_stop;
  for (int e = 0; e < 6; ++e) {
    const auto a = with.train(5), b = without.train(5);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t s = 0; s < a.size(); ++s) {
      EXPECT_NEAR(a[s][0], b[s][0], 1e-12) << "evaluation " << e << " step " << s;
      EXPECT_NEAR(a[s][2], b[s][1], 1e-12) << "evaluation " << e << " step " << s;
      EXPECT_NEAR(a[s][3], b[s][2], 1e-12) << "evaluation " << e << " step " << s;
    }
    for (const auto& m : with.evaluate()) {
      if (m.trial_id == 11 && m.status == SlotStatus::kStopped) at_stop = with.model().extract_slot(slot(11));
    }
    without.evaluate();
  }
  ASSERT_TRUE(at_stop) << "trial 11 never stopped";
  EXPECT_EQ(with.model().models(), 4);  // still in its slot
  EXPECT_EQ(with.status(slot(11)), SlotStatus::kStopped);
  expect_same_model(with.model().extract_slot(slot(11)), at_stop);  // frozen in the array itself
  expect_same_model(with.extract(11), at_stop);
  for (std::int64_t id : {10, 12, 13}) {
    SCOPED_TRACE("trial " + std::to_string(id));
    EXPECT_EQ(with.status(slot(id)), SlotStatus::kRunning);
    expect_same_model(with.extract(id), without.extract(id));
  }
}

TEST(ArrayTrainer, PlateauCutsTheRateWhenAnAccuracyToMaximiseStaysFlat) {
  // A rate too small to change a prediction keeps validation accuracy the
  // same at every evaluation: a plateau in max mode (PyTorch's mode='max'), so
  // a patience of 0 halves the rate at the second evaluation, and again at the
  // third. Read as a loss (the negated accuracy), a tie looked like a gain.
  std::vector<SlotTrial> trials(1);
  trials[0].trial_id = 1, trials[0].seed = 5, trials[0].lr = 1e-6;
  trials[0].schedule.kind = fusion::ScheduleKind::kPlateau, trials[0].schedule.factor = 0.5;
  trials[0].schedule.patience = 0;
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 9;
  o.metric = "val_accuracy";
  o.maximize = true;
  ArrayTrainer trainer(small_mlp(1), trials, o, data());
  std::vector<double> accuracy;
  for (int i = 0; i < 3; ++i) {
    trainer.train(2);
    accuracy.push_back(trainer.evaluate().front().val_accuracy);
  }
  ASSERT_EQ(accuracy[0], accuracy[2]);
  EXPECT_DOUBLE_EQ(trainer.optimizer().lr()[0], 0.25e-6);
}

TEST(ArrayTrainer, ATrialResumesInAnotherSlotOfAnotherArrayAsIfNeverStopped) {
  auto trials = half_diverging();
  trials[1].lr = trials[2].lr = 2e-3;  // no divergence here
  const std::vector<SlotTrial> pair = {trials[3], trials[0]};
  // Straight through: 2k steps with an evaluation at k.
  ArrayTrainer straight(small_mlp(2), pair, adam_options(0.5), data());
  straight.train(12);
  straight.evaluate();
  const auto straight_losses = straight.train(12);

  // k steps, then trial 13's checkpoint (its model through a file) into slot 2 of a new array of three.
  ArrayTrainer first(small_mlp(2), pair, adam_options(0.5), data());
  first.train(12);
  first.evaluate();
  const std::string path = ::testing::TempDir() + "/trial13.pt";
  torch::save(first.extract(13), path);
  torch::nn::Sequential loaded = small_mlp(1)->make_plain();
  torch::load(loaded, path);
  const fusion::SlotState state = first.export_optimizer(13);

  auto model = small_mlp(3);
  model->load_slot(2, loaded);
  ArrayTrainer second(model, {trials[1], trials[2], trials[3]}, adam_options(0.5), data(), /*initialise=*/false);
  second.optimizer().import_slot(2, state);
  second.seek(12);
  const auto losses = second.train(12);
  for (std::size_t s = 0; s < losses.size(); ++s) EXPECT_NEAR(losses[s][2], straight_losses[s][0], 1e-12) << s;
  expect_same_model(second.extract(13), straight.extract(13));
}

TEST(ArrayTrainer, ATrialCutBetweenEvaluationsResumesWithItsMasksAndLossAverage) {
  // Dropout 0.2; the cut at step 7 falls between evaluations (at 0 and 15).
  // The masks follow from the trial's seed and step alone, and the training
  // losses since the last evaluation travel with the trial, so the evaluation
  // at 15 reads the same average as straight through.
  auto trials = half_diverging();
  trials[1].lr = trials[2].lr = 2e-3;
  ArrayTrainer straight(small_mlp(2), {trials[0], trials[3]}, adam_options(0.5), data());
  straight.train(15);
  const auto straight_metrics = straight.evaluate();

  ArrayTrainer first(small_mlp(2), {trials[0], trials[3]}, adam_options(0.5), data());
  first.train(7);
  auto model = small_mlp(2);
  model->load_slot(0, first.extract(13));
  ArrayTrainer second(model, {trials[3], trials[1]}, adam_options(0.5), data(), /*initialise=*/false);
  second.optimizer().import_slot(0, first.export_optimizer(13));
  second.restore_progress(0, first.progress(13));
  second.seek(7);
  second.train(8);
  const auto metrics = second.evaluate();
  expect_same_model(second.extract(13), straight.extract(13));
  EXPECT_NEAR(metrics[0].train_loss, straight_metrics[1].train_loss, 1e-12);
  EXPECT_EQ(metrics[0].val_loss, straight_metrics[1].val_loss);
}

TEST(ArrayTrainer, ResumesFromAnEvaluationPointWithItsEarlyStoppingAndPlateauState) {
  // Plateau schedules that halve the rate at every evaluation without a gain,
  // and a patience of 2 with a gain hard to reach: what the evaluations before
  // the cut saw decides the rates and the stops after it.
  auto trials = half_diverging();
  std::vector<SlotTrial> pair = {trials[0], trials[3]};
  for (auto& t : pair) {
    t.schedule = {};
    t.schedule.kind = fusion::ScheduleKind::kPlateau, t.schedule.factor = 0.5, t.schedule.patience = 0;
  }
  ArrayTrainerOptions o = adam_options(0.5);
  o.patience = 2;
  o.min_delta = 0.3;
  auto segment = [](ArrayTrainer& t, std::vector<std::vector<double>>& losses) {
    for (auto& row : t.train(8)) losses.push_back(row);
    return t.evaluate();
  };
  std::vector<std::vector<double>> straight_losses, cut_losses;
  ArrayTrainer straight(small_mlp(2), pair, o, data());
  for (int i = 0; i < 2; ++i) segment(straight, straight_losses);
  straight_losses.clear();
  const auto straight_third = segment(straight, straight_losses);
  const auto straight_fourth = segment(straight, straight_losses);

  ArrayTrainer first(small_mlp(2), pair, o, data());
  for (int i = 0; i < 2; ++i) segment(first, cut_losses);
  cut_losses.clear();
  auto model = small_mlp(2);
  std::vector<fusion::SlotState> states;
  std::vector<SlotProgress> progress;
  for (std::int64_t b = 0; b < 2; ++b) {  // into swapped slots of a new array
    const std::int64_t id = pair[static_cast<std::size_t>(b)].trial_id;
    model->load_slot(1 - b, first.extract(id));
    states.push_back(first.export_optimizer(id));
    progress.push_back(first.progress(id));
  }
  ArrayTrainer second(model, {pair[1], pair[0]}, o, data(), /*initialise=*/false);
  for (std::int64_t b = 0; b < 2; ++b) {
    second.optimizer().import_slot(1 - b, states[static_cast<std::size_t>(b)]);
    second.restore_progress(1 - b, progress[static_cast<std::size_t>(b)]);
  }
  second.seek(16);
  const auto third = segment(second, cut_losses);
  const auto fourth = segment(second, cut_losses);
  ASSERT_EQ(cut_losses.size(), straight_losses.size());
  for (std::size_t s = 0; s < cut_losses.size(); ++s) {
    EXPECT_NEAR(cut_losses[s][0], straight_losses[s][1], 1e-12) << s;
    if (cut_losses[s].size() > 1) EXPECT_NEAR(cut_losses[s][1], straight_losses[s][0], 1e-12) << s;
  }
  // Same evaluations, same stops (at least one trial stops on its patience here).
  auto by_id = [](const std::vector<SlotMetrics>& ms) {
    std::map<std::int64_t, std::pair<double, SlotStatus>> out;
    for (const auto& m : ms) out[m.trial_id] = {m.val_loss, m.status};
    return out;
  };
  EXPECT_EQ(by_id(third), by_id(straight_third));
  EXPECT_EQ(by_id(fourth), by_id(straight_fourth));
  bool stopped = false;
  for (const auto& [id, m] : by_id(third)) stopped = stopped || m.second == SlotStatus::kStopped;
  EXPECT_TRUE(stopped);
}

// A rung that ends between epoch boundaries is evaluated for the scheduler
// only: the evaluation stops trials whose loss is NaN (and compacts the
// array), but the divergence bound, the survivors' patience, plateau rates and
// training-loss averages go on as if it had never happened.
TEST(ArrayTrainer, AnEvaluationThatOnlyLooksStopsTheDivergedAndChangesNothingElse) {
  auto trials = half_diverging();
  trials[1].lr = NAN;  // a NaN loss from the first step; trial 12's is finite, above the bound
  for (auto* t : {&trials[0], &trials[3]}) {
    t->schedule = {};
    t->schedule.kind = fusion::ScheduleKind::kPlateau, t->schedule.factor = 0.5, t->schedule.patience = 0;
  }
  ArrayTrainerOptions o = adam_options(0.25);
  o.patience = 1;
  o.min_delta = 1e9;  // no evaluation after a trial's first counted one improves enough: it stops at its second
  ArrayTrainer looked(small_mlp(4), trials, o, data());
  looked.train(10);
  const auto first = looked.evaluate(/*scheduled=*/false);
  EXPECT_EQ(looked.trial_ids(), (std::vector<std::int64_t>{10, 12, 13}));  // trial 11 stopped, the array compacted
  for (const auto& m : first) {
    if (m.trial_id == 12) EXPECT_GT(m.train_loss, o.divergence);  // a bound a look does not hold it to
    EXPECT_EQ(m.status, m.trial_id == 11 ? SlotStatus::kDiverged : SlotStatus::kRunning) << m.trial_id;
  }
  looked.train(15);
  const auto second = looked.evaluate();
  looked.train(5);
  const auto third = looked.evaluate();

  ArrayTrainer regular(small_mlp(2), {trials[0], trials[3]}, o, data());
  regular.train(25);
  const auto second_alone = regular.evaluate();
  regular.train(5);
  const auto third_alone = regular.evaluate();
  auto same = [](const std::vector<SlotMetrics>& a, const std::vector<SlotMetrics>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE("trial " + std::to_string(a[i].trial_id));
      EXPECT_EQ(a[i].trial_id, b[i].trial_id);
      EXPECT_NEAR(a[i].train_loss, b[i].train_loss, 1e-12);  // the mean over all 25 steps, then the last 5
      EXPECT_NEAR(a[i].val_loss, b[i].val_loss, 1e-12);
      EXPECT_EQ(a[i].status, b[i].status);
    }
  };
  auto without_12 = [](std::vector<SlotMetrics> ms) {  // which the first scheduled evaluation holds to the bound
    EXPECT_TRUE(std::any_of(ms.begin(), ms.end(), [](const SlotMetrics& m) {
      return m.trial_id == 12 && m.status == SlotStatus::kDiverged;
    }));
    ms.erase(std::remove_if(ms.begin(), ms.end(), [](const SlotMetrics& m) { return m.trial_id == 12; }), ms.end());
    return ms;
  };
  same(without_12(second), second_alone);
  same(third, third_alone);
  for (const auto& m : without_12(second)) EXPECT_EQ(m.status, SlotStatus::kRunning);  // counted, the look would have stopped them
  for (const auto& m : third) EXPECT_EQ(m.status, SlotStatus::kStopped);
  for (std::int64_t id : {10, 13}) expect_same_model(looked.extract(id), regular.extract(id));
}

}  // namespace
}  // namespace hfta::trainers
