// The direct max-pooling kernel against at::max_pool2d (and with ReLU after
// it, against at::relu of that): values, winners and gradients exactly, ties,
// NaN, infinities, zeros and floor mode included.
#include <gtest/gtest.h>

#include <limits>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "hfta/fusion/max_pool.h"

namespace hfta::fusion {
namespace {

std::pair<at::Tensor, at::Tensor> value_and_grad(const at::Tensor& input, bool direct, bool relu,
                                                 std::int64_t kernel, const at::Tensor& grad_out) {
  at::Tensor x = input.detach().clone().requires_grad_();
  at::Tensor y;
  if (relu) {
    y = direct ? relu_max_pool2d(x, kernel) : at::relu(at::max_pool2d(x, {kernel, kernel}));
  } else {
    y = direct ? max_pool2d(x, kernel) : at::max_pool2d(x, {kernel, kernel});
  }
  y.backward(grad_out);
  return {y.detach(), x.grad()};
}

// Pooling alone, and ReLU after it, both against LibTorch's.
void expect_identical(const at::Tensor& x, std::int64_t kernel) {
  for (bool relu : {false, true}) {
  SCOPED_TRACE(relu ? "relu_max_pool2d" : "max_pool2d");
  const at::Tensor expected = at::max_pool2d(x, {kernel, kernel});
  const at::Tensor grad_out = at::randn(expected.sizes(), expected.options());
  const auto [y, dx] = value_and_grad(x, true, relu, kernel, grad_out);
  const auto [plain_y, plain_dx] = value_and_grad(x, false, relu, kernel, grad_out);
  ASSERT_EQ(y.sizes(), plain_y.sizes());
  // equal() treats NaN as unequal, so compare NaN positions and the rest apart.
  EXPECT_TRUE(at::equal(y.isnan(), plain_y.isnan()));
  EXPECT_TRUE(at::equal(y.nan_to_num(0, 1e300, -1e300), plain_y.nan_to_num(0, 1e300, -1e300)));
  EXPECT_TRUE(at::equal(dx, plain_dx)) << "kernel " << kernel << " input " << x.sizes();
  }
}

TEST(MaxPool, EqualsLibTorchOnRandomShapesAndKernels) {
  at::manual_seed(3);
  for (auto dtype : {at::kFloat, at::kDouble}) {
    for (std::int64_t kernel : {1, 2, 3, 4}) {
      for (auto sizes : std::vector<std::vector<std::int64_t>>{{2, 3, 8, 8}, {3, 5, 9, 7}, {1, 1, 4, 13}}) {
        if (sizes[2] < kernel || sizes[3] < kernel) continue;
        expect_identical(at::randn(sizes, at::TensorOptions().dtype(dtype)), kernel);
      }
    }
  }
}

TEST(MaxPool, TiesGoToTheFirstMaximumAsLibTorchDoes) {
  // After ReLU most windows hold several zeros: the gradient must land on the
  // same one at::max_pool2d picks. Integers make ties everywhere.
  at::manual_seed(4);
  const at::Tensor relu = at::relu(at::randn({4, 6, 12, 12}));
  expect_identical(relu, 2);
  expect_identical(at::randint(0, 3, {2, 4, 10, 10}).to(at::kFloat), 2);
  expect_identical(at::randint(0, 2, {2, 4, 9, 9}).to(at::kDouble), 3);
}

TEST(MaxPool, NaNAndInfinitiesWinAsInLibTorch) {
  at::manual_seed(5);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  at::Tensor x = at::randn({1, 2, 6, 6}, at::kDouble);
  x[0][0][0][1] = nan;             // one NaN in a window
  x[0][0][2][2] = nan;             // two NaNs in one window: the last wins
  x[0][0][3][3] = nan;
  x[0][1][0][0] = inf;             // +inf
  x[0][1].narrow(0, 2, 2).narrow(1, 2, 2).fill_(-inf);  // a window of -inf only
  x[0][1].narrow(0, 4, 2).narrow(1, 0, 2).fill_(0);     // a window of zeros: ReLU passes no gradient
  expect_identical(x, 2);
  expect_identical(x.to(at::kFloat), 2);
}

TEST(MaxPool, NonContiguousInputsAndOtherCasesFallBack) {
  at::manual_seed(6);
  const at::Tensor x = at::randn({2, 8, 3, 10}).transpose(1, 3);  // [2, 10, 3, 8], strided
  expect_identical(x, 2);
  expect_identical(x.contiguous(at::MemoryFormat::ChannelsLast), 2);
  const at::Tensor half = at::randn({1, 2, 4, 4}).to(at::kBFloat16);  // not the kernel's dtype
  EXPECT_TRUE(at::equal(max_pool2d(half, 2), at::max_pool2d(half, {2, 2})));
  EXPECT_TRUE(at::equal(relu_max_pool2d(half, 2), at::relu(at::max_pool2d(half, {2, 2}))));
}

}  // namespace
}  // namespace hfta::fusion
