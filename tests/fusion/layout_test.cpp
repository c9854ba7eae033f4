// The layout moves, exactly: each model's part of a fused tensor is its own
// tensor, and conv_to_matmul flattens as torch::flatten(x, 1) does a plain model.
#include <gtest/gtest.h>

#include <random>

#include <ATen/ATen.h>

#include "hfta/fusion/layout.h"

namespace hfta::fusion {
namespace {

// Random sizes (seeded) for one model's [N, C, ...spatial] with 0, 1 or 2 spatial dimensions.
std::vector<std::int64_t> random_shape(std::mt19937& rng, int spatial) {
  std::uniform_int_distribution<std::int64_t> size(1, 7);
  std::vector<std::int64_t> shape = {size(rng), size(rng)};
  for (int d = 0; d < spatial; ++d) shape.push_back(size(rng));
  return shape;
}

TEST(Layout, MovesBetweenTheStackTheConvAndTheMatmulLayoutsExactly) {
  std::mt19937 rng(3);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    for (const std::int64_t models : {1, 3, 8}) {
      for (int spatial = 0; spatial <= 2; ++spatial) {
        for (int draw = 0; draw < 3; ++draw) {
          const auto shape = random_shape(rng, spatial);
          SCOPED_TRACE(::testing::Message() << "B=" << models << " shape " << c10::IntArrayRef(shape));
          const std::int64_t c = shape[1];
          const std::vector<std::int64_t> space(shape.begin() + 2, shape.end());
          std::vector<at::Tensor> xs;
          for (std::int64_t b = 0; b < models; ++b) xs.push_back(at::randn(shape, dtype));
          const at::Tensor conv = stack_to_conv(at::stack(xs));
          ASSERT_EQ(conv.size(0), shape[0]);
          ASSERT_EQ(conv.size(1), models * c);
          const at::Tensor matmul = conv_to_matmul(conv, models);
          ASSERT_EQ(matmul.sizes(), c10::IntArrayRef({models, shape[0], xs[0][0].numel()}));
          for (std::int64_t b = 0; b < models; ++b) {
            EXPECT_TRUE(at::equal(conv.narrow(1, b * c, c), xs[b]));  // model b owns channels [bC, (b+1)C)
            EXPECT_TRUE(at::equal(matmul[b], at::flatten(xs[b], 1)));
          }
          EXPECT_TRUE(at::equal(conv_to_stack(conv, models), at::stack(xs)));
          EXPECT_TRUE(at::equal(matmul_to_conv(matmul, c, space), conv));
        }
      }
    }
  }
}

// Gradients pass through the moves unchanged, to the element they came from.
TEST(Layout, GradientsFlowBackThroughTheMoves) {
  const std::int64_t models = 3, c = 4;
  const at::Tensor x = at::randn({5, models * c, 3, 2}, at::kDouble).requires_grad_(true);
  const at::Tensor y = conv_to_matmul(x, models);
  const at::Tensor g = at::randn_like(y);
  y.backward(g);
  EXPECT_TRUE(at::equal(x.grad(), matmul_to_conv(g, c, {3, 2})));
  const at::Tensor s = at::randn({models, 5, c, 3}, at::kDouble).requires_grad_(true);
  const at::Tensor z = stack_to_conv(s);
  const at::Tensor h = at::randn_like(z);
  z.backward(h);
  EXPECT_TRUE(at::equal(s.grad(), conv_to_stack(h, models)));
}

TEST(Layout, BroadcastGivesEveryModelTheSameInputWithoutACopy) {
  const at::Tensor x = at::randn({6, 5});
  for (const std::int64_t models : {1, 3, 8}) {
    const at::Tensor all = broadcast_to_models(x, models);
    ASSERT_EQ(all.sizes(), c10::IntArrayRef({models, 6, 5}));
    EXPECT_EQ(all.data_ptr(), x.data_ptr());
    for (std::int64_t b = 0; b < models; ++b) EXPECT_TRUE(at::equal(all[b], x));
  }
}

}  // namespace
}  // namespace hfta::fusion
