// Autocast scopes and per-model dynamic loss scaling.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {
namespace {

TEST(MixedPrecision, NamesRoundTripAndUnknownOnesAreRefused) {
  for (const auto& name : precision_names()) EXPECT_EQ(precision_name(precision_from_name(name)), name);
  EXPECT_THROW(precision_from_name("fp8"), std::invalid_argument);
}

TEST(MixedPrecision, AutocastScopeCastsMatmulsOnTheCpuAndRestoresTheState) {
  const at::Tensor a = at::randn({4, 8}), b = at::randn({8, 3});
  {
    AutocastScope off(Precision::kFloat32, at::kCPU);
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  }
  {
    AutocastScope scope(Precision::kBFloat16, at::kCPU);
    EXPECT_TRUE(fusion::autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kBFloat16);
  }
  EXPECT_FALSE(fusion::autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
}

TEST(MixedPrecision, LossScalerUnscalesEachModelAndFindsItsOverflow) {
  PerModelLossScaler::Options o;
  o.init_scale = 8;
  o.growth_interval = 3;
  PerModelLossScaler scaler(3, o);
  scaler.set(2, 2, 0);
  EXPECT_TRUE(at::equal(scaler.scale(at::ones({3})), at::tensor({8.0f, 8.0f, 2.0f})));

  at::Tensor w = at::zeros({3, 2, 2}).requires_grad_();
  at::Tensor v = at::zeros({3, 5}).requires_grad_();
  w.mutable_grad() = at::full({3, 2, 2}, 16.0);
  v.mutable_grad() = at::full({3, 5}, 4.0);
  v.mutable_grad()[1][3] = std::numeric_limits<float>::infinity();  // model 1 overflowed
  const auto found = scaler.unscale({w, v});
  EXPECT_EQ(found, (std::vector<bool>{false, true, false}));
  EXPECT_TRUE(at::equal(w.grad()[0], at::full({2, 2}, 2.0)));
  EXPECT_TRUE(at::equal(w.grad()[2], at::full({2, 2}, 8.0)));
  EXPECT_TRUE(at::equal(v.grad()[0], at::full({5}, 0.5)));

  scaler.update(found);  // model 1 backs off; the others count one good step
  EXPECT_EQ(scaler.scale_of(0), 8);
  EXPECT_EQ(scaler.scale_of(1), 4);
  EXPECT_EQ(scaler.growth_tracker(0), 1);
  EXPECT_EQ(scaler.growth_tracker(1), 0);
  scaler.update({false, false, false});
  scaler.update({false, false, false});  // model 0's third good step in a row: it grows
  EXPECT_EQ(scaler.scale_of(0), 16);
  EXPECT_EQ(scaler.growth_tracker(0), 0);
  EXPECT_EQ(scaler.scale_of(1), 4);
  EXPECT_EQ(scaler.growth_tracker(1), 2);
}

TEST(MixedPrecision, NaNGradientsCountAsOverflow) {
  PerModelLossScaler scaler(2, {});
  at::Tensor w = at::zeros({2, 3}).requires_grad_();
  w.mutable_grad() = at::ones({2, 3});
  w.mutable_grad()[0][1] = std::nan("");
  EXPECT_EQ(scaler.unscale({w}), (std::vector<bool>{true, false}));
}

}  // namespace
}  // namespace hfta::fusion
