// Per-model drop rates, independent masks, scaling and eval mode.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/layout.h"

namespace hfta::fusion {
namespace {

// The rates given as a list or as a [B] tensor.
TEST(FusedDropout, EachSlotDropsAtItsOwnRate) {
  const std::vector<double> p = {0.0, 0.1, 0.5, 0.9, 1.0};
  for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    for (const bool from_tensor : {false, true}) {
      SCOPED_TRACE(from_tensor ? "rates as a tensor" : "rates as a list");
      FusedDropout dropout = from_tensor ? FusedDropout(at::tensor(p, at::kFloat), Layout::kMatmul)
                                         : FusedDropout(p, Layout::kMatmul);
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
  EXPECT_THROW(FusedDropout(at::ones({2, 2}), Layout::kMatmul), std::invalid_argument);
}

// The fraction of positions where two models' masks agree: 0.5 when independent at p = 0.5.
void expect_independent(const at::Tensor& masks) {
  for (std::int64_t a = 0; a < masks.size(0); ++a) {
    for (std::int64_t b = a + 1; b < masks.size(0); ++b) {
      const double agree = (masks[a] == masks[b]).to(at::kDouble).mean().item<double>();
      EXPECT_NEAR(agree, 0.5, 0.03) << a << " vs " << b;
    }
  }
}

TEST(FusedDropout, MasksAreIndependentAcrossModels) {
  at::manual_seed(1);
  FusedDropout dropout(std::vector<double>(4, 0.5), Layout::kMatmul);
  expect_independent(dropout->forward(at::ones({4, 100, 100})) != 0);
  // The conv layout, element-wise and whole channels (Dropout2d), seeded or not.
  for (const bool seeded : {false, true}) {
    SCOPED_TRACE(seeded ? "seeded slots" : "the default generator");
    FusedDropout conv(std::vector<double>(4, 0.5), Layout::kConv);
    FusedDropout conv2d(std::vector<double>(4, 0.5), Layout::kConv, /*channels=*/true);
    if (seeded) {
      for (std::int64_t b = 0; b < 4; ++b) conv->seed_slot(b, 7), conv2d->seed_slot(b, 8 + b);
      conv->seed_slot(3, 9);  // equal seeds give equal masks; one differing seed must still be independent
    }
    const at::Tensor elements = conv_to_stack(conv->forward(at::ones({50, 4 * 8, 5, 5})), 4) != 0;
    if (seeded) {
      EXPECT_TRUE(at::equal(elements[0], elements[1]));  // the same seed: the same masks, fused or not
      expect_independent(at::stack({elements[0], elements[3]}));
    } else {
      expect_independent(elements);
    }
    const at::Tensor channels = conv_to_stack(conv2d->forward(at::ones({600, 4 * 4, 2, 2})), 4) != 0;
    expect_independent(channels.select(3, 0).select(3, 0));  // one entry per channel
  }
}

TEST(FusedDropout, ConvLayoutAndChannels) {
  const std::vector<double> p = {0.2, 0.7};
  for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  FusedDropout dropout(p, Layout::kConv);
  at::manual_seed(2);
  const at::Tensor y = conv_to_stack(dropout->forward(at::ones({50, 2 * 8, 10, 10}, to)), 2);
  for (int b = 0; b < 2; ++b) {
    EXPECT_NEAR((y[b] == 0).to(at::kDouble).mean().item<double>(), p[b], 0.01);
  }
  // Dropout2d drops whole channels: every channel is all kept or all dropped.
  FusedDropout dropout2d(p, Layout::kConv, /*channels=*/true);
  const at::Tensor z = conv_to_stack(dropout2d->forward(at::ones({400, 2 * 8, 3, 3}, to)), 2);
  for (int b = 0; b < 2; ++b) {
    const at::Tensor per_channel = (z[b] == 0).to(at::kDouble).mean({2, 3});
    EXPECT_TRUE(at::logical_or(per_channel == 0, per_channel == 1).all().item<bool>());
    EXPECT_NEAR(per_channel.mean().item<double>(), p[b], 0.03);
    // Kept channels are scaled by 1/(1-p), in the input's type.
    EXPECT_EQ(z.scalar_type(), dtype);
    EXPECT_NEAR(z[b].max().item<double>(), 1.0 / (1.0 - p[b]), 1e-6);
  }
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
