// oneDNN's in-place per-model convolutions against LibTorch's convolution of
// each model's channels alone and its backward, computed in float64 (so that
// the reference's own rounding does not count).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "equivalence.h"
#include "hfta/fusion/dnnl_conv.h"

namespace hfta::fusion {
namespace {

struct Case {
  std::vector<std::int64_t> x;  ///< one model's input [N, C, ...], or the shared one
  std::int64_t out, kernel, stride, padding, dilation, groups;
  bool bias, shared;
};

std::vector<std::int64_t> repeat(std::int64_t v, std::size_t n) { return std::vector<std::int64_t>(n, v); }

TEST(DnnlConv, EveryModelsOutputAndGradientsMatchItsOwnConvolution) {
  const std::int64_t models = 3;
  if (!dnnl_conv_applies(at::randn({2, 8, 5, 5}), at::randn({8, 8, 3, 3}), {{1, 1}, {1, 1}, {1, 1}, 1})) {
    GTEST_SKIP() << "built without oneDNN";
  }
  at::manual_seed(11);
  const std::vector<Case> cases{
      {{4, 16, 8, 8}, 16, 3, 1, 1, 1, 1, true, false},   // the op benchmark's layer
      {{4, 16, 9, 9}, 32, 3, 2, 1, 1, 1, false, false},  // a stride that leaves right padding
      {{2, 8, 7, 6}, 12, 3, 1, 2, 2, 4, true, false},    // grouped and dilated
      {{4, 8, 8, 8}, 16, 3, 2, 0, 1, 1, true, false},    // the last row and column read by no window
      {{3, 16, 32}, 24, 5, 1, 2, 1, 1, true, false},     // 1-D
      {{3, 8, 11}, 8, 4, 3, 0, 1, 1, false, false},      // 1-D, the last point read by no window
      {{5, 1, 12, 12}, 8, 3, 2, 1, 1, 1, true, true}};   // a first layer's shared input
  for (const auto& c : cases) {
    const std::size_t d = c.x.size() - 2;
    SCOPED_TRACE(std::to_string(d) + "-D, " + std::to_string(c.x[1]) + " to " + std::to_string(c.out) +
                 " channels, kernel " + std::to_string(c.kernel) + ", stride " + std::to_string(c.stride) +
                 (c.shared ? ", shared input" : ""));
    std::vector<std::int64_t> x_sizes = c.x, w_sizes{models * c.out, c.x[1] / c.groups};
    if (!c.shared) x_sizes[1] *= models;
    for (std::size_t i = 0; i < d; ++i) w_sizes.push_back(c.kernel);
    const at::Tensor x = at::randn(x_sizes).requires_grad_(!c.shared);
    const at::Tensor w = at::randn(w_sizes).requires_grad_(true);
    const at::Tensor b = c.bias ? at::randn({models * c.out}).requires_grad_(true) : at::Tensor();
    const ConvGeometry g{repeat(c.stride, d), repeat(c.padding, d), repeat(c.dilation, d), c.groups};
    ASSERT_TRUE(dnnl_conv_applies(x, w, g));
    const at::Tensor y = dnnl_conv(x, w, b, g, models, c.shared);
    const at::Tensor gy = at::randn_like(y);
    y.backward(gy);
    for (std::int64_t m = 0; m < models; ++m) {
      SCOPED_TRACE("model " + std::to_string(m));
      const auto own = [&](const at::Tensor& t, std::int64_t dim, std::int64_t size) {
        return t.narrow(dim, m * size, size);
      };
      const at::Tensor xm = c.shared ? x.detach() : own(x.detach(), 1, c.x[1]);
      const at::Tensor xd = xm.to(at::kDouble).requires_grad_(true);
      const at::Tensor wd = own(w.detach(), 0, c.out).to(at::kDouble).requires_grad_(true);
      const at::Tensor bd = c.bias ? own(b.detach(), 0, c.out).to(at::kDouble).requires_grad_(true) : at::Tensor();
      const at::Tensor yd = at::convolution(xd, wd, bd, g.stride, g.padding, g.dilation, false, repeat(0, d), g.groups);
      yd.backward(own(gy, 1, c.out).to(at::kDouble));
      EXPECT_LE(test::relative_error(own(y.detach(), 1, c.out).to(at::kDouble), yd), 1e-6) << "output";
      if (!c.shared) EXPECT_LE(test::relative_error(own(x.grad(), 1, c.x[1]).to(at::kDouble), xd.grad()), 1e-6);
      EXPECT_LE(test::relative_error(own(w.grad(), 0, c.out).to(at::kDouble), wd.grad()), 1e-6) << "weight gradient";
      if (c.bias) EXPECT_LE(test::relative_error(own(b.grad(), 0, c.out).to(at::kDouble), bd.grad()), 1e-6);
    }
  }
}

TEST(DnnlConv, TransposedMatchesEachModelsOwnConvolution) {
  const std::int64_t models = 3;
  struct Transposed {
    std::int64_t in, out, size, kernel, stride, padding, output_padding, groups;
    bool bias;
  };
  const std::vector<Transposed> cases{
      {16, 8, 4, 4, 2, 1, 0, 1, true},   // DCGAN's generator
      {6, 4, 5, 3, 2, 1, 1, 2, false},  // grouped, output padding
      {8, 3, 7, 3, 1, 1, 0, 1, true}};
  at::manual_seed(12);
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.in) + " to " + std::to_string(c.out) + " channels, stride " +
                 std::to_string(c.stride) + ", output padding " + std::to_string(c.output_padding));
    const at::Tensor x = at::randn({4, models * c.in, c.size, c.size + 1}).requires_grad_(true);
    const at::Tensor w = at::randn({models * c.in, c.out / c.groups, c.kernel, c.kernel}).requires_grad_(true);
    const at::Tensor b = c.bias ? at::randn({models * c.out}).requires_grad_(true) : at::Tensor();
    const ConvGeometry g{{c.stride, c.stride}, {c.padding, c.padding}, {1, 1}, c.groups};
    const std::vector<std::int64_t> output_padding{c.output_padding, c.output_padding};
    if (!dnnl_conv_transpose_applies(x, w, g, output_padding)) GTEST_SKIP() << "built without oneDNN";
    const at::Tensor y = dnnl_conv_transpose(x, w, b, g, output_padding, models);
    const at::Tensor gy = at::randn_like(y);
    y.backward(gy);
    for (std::int64_t m = 0; m < models; ++m) {
      SCOPED_TRACE("model " + std::to_string(m));
      const auto own = [m](const at::Tensor& t, std::int64_t dim, std::int64_t size) {
        return t.narrow(dim, m * size, size);
      };
      const at::Tensor xd = own(x.detach(), 1, c.in).to(at::kDouble).requires_grad_(true);
      const at::Tensor wd = own(w.detach(), 0, c.in).to(at::kDouble).requires_grad_(true);
      const at::Tensor bd = c.bias ? own(b.detach(), 0, c.out).to(at::kDouble).requires_grad_(true) : at::Tensor();
      const at::Tensor yd = at::convolution(xd, wd, bd, g.stride, g.padding, g.dilation, true, output_padding, c.groups);
      yd.backward(own(gy, 1, c.out).to(at::kDouble));
      EXPECT_LE(test::relative_error(own(y.detach(), 1, c.out).to(at::kDouble), yd), 1e-6) << "output";
      EXPECT_LE(test::relative_error(own(x.grad(), 1, c.in).to(at::kDouble), xd.grad()), 1e-6) << "input gradient";
      EXPECT_LE(test::relative_error(own(w.grad(), 0, c.in).to(at::kDouble), wd.grad()), 1e-6) << "weight gradient";
      if (c.bias) EXPECT_LE(test::relative_error(own(b.grad(), 0, c.out).to(at::kDouble), bd.grad()), 1e-6);
    }
  }
}

TEST(DnnlConv, TakesOnlyWhatItsKernelsTake) {
  const ConvGeometry g{{2, 2}, {0, 0}, {1, 1}, 1};
  const at::Tensor w = at::randn({8, 8, 3, 3});
  // Output padding beyond the padding: oneDNN's right padding would be -1.
  EXPECT_FALSE(dnnl_conv_transpose_applies(at::randn({2, 8, 5, 5}), w, g, {1, 1}));
  EXPECT_TRUE(dnnl_conv_transpose_applies(at::randn({2, 8, 5, 5}), w, g, {0, 0}));
  EXPECT_TRUE(dnnl_conv_applies(at::randn({2, 8, 8, 8}), w, g));  // the last pixel unread: left out
  EXPECT_FALSE(dnnl_conv_applies(at::randn({2, 8, 9, 9}, at::kDouble), w.to(at::kDouble), g));
  EXPECT_FALSE(dnnl_conv_applies(at::randn({2, 8, 9, 9, 9}), at::randn({8, 8, 3, 3, 3}), {{2, 2, 2}, {0, 0, 0}, {1, 1, 1}, 1}));
}

}  // namespace
}  // namespace hfta::fusion
