// Per-model drop rates, independent masks, scaling and eval mode.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/layout.h"

namespace hfta::fusion {
namespace {

TEST(FusedDropout, EachSlotDropsAtItsOwnRate) {
  const std::vector<double> p = {0.0, 0.1, 0.5, 0.9, 1.0};
  for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    FusedDropout dropout(p, Layout::kMatmul);
    at::manual_seed(0);
    const at::Tensor x = at::ones({5, 200, 100}, at::TensorOptions().dtype(dtype));
    const at::Tensor y = dropout->forward(x);
    for (std::size_t b = 0; b < p.size(); ++b) {
      const at::Tensor slot = y[b];
      const double dropped = (slot == 0).to(at::kDouble).mean().item<double>();
      EXPECT_NEAR(dropped, p[b], 0.01) << "slot " << b;
      if (p[b] < 1) {
        // Kept elements are scaled by 1/(1-p): the expectation is preserved.
        const double kept_value = slot.max().item<double>();
        EXPECT_NEAR(kept_value, 1.0 / (1.0 - p[b]), 1e-6 / (1.0 - p[b]));
      }
    }
  }
}

TEST(FusedDropout, MasksAreIndependentAcrossModels) {
  FusedDropout dropout(std::vector<double>(4, 0.5), Layout::kMatmul);
  at::manual_seed(1);
  const at::Tensor mask = dropout->forward(at::ones({4, 100, 100})) != 0;
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      const double agree = (mask[a] == mask[b]).to(at::kDouble).mean().item<double>();
      EXPECT_NEAR(agree, 0.5, 0.02) << a << " vs " << b;  // 0.5 when independent
    }
  }
}

TEST(FusedDropout, ConvLayoutAndChannels) {
  const std::vector<double> p = {0.2, 0.7};
  FusedDropout dropout(p, Layout::kConv);
  at::manual_seed(2);
  const at::Tensor y = conv_to_stack(dropout->forward(at::ones({50, 2 * 8, 10, 10})), 2);
  for (int b = 0; b < 2; ++b) {
    EXPECT_NEAR((y[b] == 0).to(at::kDouble).mean().item<double>(), p[b], 0.01);
  }
  // Dropout2d drops whole channels: every channel is all kept or all dropped.
  FusedDropout dropout2d(p, Layout::kConv, /*channels=*/true);
  const at::Tensor z = conv_to_stack(dropout2d->forward(at::ones({400, 2 * 8, 3, 3})), 2);
  for (int b = 0; b < 2; ++b) {
    const at::Tensor per_channel = (z[b] == 0).to(at::kDouble).mean({2, 3});
    EXPECT_TRUE(at::logical_or(per_channel == 0, per_channel == 1).all().item<bool>());
    EXPECT_NEAR(per_channel.mean().item<double>(), p[b], 0.03);
  }
}

TEST(FusedDropout, GradientFlowsThroughKeptElementsOnly) {
  FusedDropout dropout(std::vector<double>{0.5, 0.25}, Layout::kMatmul);
  const at::Tensor x = at::randn({2, 30, 20}).set_requires_grad(true);
  const at::Tensor y = dropout->forward(x);
  y.sum().backward();
  // d y / d x is the mask times the scale: the same pattern as the output.
  const at::Tensor expected = at::where(y != 0, 1 / (1 - at::tensor({0.5, 0.25}).view({2, 1, 1})),
                                        at::zeros({1}));
  EXPECT_TRUE(at::allclose(x.grad(), expected.to(x.grad().scalar_type())));
}

TEST(FusedDropout, SeededSlotsDrawTheSameMasksFusedOrAlone) {
  for (Layout layout : {Layout::kMatmul, Layout::kConv}) {
    FusedDropout array(std::vector<double>{0.3, 0.5, 0.2}, layout);
    for (std::int64_t b = 0; b < 3; ++b) array->seed_slot(b, 100 + b);
    const at::Tensor x = at::randn(layout == Layout::kMatmul ? std::vector<int64_t>{3, 8, 6}
                                                             : std::vector<int64_t>{8, 3 * 4, 5});
    const at::Tensor y = array->forward(x);
    for (std::int64_t b = 0; b < 3; ++b) {
      FusedDropout alone(std::vector<double>{array->p()[b]}, layout);
      alone->seed_slot(0, 100 + b);
      if (layout == Layout::kMatmul) {
        EXPECT_TRUE(at::equal(alone->forward(x[b].unsqueeze(0))[0], y[b]));
      } else {
        const at::Tensor mine = x.narrow(1, b * 4, 4);
        EXPECT_TRUE(at::equal(alone->forward(mine), y.narrow(1, b * 4, 4)));
      }
    }
  }
}

// On a GPU the masks are drawn there, from per-model CUDA generators: still the
// same fused or alone, reseeding repeats them, and each slot drops at its rate.
TEST(FusedDropout, SeededSlotsOnTheGpuDrawThereTheSameMasksFusedOrAlone) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto gpu = at::TensorOptions().device(at::kCUDA);
  FusedDropout array(std::vector<double>{0.3, 0.5, 0.2}, Layout::kMatmul);
  for (std::int64_t b = 0; b < 3; ++b) array->seed_slot(b, 100 + b);
  const at::Tensor x = at::randn({3, 64, 100}, gpu);
  const at::Tensor y = array->forward(x);
  ASSERT_TRUE(y.is_cuda());
  for (std::int64_t b = 0; b < 3; ++b) {
    FusedDropout alone(std::vector<double>{array->p()[b]}, Layout::kMatmul);
    alone->seed_slot(0, 100 + b);
    EXPECT_TRUE(at::equal(alone->forward(x[b].unsqueeze(0))[0], y[b])) << "slot " << b;
    EXPECT_NEAR((y[b] == 0).to(at::kDouble).mean().item<double>(), array->p()[b], 0.03) << "slot " << b;
  }
  EXPECT_FALSE(at::equal(array->forward(x), y));  // the generators moved on
  for (std::int64_t b = 0; b < 3; ++b) array->seed_slot(b, 100 + b);
  EXPECT_TRUE(at::equal(array->forward(x), y));   // reseeded: the same masks again
}

TEST(FusedDropout, IdentityInEvalModeAndRateChanges) {
  FusedDropout dropout(std::vector<double>{0.9, 0.9}, Layout::kMatmul);
  dropout->eval();
  const at::Tensor x = at::randn({2, 3, 4});
  EXPECT_TRUE(at::equal(dropout->forward(x), x));
  dropout->train();
  dropout->set_p(0, 0.0);
  EXPECT_TRUE(at::equal(dropout->forward(x)[0], x[0]));
  EXPECT_THROW(dropout->set_p(1, 1.5), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
