// The direct PReLU kernel against at::prelu: values and the input's gradient
// exactly, the slopes' gradient within rounding (summed in another order).
#include <gtest/gtest.h>

#include <limits>

#include <ATen/ATen.h>

#include "hfta/fusion/prelu.h"

namespace hfta::fusion {
namespace {

void expect_as_libtorch(const at::Tensor& input, const at::Tensor& slopes) {
  const at::Tensor grad = at::randn(input.sizes(), input.options());
  auto run = [&](bool direct) {
    at::Tensor x = input.detach().clone().requires_grad_();
    at::Tensor a = slopes.detach().clone().requires_grad_();
    at::Tensor y = direct ? fusion::prelu(x, a) : at::prelu(x, a);
    y.backward(grad);
    return std::make_tuple(y.detach(), x.grad(), a.grad());
  };
  const auto [y, dx, da] = run(true);
  const auto [plain_y, plain_dx, plain_da] = run(false);
  EXPECT_TRUE(at::equal(y.isnan(), plain_y.isnan()));
  EXPECT_TRUE(at::equal(y.nan_to_num(0), plain_y.nan_to_num(0))) << input.sizes();
  EXPECT_TRUE(at::equal(dx.nan_to_num(0), plain_dx.nan_to_num(0))) << input.sizes();
  const double tol = input.scalar_type() == at::kDouble ? 1e-12 : 1e-5;
  EXPECT_TRUE(at::allclose(da, plain_da, tol, tol, /*equal_nan=*/true)) << da << plain_da;
}

TEST(PReLU, EqualsLibTorchOnShapesAndDtypes) {
  at::manual_seed(11);
  for (auto dtype : {at::kFloat, at::kDouble}) {
    const auto o = at::TensorOptions().dtype(dtype);
    for (auto sizes : std::vector<std::vector<std::int64_t>>{{4, 6}, {3, 5, 7}, {2, 4, 9, 11}, {1, 3, 2, 2, 5}}) {
      expect_as_libtorch(at::randn(sizes, o), at::rand({sizes[1]}, o));
    }
  }
}

TEST(PReLU, ZerosNaNAndNonContiguousInputs) {
  at::manual_seed(12);
  at::Tensor x = at::randn({2, 3, 4, 4}, at::kDouble);
  x[0][0][0][0] = 0;  // the slope side, contributing nothing to the slope gradient
  x[1][2][3][3] = std::numeric_limits<double>::quiet_NaN();
  expect_as_libtorch(x, at::rand({3}, at::kDouble));
  expect_as_libtorch(at::randn({4, 5, 3}).transpose(0, 2).contiguous().transpose(0, 2), at::rand({5}));
  expect_as_libtorch(at::randn({3, 4, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast), at::rand({4}));
}

TEST(PReLU, OtherCasesFallBackToLibTorch) {
  const at::Tensor half = at::randn({2, 3, 4}).to(at::kBFloat16);
  const at::Tensor slopes = at::rand({3}).to(at::kBFloat16);
  EXPECT_TRUE(at::equal(fusion::prelu(half, slopes), at::prelu(half, slopes)));
  const at::Tensor x = at::randn({2, 3, 4});
  const at::Tensor one = at::rand({1});  // one slope for every channel: LibTorch's broadcast
  EXPECT_TRUE(at::equal(fusion::prelu(x, one), at::prelu(x, one)));
}

}  // namespace
}  // namespace hfta::fusion
