// Fused optimizers against one torch::optim optimizer per model, each with that
// model's hyperparameters, fed identical gradients for 50 steps.
#include <gtest/gtest.h>

#include <functional>

#include <torch/nn/modules/linear.h>
#include <torch/optim.h>

#include "equivalence.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/fusion/fused_optimizer.h"
#include "hfta/fusion/optimizer_kernels.h"
#include "hfta/fusion/plain_optimizer_state.h"

namespace hfta::fusion {
namespace {

constexpr int kSteps = 50;

double tolerance(at::ScalarType t) { return t == at::kDouble ? 1e-12 : 1e-6; }

// B plain Linear(5, 4) models and the same parameters stacked as fused tensors.
struct Models {
  std::vector<torch::nn::Linear> plain;
  std::vector<at::Tensor> fused;  // weight [B, 4, 5], bias [B, 4]
  Models(std::int64_t b, at::ScalarType dtype) {
    for (std::int64_t i = 0; i < b; ++i) {
      plain.emplace_back(5, 4);
      plain.back()->to(dtype);
    }
    for (std::size_t k = 0; k < 2; ++k) {
      std::vector<at::Tensor> rows;
      for (auto& m : plain) rows.push_back(m->parameters()[k].detach());
      fused.push_back(at::stack(rows).clone().set_requires_grad(true));
    }
  }
  // The same random gradients into both.
  void gradients(at::ScalarType dtype) {
    for (std::size_t k = 0; k < 2; ++k) {
      std::vector<at::Tensor> rows;
      for (auto& m : plain) {
        const at::Tensor g = at::randn_like(m->parameters()[k]);
        m->parameters()[k].mutable_grad() = g.clone();
        rows.push_back(g);
      }
      fused[k].mutable_grad() = at::stack(rows).to(dtype);
    }
  }
  void expect_equal_to_plain(at::ScalarType dtype, const std::string& what) {
    for (std::size_t b = 0; b < plain.size(); ++b) {
      for (std::size_t k = 0; k < 2; ++k) {
        const double err = test::relative_error(fused[k][b], plain[b]->parameters()[k]);
        EXPECT_LE(err, tolerance(dtype)) << what << ": model " << b << " parameter " << k;
      }
    }
  }
};

using MakePlain = std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<at::Tensor>, std::int64_t)>;

void run(const std::string& what, std::int64_t b, at::ScalarType dtype,
         const std::function<std::unique_ptr<FusedOptimizer>(std::vector<at::Tensor>)>& make_fused,
         const MakePlain& make_plain) {
  SCOPED_TRACE(what + " B=" + std::to_string(b) + " " + c10::toString(dtype));
  at::manual_seed(b);
  Models models(b, dtype);
  auto fused = make_fused(models.fused);
  std::vector<std::unique_ptr<torch::optim::Optimizer>> plain;
  for (std::int64_t i = 0; i < b; ++i) plain.push_back(make_plain(models.plain[i]->parameters(), i));
  for (int step = 0; step < kSteps; ++step) {
    models.gradients(dtype);
    fused->step();
    for (auto& o : plain) o->step();
  }
  models.expect_equal_to_plain(dtype, what);
}

// Per-model hyperparameters: model i gets the i-th value (cycled).
std::vector<double> each(std::int64_t b, std::vector<double> values) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < b; ++i) out.push_back(values[i % values.size()]);
  return out;
}

// Parameters: dtype, B, and whether the one-pass CPU kernels run (off: the
// tensor-op form other devices use).
class FusedOptimizerTest : public ::testing::TestWithParam<std::tuple<at::ScalarType, std::int64_t, bool>> {
 protected:
  void SetUp() override { set_cpu_kernels_enabled(std::get<2>(GetParam())); }
  void TearDown() override { set_cpu_kernels_enabled(true); }
};

TEST_P(FusedOptimizerTest, SgdEveryOption) {
  const auto dtype = std::get<0>(GetParam());
  const auto b = std::get<1>(GetParam());
  const auto lr = each(b, {0.1, 0.03, 0.2}), momentum = each(b, {0.9, 0.0, 0.5}),
             dampening = each(b, {0.0, 0.1, 0.3}), wd = each(b, {0.0, 1e-2, 1e-3});
  for (bool nesterov : {false, true}) {
    run("sgd", b, dtype,
        [&](std::vector<at::Tensor> p) {
          FusedSgdOptions o;
          o.lr = lr, o.momentum = momentum, o.dampening = nesterov ? std::vector<double>(b, 0.0) : dampening;
          o.weight_decay = wd, o.nesterov = nesterov ? 1.0 : 0.0;
          return std::make_unique<FusedSgd>(p, b, o);
        },
        [&](std::vector<at::Tensor> p, std::int64_t i) -> std::unique_ptr<torch::optim::Optimizer> {
          // LibTorch's Nesterov needs momentum and no dampening.
          const double m = nesterov && momentum[i] == 0 ? 0.0 : momentum[i];
          return std::make_unique<torch::optim::SGD>(
              p, torch::optim::SGDOptions(lr[i]).momentum(m).dampening(nesterov ? 0 : dampening[i])
                     .weight_decay(wd[i]).nesterov(nesterov && m != 0));
        });
  }
}

TEST_P(FusedOptimizerTest, AdamAndAdamWEveryOption) {
  const auto dtype = std::get<0>(GetParam());
  const auto b = std::get<1>(GetParam());
  const auto lr = each(b, {1e-2, 3e-3, 5e-2}), b1 = each(b, {0.9, 0.8, 0.95}),
             b2 = each(b, {0.999, 0.99, 0.9}), eps = each(b, {1e-8, 1e-6, 1e-7}),
             wd = each(b, {0.0, 1e-2, 1e-1}), ams = each(b, {0, 1, 1});
  for (bool decoupled : {false, true}) {
    run(decoupled ? "adamw" : "adam", b, dtype,
        [&](std::vector<at::Tensor> p) {
          FusedAdamOptions o;
          o.lr = lr, o.beta1 = b1, o.beta2 = b2, o.eps = eps, o.weight_decay = wd, o.amsgrad = ams;
          o.decoupled_weight_decay = decoupled;
          return std::make_unique<FusedAdam>(p, b, o);
        },
        [&](std::vector<at::Tensor> p, std::int64_t i) -> std::unique_ptr<torch::optim::Optimizer> {
          if (decoupled) {
            return std::make_unique<torch::optim::AdamW>(
                p, torch::optim::AdamWOptions(lr[i]).betas({b1[i], b2[i]}).eps(eps[i])
                       .weight_decay(wd[i]).amsgrad(ams[i] != 0));
          }
          return std::make_unique<torch::optim::Adam>(
              p, torch::optim::AdamOptions(lr[i]).betas({b1[i], b2[i]}).eps(eps[i])
                     .weight_decay(wd[i]).amsgrad(ams[i] != 0));
        });
  }
}

TEST_P(FusedOptimizerTest, RmspropEveryOption) {
  const auto dtype = std::get<0>(GetParam());
  const auto b = std::get<1>(GetParam());
  const auto lr = each(b, {1e-2, 3e-3, 2e-2}), alpha = each(b, {0.99, 0.9, 0.95}),
             eps = each(b, {1e-8, 1e-6, 1e-7}), wd = each(b, {0.0, 1e-2, 1e-3}),
             momentum = each(b, {0.0, 0.9, 0.5}), centered = each(b, {0, 1, 0, 1});
  run("rmsprop", b, dtype,
      [&](std::vector<at::Tensor> p) {
        FusedRmspropOptions o;
        o.lr = lr, o.alpha = alpha, o.eps = eps, o.weight_decay = wd, o.momentum = momentum,
        o.centered = centered;
        return std::make_unique<FusedRmsprop>(p, b, o);
      },
      [&](std::vector<at::Tensor> p, std::int64_t i) -> std::unique_ptr<torch::optim::Optimizer> {
        return std::make_unique<torch::optim::RMSprop>(
            p, torch::optim::RMSpropOptions(lr[i]).alpha(alpha[i]).eps(eps[i]).weight_decay(wd[i])
                   .momentum(momentum[i]).centered(centered[i] != 0));
      });
}

TEST_P(FusedOptimizerTest, AdagradEveryOption) {
  const auto dtype = std::get<0>(GetParam());
  const auto b = std::get<1>(GetParam());
  const auto lr = each(b, {1e-1, 3e-2, 5e-2}), decay = each(b, {0.0, 1e-2, 1e-1}),
             wd = each(b, {0.0, 1e-2, 1e-3}), init = each(b, {0.0, 0.1, 1.0}),
             eps = each(b, {1e-10, 1e-8, 1e-6});
  run("adagrad", b, dtype,
      [&](std::vector<at::Tensor> p) {
        FusedAdagradOptions o;
        o.lr = lr, o.lr_decay = decay, o.weight_decay = wd, o.initial_accumulator_value = init,
        o.eps = eps;
        return std::make_unique<FusedAdagrad>(p, b, o);
      },
      [&](std::vector<at::Tensor> p, std::int64_t i) -> std::unique_ptr<torch::optim::Optimizer> {
        return std::make_unique<torch::optim::Adagrad>(
            p, torch::optim::AdagradOptions(lr[i]).lr_decay(decay[i]).weight_decay(wd[i])
                   .initial_accumulator_value(init[i]).eps(eps[i]));
      });
}

// Adadelta per PyTorch's definition, written out for one model (LibTorch has none in C++).
TEST_P(FusedOptimizerTest, AdadeltaMatchesPyTorchsDefinition) {
  const auto dtype = std::get<0>(GetParam());
  const auto b = std::get<1>(GetParam());
  const auto lr = each(b, {1.0, 0.5, 2.0}), rho = each(b, {0.9, 0.95, 0.8}),
             eps = each(b, {1e-6, 1e-5, 1e-4}), wd = each(b, {0.0, 1e-2, 1e-3});
  at::manual_seed(b);
  Models models(b, dtype);
  FusedAdadeltaOptions o;
  o.lr = lr, o.rho = rho, o.eps = eps, o.weight_decay = wd;
  FusedAdadelta fused(models.fused, b, o);
  std::vector<std::vector<at::Tensor>> square(b), acc(b);
  for (std::int64_t i = 0; i < b; ++i) {
    for (auto& p : models.plain[i]->parameters()) {
      square[i].push_back(at::zeros_like(p));
      acc[i].push_back(at::zeros_like(p));
    }
  }
  for (int step = 0; step < kSteps; ++step) {
    models.gradients(dtype);
    fused.step();
    at::NoGradGuard no_grad;
    for (std::int64_t i = 0; i < b; ++i) {
      auto params = models.plain[i]->parameters();
      for (std::size_t k = 0; k < params.size(); ++k) {
        at::Tensor grad = params[k].grad();
        if (wd[i] != 0) grad = grad.add(params[k], wd[i]);
        square[i][k].mul_(rho[i]).addcmul_(grad, grad, 1 - rho[i]);
        const at::Tensor std_dev = square[i][k].add(eps[i]).sqrt_();
        const at::Tensor delta = acc[i][k].add(eps[i]).sqrt_().div_(std_dev).mul_(grad);
        acc[i][k].mul_(rho[i]).addcmul_(delta, delta, 1 - rho[i]);
        params[k].add_(delta, -lr[i]);
      }
    }
  }
  models.expect_equal_to_plain(dtype, "adadelta");
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedOptimizerTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble),
                                            ::testing::Values(1, 3, 8), ::testing::Bool()));

// Freezing model 1 leaves models 0 and 2 bit-identical to an array that never held it.
TEST(FusedOptimizer, FrozenModelsChangeNothingElse) {
  at::manual_seed(3);
  Models three(3, at::kFloat);
  std::vector<at::Tensor> two_params;
  for (const auto& p : three.fused) two_params.push_back(at::stack({p[0], p[2]}).detach().clone().set_requires_grad(true));
  FusedAdamOptions o;
  o.lr = std::vector<double>{1e-2, 2e-2, 3e-2};
  FusedAdam array3(three.fused, 3, o);
  o.lr = std::vector<double>{1e-2, 3e-2};
  FusedAdam array2(two_params, 2, o);
  at::Tensor frozen_weight;
  for (int step = 0; step < 30; ++step) {
    if (step == 10) {
      array3.freeze(1);
      frozen_weight = three.fused[0][1].detach().clone();
    }
    for (std::size_t k = 0; k < 2; ++k) {
      const at::Tensor g = at::randn_like(three.fused[k]);
      three.fused[k].mutable_grad() = g;
      two_params[k].mutable_grad() = at::stack({g[0], g[2]});
    }
    array3.step();
    array2.step();
  }
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_TRUE(at::equal(three.fused[k][0], two_params[k][0]));
    EXPECT_TRUE(at::equal(three.fused[k][2], two_params[k][1]));
  }
  EXPECT_TRUE(at::equal(three.fused[0][1], frozen_weight));
  EXPECT_EQ(array3.step_count(1), 10);
  EXPECT_EQ(array3.step_count(0), 30);
}

// zero_grad drops gradients (set_to_none): the next backward's gradient is
// taken as it is, and a parameter that gets none is not stepped, as in PyTorch.
TEST(FusedOptimizer, ZeroGradDropsGradientsAndUngradedParametersStayPut) {
  const at::Tensor used = at::ones({2, 3}).set_requires_grad(true);
  const at::Tensor unused = at::ones({2, 4}).set_requires_grad(true);
  FusedAdam adam({used, unused}, 2, FusedAdamOptions{});
  (used * 2).sum().backward();
  (unused * 3).sum().backward();
  adam.step();
  adam.zero_grad();
  EXPECT_FALSE(used.grad().defined());
  EXPECT_FALSE(unused.grad().defined());
  const at::Tensor before = unused.detach().clone();
  (used * 5).sum().backward();
  EXPECT_TRUE(at::equal(used.grad(), at::full({2, 3}, 5.0)));
  adam.step();  // `unused` has no gradient: Adam's momentum does not move it
  EXPECT_TRUE(at::equal(unused, before));
  EXPECT_EQ(adam.step_count(0), 2);
}

// A model's state moves to another slot of another array and continues exactly.
TEST(FusedOptimizer, SlotStateMovesBetweenArrays) {
  at::manual_seed(4);
  Models a(3, at::kDouble);
  FusedSgdOptions so;
  so.lr = std::vector<double>{0.1, 0.05, 0.2};
  so.momentum = std::vector<double>{0.9, 0.8, 0.7};
  FusedSgd first(a.fused, 3, so);
  for (int step = 0; step < 5; ++step) {
    a.gradients(at::kDouble);
    first.step();
  }
  // Model 2 goes to slot 0 of a new array of two.
  Models b(2, at::kDouble);
  {
    at::NoGradGuard no_grad;
    for (std::size_t k = 0; k < 2; ++k) b.fused[k][0].copy_(a.fused[k][2]);
  }
  FusedSgdOptions so2;
  so2.lr = std::vector<double>{0.2, 0.1};
  so2.momentum = std::vector<double>{0.7, 0.9};
  FusedSgd second(b.fused, 2, so2);
  second.import_slot(0, first.export_slot(2));
  EXPECT_EQ(second.step_count(0), 5);
  for (int step = 0; step < 5; ++step) {
    for (std::size_t k = 0; k < 2; ++k) {
      const at::Tensor g = at::randn_like(a.fused[k][2]);
      a.fused[k].mutable_grad() = at::zeros_like(a.fused[k]);
      a.fused[k].mutable_grad()[2].copy_(g);
      b.fused[k].mutable_grad() = at::zeros_like(b.fused[k]);
      b.fused[k].mutable_grad()[0].copy_(g);
    }
    first.step();
    second.step();
  }
  for (std::size_t k = 0; k < 2; ++k) EXPECT_TRUE(at::equal(a.fused[k][2], b.fused[k][0]));
}

// Model b's state leaves the array as a plain LibTorch optimizer's state and
// continues there exactly as the plain optimizer that ran all along; and back.
TEST(FusedOptimizer, SlotStateAsThePlainOptimizersState) {
  using torch::optim::Optimizer;
  const std::vector<std::pair<std::string, std::function<std::unique_ptr<FusedOptimizer>(std::vector<at::Tensor>)>>> kinds = {
      {"sgd", [](std::vector<at::Tensor> p) { FusedSgdOptions o; o.momentum = 0.9; return std::make_unique<FusedSgd>(p, 3, o); }},
      {"adam", [](std::vector<at::Tensor> p) { FusedAdamOptions o; o.amsgrad = 1; return std::make_unique<FusedAdam>(p, 3, o); }},
      {"adamw", [](std::vector<at::Tensor> p) { FusedAdamOptions o; o.decoupled_weight_decay = true; o.weight_decay = 0.01; return std::make_unique<FusedAdam>(p, 3, o); }},
      {"rmsprop", [](std::vector<at::Tensor> p) { FusedRmspropOptions o; o.centered = 1; o.momentum = 0.5; return std::make_unique<FusedRmsprop>(p, 3, o); }},
      {"adagrad", [](std::vector<at::Tensor> p) { FusedAdagradOptions o; o.initial_accumulator_value = 0.1; return std::make_unique<FusedAdagrad>(p, 3, o); }},
  };
  auto make_plain = [](const std::string& kind, std::vector<at::Tensor> p) -> std::unique_ptr<Optimizer> {
    if (kind == "sgd") return std::make_unique<torch::optim::SGD>(p, torch::optim::SGDOptions(0.01).momentum(0.9));
    if (kind == "adam") return std::make_unique<torch::optim::Adam>(p, torch::optim::AdamOptions(0.001).amsgrad(true));
    if (kind == "adamw") return std::make_unique<torch::optim::AdamW>(p, torch::optim::AdamWOptions(0.001).weight_decay(0.01));
    if (kind == "rmsprop") return std::make_unique<torch::optim::RMSprop>(p, torch::optim::RMSpropOptions(0.01).centered(true).momentum(0.5));
    return std::make_unique<torch::optim::Adagrad>(p, torch::optim::AdagradOptions(0.01).initial_accumulator_value(0.1));
  };
  for (const auto& [kind, make_fused] : kinds) {
    SCOPED_TRACE(kind);
    at::manual_seed(5);
    Models models(3, at::kDouble);
    auto fused = make_fused(models.fused);
    auto reference = make_plain(kind, models.plain[1]->parameters());  // model 1, all along
    for (int step = 0; step < 7; ++step) {
      models.gradients(at::kDouble);
      fused->step();
      reference->step();
    }
    // Model 1 leaves as a plain model with a plain optimizer.
    torch::nn::Linear alone = fused->models() == 3 ? torch::nn::Linear(5, 4) : nullptr;
    alone->to(at::kDouble);
    {
      at::NoGradGuard no_grad;
      for (std::size_t k = 0; k < 2; ++k) alone->parameters()[k].copy_(models.fused[k][1]);
    }
    auto resumed = make_plain(kind, alone->parameters());
    export_to_plain(*fused, 1, *resumed, same_layout(alone->parameters()));
    // And comes back into slot 0 of the array.
    import_from_plain(*fused, 0, *resumed, same_layout(alone->parameters()));
    {
      at::NoGradGuard no_grad;
      for (std::size_t k = 0; k < 2; ++k) models.fused[k][0].copy_(models.fused[k][1]);
    }
    for (int step = 0; step < 5; ++step) {
      for (std::size_t k = 0; k < 2; ++k) {
        const at::Tensor g = at::randn_like(alone->parameters()[k]);
        alone->parameters()[k].mutable_grad() = g.clone();
        models.plain[1]->parameters()[k].mutable_grad() = g.clone();
        models.fused[k].mutable_grad() = at::stack({g, g, g});
      }
      resumed->step();
      reference->step();
      fused->step();
    }
    for (std::size_t k = 0; k < 2; ++k) {
      // The fused steps matched the plain ones to rounding, so the resumed run does too.
      EXPECT_LE(test::relative_error(alone->parameters()[k], models.plain[1]->parameters()[k]), 1e-12)
          << "plain resume, parameter " << k;
      EXPECT_LE(test::relative_error(models.fused[k][0], models.plain[1]->parameters()[k]), 1e-12) << "back in slot 0";
    }
  }
}

TEST(FusedOptimizer, LinearLayoutMapsTransposedWeightRows) {
  FusedLinear linear(2, 3, 5);
  auto plain = linear->extract_slot(1);
  const SlotLayout layout = linear_layout(plain->parameters());
  const at::Tensor weight_row = linear->weight.view({2, -1})[1];
  EXPECT_TRUE(at::equal(layout.to_plain(0, weight_row), plain->weight));
  EXPECT_TRUE(at::equal(layout.to_row(0, plain->weight), weight_row));
  EXPECT_TRUE(at::equal(layout.to_plain(1, linear->bias[1]), plain->bias));
}

TEST(FusedOptimizer, LearningRatesCanChangePerModel) {
  Models m(2, at::kFloat);
  FusedSgd sgd(m.fused, 2, FusedSgdOptions{});
  sgd.lr().set(1, 0.5, 2);
  EXPECT_DOUBLE_EQ(sgd.lr()[0], 0.01);
  EXPECT_DOUBLE_EQ(sgd.lr()[1], 0.5);
  EXPECT_THROW(FusedSgd({at::zeros({3, 2}).t()}, 3, FusedSgdOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
