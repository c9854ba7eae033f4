// The direct depthwise kernels against LibTorch's convolution and its backward
// computed in float64 (so that the reference's own rounding does not count).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "equivalence.h"
#include "hfta/fusion/depthwise.h"

namespace hfta::fusion {
namespace {

struct Case {
  std::int64_t channels, multiplier, size, kernel, stride, padding, dilation;
};

TEST(DepthwiseGrad, MatchesLibTorchsWeightAndBiasGradients) {
  at::manual_seed(7);
  const std::vector<Case> cases{
      {16, 1, 16, 3, 1, 1, 1},  // the op benchmark's layer
      {8, 1, 9, 5, 2, 2, 1},    // MobileNetV3's 5x5 with stride 2
      {6, 2, 7, 3, 1, 0, 2},    // a channel multiplier, dilation, no padding
      {3, 1, 5, 3, 3, 2, 1},    // a stride larger than the padding
      {4, 1, 2, 5, 1, 2, 1}};   // a kernel larger than the image
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.channels) + " channels x" + std::to_string(c.multiplier) + ", " +
                 std::to_string(c.size) + " px, kernel " + std::to_string(c.kernel) + ", stride " +
                 std::to_string(c.stride));
    const at::Tensor x = at::randn({5, c.channels, c.size, c.size + 1});
    const at::Tensor w = at::randn({c.channels * c.multiplier, 1, c.kernel, c.kernel});
    const at::Tensor y = at::conv2d(x, w, {}, c.stride, c.padding, c.dilation, c.channels);
    const at::Tensor gy = at::randn_like(y);
    const std::vector<std::int64_t> bias_size{w.size(0)};
    const auto reference = at::convolution_backward(
        gy.to(at::kDouble), x.to(at::kDouble), w.to(at::kDouble), at::OptionalIntArrayRef(bias_size),
        {c.stride, c.stride}, {c.padding, c.padding}, {c.dilation, c.dilation}, false, {0, 0}, c.channels,
        {false, true, true});
    at::Tensor gw = at::empty_like(w), gb = at::empty({w.size(0)});
    depthwise_weight_grad_cpu(x, gy, {c.stride, c.stride, c.padding, c.padding, c.dilation, c.dilation}, gw, gb);
    // Five images summed in float, the rest in double: within a few roundings of the exact sums.
    EXPECT_LE(test::relative_error(gw.to(at::kDouble), std::get<1>(reference)), 1e-6);
    EXPECT_LE(test::relative_error(gb.to(at::kDouble), std::get<2>(reference)), 1e-6);
    at::Tensor no_bias;
    at::Tensor again = at::empty_like(w);
    depthwise_weight_grad_cpu(x, gy, {c.stride, c.stride, c.padding, c.padding, c.dilation, c.dilation}, again,
                              no_bias);
    EXPECT_TRUE(at::equal(again, gw));
  }
}

TEST(DepthwiseCorrelate, ComputesTheForwardAndTheInputGradient) {
  at::manual_seed(9);
  struct Stride1 {
    std::int64_t channels, size, kernel, padding, dilation;
  };
  for (const auto& c : std::vector<Stride1>{{16, 16, 3, 1, 1}, {8, 7, 5, 2, 1}, {5, 9, 3, 0, 2}, {3, 4, 5, 4, 1}}) {
    SCOPED_TRACE(std::to_string(c.channels) + " channels, " + std::to_string(c.size) + " px, kernel " +
                 std::to_string(c.kernel) + ", padding " + std::to_string(c.padding));
    const at::Tensor x = at::randn({4, c.channels, c.size, c.size + 2});
    const at::Tensor w = at::randn({c.channels, 1, c.kernel, c.kernel}), b = at::randn({c.channels});
    const at::Tensor want = at::conv2d(x.to(at::kDouble), w.to(at::kDouble), b.to(at::kDouble), 1, c.padding,
                                       c.dilation, c.channels);
    at::Tensor y = at::empty(want.sizes());
    depthwise_correlate_cpu(x, w, b, {1, 1, c.padding, c.padding, c.dilation, c.dilation}, false, y);
    EXPECT_LE(test::relative_error(y.to(at::kDouble), want), 1e-6);
    // The input gradient: the output gradient correlated with the flipped taps.
    const std::int64_t reach = c.dilation * (c.kernel - 1);
    if (reach < c.padding) continue;  // a padding the input gradient cannot take this way
    const at::Tensor gy = at::randn(want.sizes());
    const auto reference = at::convolution_backward(
        gy.to(at::kDouble), x.to(at::kDouble), w.to(at::kDouble), at::OptionalIntArrayRef(), {1, 1},
        {c.padding, c.padding}, {c.dilation, c.dilation}, false, {0, 0}, c.channels, {true, false, false});
    at::Tensor gx = at::empty(x.sizes());
    depthwise_correlate_cpu(gy, w, {}, {1, 1, reach - c.padding, reach - c.padding, c.dilation, c.dilation}, true,
                            gx);
    EXPECT_LE(test::relative_error(gx.to(at::kDouble), std::get<0>(reference)), 1e-6);
  }
  at::Tensor out = at::empty({4, 3, 8, 8});
  EXPECT_THROW(depthwise_correlate_cpu(at::randn({4, 3, 8, 8}), at::randn({3, 1, 2, 2}), {}, {1, 1, 0, 0, 1, 1},
                                       false, out),
               std::invalid_argument);  // 2x2: not a kernel it takes
}

TEST(DepthwiseGrad, AChannelsSumsDoNotDependOnTheOtherChannelsOrTheThreads) {
  at::manual_seed(8);
  const int threads = at::get_num_threads();
  const at::Tensor x = at::randn({8, 12, 10, 10}), gy = at::randn({8, 12, 10, 10});
  const DepthwiseGeometry g{1, 1, 1, 1, 1, 1};
  at::Tensor all = at::empty({12, 1, 3, 3}), none;
  at::set_num_threads(2);
  depthwise_weight_grad_cpu(x, gy, g, all, none);
  at::set_num_threads(1);
  for (std::int64_t first : {0, 4, 8}) {  // three "models" of four channels, each alone
    at::Tensor part = at::empty({4, 1, 3, 3});
    depthwise_weight_grad_cpu(x.narrow(1, first, 4).contiguous(), gy.narrow(1, first, 4).contiguous(), g, part,
                              none);
    EXPECT_TRUE(at::equal(part, all.narrow(0, first, 4))) << first;
  }
  at::set_num_threads(threads);
  at::Tensor wrong = at::empty({12, 1, 3, 3}, at::kDouble);
  EXPECT_THROW(depthwise_weight_grad_cpu(x, gy, g, wrong, none), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
