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
  const auto options = torch::nn::PReLUOptions().num_parameters(3);
  FusedPReLU fused(2, options, Layout::kConv);
  torch::nn::PReLU plain(options);
  {
    torch::NoGradGuard no_grad;
    plain->weight.uniform_();
  }
  test::expect_round_trip(fused, plain, 1);
  test::expect_seeded_slot(fused, 0, 5, [&] { return torch::nn::PReLU(options); });
}

// An activation or pooling applied to the fused tensor equals the plain module
// applied to each model's part: checked for values and input gradients.
using Fn = std::function<at::Tensor(const at::Tensor&)>;

void expect_per_model(const Fn& plain, const Fn& fused,
                      at::ScalarType dtype, std::int64_t models) {
  std::vector<at::Tensor> xs;
  for (std::int64_t b = 0; b < models; ++b) xs.push_back(at::randn({2, 3, 8, 8}, dtype).set_requires_grad(true));
  const at::Tensor fx = stack_to_conv(at::stack(xs)).detach().set_requires_grad(true);
  const at::Tensor fy = fused(fx);
  fy.backward(at::ones_like(fy));
  const at::Tensor grads = conv_to_stack(fx.grad(), models);
  const at::Tensor outs = conv_to_stack(fy, models);
  for (std::int64_t b = 0; b < models; ++b) {
    const at::Tensor y = plain(xs[b]);
    y.backward(at::ones_like(y));
    HFTA_EXPECT_CLOSE(outs[b], y, dtype);
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
        expect_per_model(reference, [&](const at::Tensor& x) { return fused->forward(x); }, dtype, models);
      }
      FusedMaxPool2d max_pool(torch::nn::MaxPool2dOptions(2));
      torch::nn::MaxPool2d plain_max(torch::nn::MaxPool2dOptions(2));
      expect_per_model([&](const at::Tensor& x) { return plain_max->forward(x); },
                       [&](const at::Tensor& x) { return max_pool->forward(x); }, dtype, models);
      // Overlapping windows take LibTorch's kernel.
      const auto overlapping = torch::nn::MaxPool2dOptions(3).stride(2).padding(1);
      FusedMaxPool2d max_pool3(overlapping);
      torch::nn::MaxPool2d plain_max3(overlapping);
      expect_per_model([&](const at::Tensor& x) { return plain_max3->forward(x); },
                       [&](const at::Tensor& x) { return max_pool3->forward(x); }, dtype, models);
      FusedAvgPool2d avg_pool(torch::nn::AvgPool2dOptions(3).stride(2).padding(1));
      torch::nn::AvgPool2d plain_avg(torch::nn::AvgPool2dOptions(3).stride(2).padding(1));
      expect_per_model([&](const at::Tensor& x) { return plain_avg->forward(x); },
                       [&](const at::Tensor& x) { return avg_pool->forward(x); }, dtype, models);
      FusedAdaptiveAvgPool2d adaptive(torch::nn::AdaptiveAvgPool2dOptions({3, 2}));
      torch::nn::AdaptiveAvgPool2d plain_adaptive(torch::nn::AdaptiveAvgPool2dOptions({3, 2}));
      expect_per_model([&](const at::Tensor& x) { return plain_adaptive->forward(x); },
                       [&](const at::Tensor& x) { return adaptive->forward(x); }, dtype, models);
    }
  }
  EXPECT_THROW(activation_from_name("relu6"), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
