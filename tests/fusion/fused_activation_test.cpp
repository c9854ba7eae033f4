// PReLU with per-model slopes; activations and pooling are per-model by construction.
#include <gtest/gtest.h>

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/pooling.h>

#include "equivalence.h"
#include "hfta/fusion/fused_activation.h"
#include "hfta/fusion/fused_prelu.h"
#include "hfta/fusion/layout.h"

namespace hfta::fusion {
namespace {

class FusedActivationTest : public test::OpTest {};

auto to_conv = [](const std::vector<at::Tensor>& xs) { return stack_to_conv(at::stack(xs)); };

TEST_P(FusedActivationTest, PReLUMatchesPlainModulesInBothLayouts) {
  const auto [dtype, models] = param();
  at::manual_seed(8);
  for (std::int64_t num : {1, 4}) {
    for (Layout layout : {Layout::kConv, Layout::kMatmul}) {
      const auto options = torch::nn::PReLUOptions().num_parameters(num);
      FusedPReLU fused(models, options, layout, at::TensorOptions().dtype(dtype));
      std::vector<torch::nn::PReLU> plains;
      std::vector<at::Tensor> inputs;
      for (std::int64_t b = 0; b < models; ++b) {
        plains.emplace_back(options);
        plains.back()->to(dtype);
        torch::NoGradGuard no_grad;
        plains.back()->weight.uniform_(-0.5, 0.5);
        fused->load_slot(b, plains.back());
        inputs.push_back(layout == Layout::kConv ? at::randn({3, 4, 5, 5}, dtype)
                                                 : at::randn({6, 4}, dtype));
      }
      const std::int64_t m = models;
      if (layout == Layout::kConv) {
        test::expect_equivalent(fused, plains, inputs, to_conv,
                                [m](const at::Tensor& y, std::int64_t b) { return conv_to_stack(y, m)[b]; },
                                dtype);
      } else {
        test::expect_equivalent(
            fused, plains, inputs, [](const std::vector<at::Tensor>& xs) { return at::stack(xs); },
            [](const at::Tensor& y, std::int64_t b) { return y[b]; }, dtype);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedActivationTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 3, 8)));

TEST(FusedPReLU, SlotsRoundTripAndSeed) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  const auto options = torch::nn::PReLUOptions().num_parameters(3);
  FusedPReLU fused(2, options, Layout::kConv, to);
  torch::nn::PReLU plain(options);
  plain->to(dtype);
  {
    torch::NoGradGuard no_grad;
    plain->weight.uniform_();
  }
  test::expect_round_trip(fused, plain, 1);
  test::expect_seeded_slot(fused, 0, 5, [&] { return torch::nn::PReLU(options); });
  }
}

// An activation or pooling applied to the fused tensor equals the plain module
// applied to each model's part: checked for values and input gradients, with a
// random upstream gradient per model. `shape` is one model's input; the conv
// layout stacks models along channels, the matmul layout along a new first dimension.
using Fn = std::function<at::Tensor(const at::Tensor&)>;

void expect_per_model(const Fn& plain, const Fn& fused, at::ScalarType dtype, std::int64_t models,
                      const std::vector<std::int64_t>& shape = {2, 3, 8, 8}, Layout layout = Layout::kConv) {
  std::vector<at::Tensor> xs;
  for (std::int64_t b = 0; b < models; ++b) xs.push_back(at::randn(shape, dtype).set_requires_grad(true));
  const bool conv = layout == Layout::kConv;
  auto to_fused = [&](const std::vector<at::Tensor>& ts) { return conv ? stack_to_conv(at::stack(ts)) : at::stack(ts); };
  auto to_models = [&](const at::Tensor& t) { return conv ? conv_to_stack(t, models) : t; };
  const at::Tensor fx = to_fused(xs).detach().set_requires_grad(true);
  const at::Tensor fy = fused(fx);
  std::vector<at::Tensor> ys, upstream;
  for (std::int64_t b = 0; b < models; ++b) {
    ys.push_back(plain(xs[b]));
    upstream.push_back(at::randn_like(ys.back()));
    ys.back().backward(upstream.back());
  }
  fy.backward(to_fused(upstream));
  const at::Tensor grads = to_models(fx.grad());
  const at::Tensor outs = to_models(fy);
  for (std::int64_t b = 0; b < models; ++b) {
    HFTA_EXPECT_CLOSE(outs[b], ys[b], dtype);
    HFTA_EXPECT_CLOSE(grads[b], xs[b].grad(), dtype);
  }
}

TEST(FusedActivation, EveryActivationAndPoolingIsPerModel) {
  for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    for (std::int64_t models : {1, 3, 8}) {
      // The plain modules (LibTorch 1.13 has no nn::Hardswish: its function instead).
      torch::nn::ReLU relu;
      torch::nn::LeakyReLU leaky;
      torch::nn::GELU gelu;
      torch::nn::SiLU silu;
      torch::nn::Tanh tanh;
      torch::nn::Sigmoid sigmoid;
      const std::vector<std::pair<std::string, Fn>> plain = {
          {"relu", [&](const at::Tensor& x) { return relu->forward(x); }},
          {"leaky_relu", [&](const at::Tensor& x) { return leaky->forward(x); }},
          {"gelu", [&](const at::Tensor& x) { return gelu->forward(x); }},
          {"silu", [&](const at::Tensor& x) { return silu->forward(x); }},
          {"hardswish", [](const at::Tensor& x) { return at::hardswish(x); }},
          {"tanh", [&](const at::Tensor& x) { return tanh->forward(x); }},
          {"sigmoid", [&](const at::Tensor& x) { return sigmoid->forward(x); }},
      };
      for (const auto& [name, reference] : plain) {
        SCOPED_TRACE(name);
        FusedActivation fused(activation_from_name(name));
        auto apply = [&](const at::Tensor& x) { return fused->forward(x); };
        expect_per_model(reference, apply, dtype, models, {3, 5, 9, 7}, Layout::kConv);
        expect_per_model(reference, apply, dtype, models, {6, 11}, Layout::kMatmul);
      }
      {
        SCOPED_TRACE("leaky_relu with slope 0.2");
        torch::nn::LeakyReLU plain_leaky(torch::nn::LeakyReLUOptions().negative_slope(0.2));
        FusedActivation fused(Activation::kLeakyReLU, 0.2);
        expect_per_model([&](const at::Tensor& x) { return plain_leaky->forward(x); },
                         [&](const at::Tensor& x) { return fused->forward(x); }, dtype, models, {6, 11},
                         Layout::kMatmul);
      }
      // Pooling in the conv layout, each with the plain module's options: the
      // direct kernel's windows (kernel = stride) on even and odd sizes, then
      // LibTorch's (overlap, padding, dilation, ceil mode, divisors).
      auto pool = [&](auto fused_module, auto plain_module, const std::vector<std::int64_t>& shape) {
        expect_per_model([&](const at::Tensor& x) { return plain_module->forward(x); },
                         [&](const at::Tensor& x) { return fused_module->forward(x); }, dtype, models, shape);
      };
      for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 3, 8, 8}, {3, 2, 9, 7}}) {
        pool(FusedMaxPool2d(torch::nn::MaxPool2dOptions(2)), torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)),
             shape);
        for (const auto& o : {torch::nn::MaxPool2dOptions(3).stride(2).padding(1),
                              torch::nn::MaxPool2dOptions(2).ceil_mode(true),
                              torch::nn::MaxPool2dOptions({3, 2}).stride(1).dilation(2)}) {
          pool(FusedMaxPool2d(o), torch::nn::MaxPool2d(o), shape);
        }
        for (const auto& o : {torch::nn::AvgPool2dOptions(3).stride(2).padding(1),
                              torch::nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false),
                              torch::nn::AvgPool2dOptions(2).ceil_mode(true).divisor_override(3)}) {
          pool(FusedAvgPool2d(o), torch::nn::AvgPool2d(o), shape);
        }
        for (const auto& o : {torch::nn::AdaptiveAvgPool2dOptions({3, 2}), torch::nn::AdaptiveAvgPool2dOptions(1)}) {
          pool(FusedAdaptiveAvgPool2d(o), torch::nn::AdaptiveAvgPool2d(o), shape);
        }
      }
    }
  }
  EXPECT_THROW(activation_from_name("relu6"), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
