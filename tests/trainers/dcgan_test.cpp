// DCGAN arrays against each trial trained alone with plain torch::nn and two
// torch::optim::Adam, and the Fréchet distance against closed forms.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/dcgan.h"
#include "hfta/trainers/frechet_distance.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::trainers {
namespace {

const ClassificationData& gan_data() {
  static const ClassificationData d = [] {
    FashionMnistOptions o;
    o.limit = 3000;
    o.validation_size = 500;
    o.pad_to_32 = true;
    o.tanh_range = true;
    return load_fashion_mnist_data(o);
  }();
  return d;
}

const DcganShape kSmall{8, 4, 4};

std::vector<SlotTrial> trials() {
  std::vector<SlotTrial> out;
  for (int i = 0; i < 3; ++i) {
    SlotTrial t;
    t.trial_id = 10 + i, t.seed = 100 + static_cast<std::uint64_t>(i);
    t.lr = 2e-4 * (1 + i), t.beta1 = 0.5 + 0.1 * i;
    out.push_back(t);
  }
  return out;
}

ArrayTrainerOptions adam() {
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 16;
  o.data_seed = 7;
  o.metric = "val_fid";
  o.maximize = false;
  return o;
}

torch::nn::SequentialImpl& part(const torch::nn::Sequential& net, std::size_t i) {
  return *net->ptr(i)->as<torch::nn::SequentialImpl>();
}

at::Tensor bce(const at::Tensor& logits, double target) {
  return torch::nn::functional::binary_cross_entropy_with_logits(logits, at::full_like(logits, target));
}

// PyTorch's DCGAN example for one trial: plain generator and discriminator, two
// Adams, the array's batches and the trial's noise. Returns the generator's losses.
std::vector<double> train_alone(const FusedDcgan& array, const SlotTrial& t, const ArrayTrainerOptions& o,
                                std::int64_t steps, torch::nn::Sequential& out) {
  torch::manual_seed(t.seed);
  torch::nn::Sequential net = array.make_plain();
  auto& g = part(net, 0);
  auto& d = part(net, 1);
  auto options = torch::optim::AdamOptions(t.lr).betas({t.beta1, t.beta2}).eps(t.eps);
  torch::optim::Adam opt_d(d.parameters(), options), opt_g(g.parameters(), options);
  const auto& data = gan_data();
  const at::Tensor order = epoch_order(data.train.size(), o.data_seed, 0);
  std::vector<double> losses;
  for (std::int64_t s = 0; s < steps; ++s) {
    const Split b = batch(data.train, order, s, o.batch_size);
    const at::Tensor real = array.input(b.images);
    const at::Tensor noise =
        gan_noise({t.seed}, s, b.size(), array.shape().nz, real.options())[0].view({b.size(), -1, 1, 1});
    opt_d.zero_grad();
    bce(d.forward(real), 1.0).backward();
    const at::Tensor fake = g.forward(noise);
    bce(d.forward(fake.detach()), 0.0).backward();
    opt_d.step();
    opt_g.zero_grad();
    const at::Tensor g_loss = bce(d.forward(fake), 1.0);
    g_loss.backward();
    opt_g.step();
    losses.push_back(g_loss.item<double>());
  }
  out = net;
  return losses;
}

void expect_same_parameters(const torch::nn::Sequential& got, const torch::nn::Sequential& want, double tol) {
  const auto a = got->named_parameters(), b = want->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& p : b) {
    const double scale = std::max(p.value().abs().max().item<double>(), 1e-12);
    EXPECT_LE((a[p.key()] - p.value()).abs().max().item<double>() / scale, tol) << p.key();
  }
  for (const auto& buffer : want->named_buffers()) {
    EXPECT_TRUE(at::allclose(got->named_buffers()[buffer.key()].to(at::kDouble), buffer.value().to(at::kDouble), tol, 1e-12))
        << buffer.key();
  }
}

TEST(Dcgan, PlainFormHasDcgansShapesAndInit) {
  FusedDcgan gan(1, DcganShape{100, 64, 64});
  torch::manual_seed(0);
  auto net = gan.make_plain();
  std::int64_t g = 0, d = 0;
  for (const auto& p : part(net, 0).parameters()) g += p.numel();
  for (const auto& p : part(net, 1).parameters()) d += p.numel();
  // Convolutions without bias; batch norms' weight and bias.
  EXPECT_EQ(g, 100 * 256 * 16 + 256 * 128 * 16 + 128 * 64 * 16 + 64 * 16 + 2 * (256 + 128 + 64));
  EXPECT_EQ(d, 64 * 16 + 64 * 128 * 16 + 128 * 256 * 16 + 256 * 16 + 2 * (128 + 256));
  const at::Tensor w = part(net, 0).named_parameters()["0.weight"];
  EXPECT_NEAR(w.std().item<double>(), 0.02, 0.001);  // weights_init
  EXPECT_EQ(net->forward(at::randn({5, 100, 1, 1})).sizes(), (std::vector<std::int64_t>{5, 1}));
  EXPECT_EQ(part(net, 0).forward(at::randn({5, 100, 1, 1})).sizes(), (std::vector<std::int64_t>{5, 1, 32, 32}));
}

TEST(Dcgan, SlotsRoundTripExactly) {
  FusedDcgan gan(3, kSmall);
  for (std::int64_t b = 0; b < 3; ++b) gan.init_slot(b, 40 + static_cast<std::uint64_t>(b));
  const auto plain = gan.extract_slot(1);
  FusedDcgan other(2, kSmall);
  other.load_slot(0, plain);
  expect_same_parameters(other.extract_slot(0), plain, 0);
  torch::manual_seed(41);
  expect_same_parameters(plain, gan.make_plain(), 0);  // init_slot(seed) is make_plain after manual_seed(seed)
}

TEST(Dcgan, ArrayEqualsEachTrialTrainedAloneInFloat64) {
  const std::int64_t steps = 6;
  auto model = std::make_shared<FusedDcgan>(3, kSmall, at::TensorOptions().dtype(at::kDouble));
  ArrayTrainer trainer(model, trials(), adam(), gan_data());
  const auto losses = trainer.train(steps);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("trial " + std::to_string(i));
    torch::nn::Sequential alone{nullptr};
    const auto want = train_alone(*model, trials()[i], adam(), steps, alone);
    for (std::int64_t s = 0; s < steps; ++s) {
      EXPECT_NEAR(losses[static_cast<std::size_t>(s)][i], want[static_cast<std::size_t>(s)], 1e-9);
    }
    expect_same_parameters(trainer.extract(trials()[i].trial_id), alone, 1e-9);
  }
}

TEST(Dcgan, ArrayEqualsEachTrialTrainedAloneInFloat32) {
  const std::int64_t steps = 4;
  auto model = std::make_shared<FusedDcgan>(3, kSmall);
  ArrayTrainer trainer(model, trials(), adam(), gan_data());
  const auto losses = trainer.train(steps);
  for (std::size_t i = 0; i < 3; ++i) {
    torch::nn::Sequential alone{nullptr};
    const auto want = train_alone(*model, trials()[i], adam(), steps, alone);
    EXPECT_NEAR(losses.back()[i], want.back(), 1e-4 * std::abs(want.back()));
  }
}

TEST(Dcgan, ResumesInAnotherSlotOfAnotherArrayAsIfItNeverStopped) {
  auto options = adam();
  const auto all = trials();
  auto straight = std::make_shared<FusedDcgan>(3, kSmall, at::TensorOptions().dtype(at::kDouble));
  ArrayTrainer reference(straight, all, options, gan_data());
  reference.train(6);
  // Trial 0 trains 3 steps, then moves, with both optimizers' state, to slot 1 of a pair.
  ArrayTrainer first(std::make_shared<FusedDcgan>(3, kSmall, at::TensorOptions().dtype(at::kDouble)), all, options,
                     gan_data());
  first.train(3);
  auto second_model = std::make_shared<FusedDcgan>(2, kSmall, at::TensorOptions().dtype(at::kDouble));
  second_model->load_slot(1, first.extract(all[0].trial_id));
  second_model->init_slot(0, 999);
  ArrayTrainer second(second_model, {all[2], all[0]}, options, gan_data(), /*initialise=*/false);
  second.import_optimizer(1, first.export_optimizer(all[0].trial_id));
  second.import_optimizer(0, first.export_optimizer(all[2].trial_id));
  second.model().load_slot(0, first.extract(all[2].trial_id));
  second.seek(3);
  second.train(3);
  expect_same_parameters(second.extract(all[0].trial_id), reference.extract(all[0].trial_id), 1e-9);
  expect_same_parameters(second.extract(all[2].trial_id), reference.extract(all[2].trial_id), 1e-9);
}

TEST(Dcgan, CompactionKeepsTheSurvivorsOnTheirTrajectories) {
  // Trial 11's rate sends its losses past the divergence bound at the first
  // evaluation; the array then rebuilds with trials 10 and 12 and must go on
  // training them (both networks, both optimizers) as a pair that never held it.
  auto options = adam();
  options.divergence = 50;
  options.compact_fraction = 0.3;
  auto all = trials();
  all[1].lr = 1e4;
  auto make = [](std::int64_t models) {
    return std::make_shared<FusedDcgan>(models, kSmall, at::TensorOptions().dtype(at::kDouble));
  };
  ArrayTrainer compacted(make(3), all, options, gan_data());
  ArrayTrainer pair(make(2), {all[0], all[2]}, options, gan_data());
  for (ArrayTrainer* t : {&compacted, &pair}) {
    t->train(4);
    t->evaluate();
    t->train(3);
  }
  ASSERT_EQ(compacted.model().models(), 2) << "trial 11 did not diverge";
  for (const auto& t : {all[0], all[2]}) {
    expect_same_parameters(compacted.extract(t.trial_id), pair.extract(t.trial_id), 1e-12);
  }
}

TEST(Dcgan, EvaluationGivesEachModelItsFidAndDiscriminatorMetrics) {
  auto model = std::make_shared<FusedDcgan>(3, kSmall);
  ArrayTrainer trainer(model, trials(), adam(), gan_data());
  trainer.train(20);
  const auto metrics = trainer.evaluate();
  ASSERT_EQ(metrics.size(), 3u);
  for (const auto& m : metrics) {
    EXPECT_TRUE(std::isfinite(m.val_fid) && m.val_fid > 0) << m.val_fid;
    EXPECT_TRUE(std::isfinite(m.d_loss) && m.d_loss > 0);
    EXPECT_GE(m.val_accuracy, 0);
    EXPECT_LE(m.val_accuracy, 1);
  }
  // A trial alone in an array gets the same metrics as in the array of three,
  // bit for bit: packing never changes a trial's numbers.
  auto one = std::make_shared<FusedDcgan>(1, kSmall);
  ArrayTrainer alone(one, {trials()[1]}, adam(), gan_data());
  alone.train(20);
  const auto m = alone.evaluate().front();
  EXPECT_EQ(m.val_fid, metrics[1].val_fid);
  EXPECT_EQ(m.d_loss, metrics[1].d_loss);
  EXPECT_EQ(m.train_loss, metrics[1].train_loss);
  EXPECT_EQ(m.val_loss, metrics[1].val_loss);
  EXPECT_EQ(m.val_accuracy, metrics[1].val_accuracy);
}

TEST(FrechetDistance, MatchesClosedForms) {
  // Identical distributions: 0. Same covariance, shifted mean: the squared shift.
  // Diagonal covariances: sum of (sqrt(a) - sqrt(b))^2 plus the mean term.
  auto stats = [](std::vector<double> mean, std::vector<double> diagonal) {
    return FeatureStatistics{at::tensor(mean, at::kDouble), at::diag(at::tensor(diagonal, at::kDouble))};
  };
  EXPECT_NEAR(frechet_distance(stats({1, 2}, {4, 9}), stats({1, 2}, {4, 9})), 0, 1e-9);
  EXPECT_NEAR(frechet_distance(stats({1, 2}, {4, 9}), stats({4, 6}, {4, 9})), 25, 1e-9);
  EXPECT_NEAR(frechet_distance(stats({0, 0}, {4, 9}), stats({0, 0}, {1, 16})), 1 + 1, 1e-9);
  // A full covariance against itself, rotated into a non-diagonal basis.
  const at::Tensor r = at::tensor({0.6, -0.8, 0.8, 0.6}, at::kDouble).view({2, 2});
  const at::Tensor s = at::matmul(at::matmul(r, at::diag(at::tensor({4.0, 1.0}, at::kDouble))), r.t());
  EXPECT_NEAR(frechet_distance({at::zeros({2}, at::kDouble), s}, {at::zeros({2}, at::kDouble), s}), 0, 1e-9);
}

TEST(FrechetDistance, RealImagesAreCloserToRealImagesThanNoiseIs) {
  const auto& d = gan_data();
  const auto features = ImageFeatures::of(d.train);
  EXPECT_EQ(features.get(), ImageFeatures::of(d.train).get());  // trained once
  const auto reference = feature_statistics((*features)(d.validation.images));
  const double real = frechet_distance(feature_statistics((*features)(d.test.images.narrow(0, 0, 500))), reference);
  const double noise =
      frechet_distance(feature_statistics((*features)(at::rand({500, 1, 32, 32}) * 2 - 1)), reference);
  EXPECT_LT(real * 10, noise) << real << " vs " << noise;
}

TEST(Dcgan, ModelZooBuildsItOnFashionMnistInTanhRange) {
  ASSERT_TRUE(is_trainable("dcgan"));
  auto model = make_classifier("dcgan", 2, {{"nz", "16"}, {"ngf", "8"}, {"ndf", "8"}}, 10);
  EXPECT_EQ(dynamic_cast<FusedDcgan&>(*model).shape().nz, 16);
  EXPECT_LE(gan_data().train.images.max().item<double>(), 1.0);
  EXPECT_GE(gan_data().train.images.min().item<double>(), -1.0);
  EXPECT_EQ(gan_data().train.images.size(2), 32);
}

}  // namespace
}  // namespace hfta::trainers
