#include <gtest/gtest.h>

#include <array>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "hfta/fusion/batched_matmul.h"
#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {
namespace {

// A [n, rows, cols] operand laid out as asked: row-major, transposed (columns
// contiguous), or a strided slice of a wider tensor (rows not contiguous).
at::Tensor operand(std::int64_t n, std::int64_t rows, std::int64_t cols, int layout, at::ScalarType dtype) {
  const auto o = at::TensorOptions().dtype(dtype);
  if (layout == 1) return at::randn({n, cols, rows}, o).transpose(1, 2);
  if (layout == 2) return at::randn({n, rows, 2 * cols + 1}, o).narrow(2, 1, cols);
  if (layout == 3) return at::randn({n, rows, cols * 2}, o).slice(2, 0, cols * 2, 2);  // no unit stride
  return at::randn({n, rows, cols}, o);
}

TEST(BatchedMatmul, MatchesBmmInValuesAndGradientsForEveryLayout) {
  at::manual_seed(10);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double tol = dtype == at::kFloat ? 1e-5 : 1e-12;
    for (const auto& [n, m, k, p] : std::vector<std::array<std::int64_t, 4>>{
             {7, 5, 3, 4}, {48, 16, 8, 16}, {3, 1, 6, 1}, {2, 9, 1, 7}}) {
      for (int la = 0; la < 4; ++la) {
        for (int lb = 0; lb < 4; ++lb) {
          SCOPED_TRACE(::testing::Message() << "n " << n << " m " << m << " k " << k << " p " << p
                                            << " layouts " << la << lb);
          const at::Tensor a = operand(n, m, k, la, dtype).requires_grad_(true);
          const at::Tensor b = operand(n, k, p, lb, dtype).requires_grad_(true);
          const at::Tensor g = at::randn({n, m, p}, a.options().requires_grad(false));
          const at::Tensor y = batched_matmul(a, b);
          const auto grads = torch::autograd::grad({y}, {a, b}, {g});
          const at::Tensor want = at::bmm(a, b);
          const auto want_grads = torch::autograd::grad({want}, {a, b}, {g});
          EXPECT_TRUE(at::allclose(y, want, tol, tol));
          EXPECT_TRUE(at::allclose(grads[0], want_grads[0], tol, tol));
          EXPECT_TRUE(at::allclose(grads[1], want_grads[1], tol, tol));
        }
      }
    }
  }
}

TEST(BatchedMatmul, WithBiasMatchesBaddbmm) {
  at::manual_seed(12);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double tol = dtype == at::kFloat ? 1e-5 : 1e-12;
    const auto o = at::TensorOptions().dtype(dtype);
    const at::Tensor a = at::randn({5, 6, 7}, o).requires_grad_(true);
    const at::Tensor b = at::randn({5, 7, 3}, o).requires_grad_(true);
    // A strided view of a wider bias, as attention's projections pass.
    const at::Tensor wide = at::randn({5, 9}, o).requires_grad_(true);
    const at::Tensor bias = wide.narrow(1, 3, 3);
    const at::Tensor g = at::randn({5, 6, 3}, o);
    const auto grads = torch::autograd::grad({batched_matmul(a, b, bias)}, {a, b, wide}, {g});
    const at::Tensor want = at::baddbmm(bias.unsqueeze(1), a, b);
    const auto want_grads = torch::autograd::grad({want}, {a, b, wide}, {g});
    EXPECT_TRUE(at::allclose(batched_matmul(a, b, bias), want, tol, tol));
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(at::allclose(grads[i], want_grads[i], tol, tol)) << i;
  }
}

TEST(BatchedMatmul, UnderAutocastRunsInTheLowerPrecisionAsBmm) {
  const at::Tensor a = at::randn({3, 4, 5}), b = at::randn({3, 5, 2}), bias = at::randn({3, 2});
  AutocastScope autocast(Precision::kBFloat16, at::Device(at::kCPU));
  EXPECT_EQ(batched_matmul(a, b).scalar_type(), at::bmm(a, b).scalar_type());
  EXPECT_EQ(batched_matmul(a, b, bias).scalar_type(), at::kBFloat16);
}

TEST(BatchedMatmul, OtherDtypesAndEmptyBatchesFallBackToBmm) {
  const at::Tensor a = at::randn({3, 4, 5}).to(at::kBFloat16);
  const at::Tensor b = at::randn({3, 5, 2}).to(at::kBFloat16);
  EXPECT_TRUE(at::equal(batched_matmul(a, b), at::bmm(a, b)));
  const at::Tensor empty = batched_matmul(at::randn({0, 4, 5}), at::randn({0, 5, 2}));
  EXPECT_EQ(empty.sizes(), (std::vector<std::int64_t>{0, 4, 2}));
  // A product with no inner dimension is zeros, as bmm's.
  EXPECT_TRUE(at::equal(batched_matmul(at::randn({2, 3, 0}), at::randn({2, 0, 4})), at::zeros({2, 3, 4})));
}

}  // namespace
}  // namespace hfta::fusion
