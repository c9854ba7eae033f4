// Each schedule over 100 steps against PyTorch's own (chainable, step by step)
// definitions, written out independently of the closed forms the engine uses.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include <torch/nn/modules/linear.h>
#include <torch/optim.h>
#include <torch/optim/schedulers/step_lr.h>

#include "hfta/fusion/lr_schedule.h"

namespace hfta::fusion {
namespace {

constexpr int kSteps = 100;

void expect_matches(const LrSchedule& s, const std::function<double(int, double)>& recursive, double base) {
  double lr = base;
  for (int t = 0; t <= kSteps; ++t) {
    if (t > 0) lr = recursive(t, lr);
    EXPECT_NEAR(s.lr(t), lr, 1e-12 * std::max(1.0, std::abs(lr))) << "step " << t;
  }
}

TEST(LrSchedule, StepMatchesPyTorchsStepLR) {
  ScheduleOptions o;
  o.kind = ScheduleKind::kStep, o.step_size = 7, o.gamma = 0.5;
  const LrSchedule mine(0.3, o);
  // Python's StepLR.get_lr: multiply by gamma when last_epoch % step_size == 0.
  expect_matches(mine, [](int t, double lr) { return t % 7 == 0 ? lr * 0.5 : lr; }, 0.3);
  // LibTorch 1.13's C++ StepLR counts its steps after deciding, so it decays one
  // step later than Python's: it follows the same schedule shifted by one.
  torch::nn::Linear model(2, 2);
  torch::optim::SGD sgd(model->parameters(), 0.3);
  torch::optim::StepLR torch_step(sgd, 7, 0.5);
  for (int t = 0; t <= kSteps; ++t) {
    const double theirs = static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).lr();
    EXPECT_NEAR(mine.lr(std::max(0, t - 1)), theirs, 1e-15) << t;
    sgd.step();
    torch_step.step();
  }
}

TEST(LrSchedule, MultiStepAndExponential) {
  ScheduleOptions m;
  m.kind = ScheduleKind::kMultiStep, m.milestones = {30, 10, 60}, m.gamma = 0.2;
  expect_matches(LrSchedule(1.0, m),
                 [](int t, double lr) { return (t == 10 || t == 30 || t == 60) ? lr * 0.2 : lr; }, 1.0);
  ScheduleOptions e;
  e.kind = ScheduleKind::kExponential, e.gamma = 0.97;
  expect_matches(LrSchedule(0.5, e), [](int, double lr) { return lr * 0.97; }, 0.5);
}

TEST(LrSchedule, CosineAnnealingMatchesItsRecursiveForm) {
  ScheduleOptions o;
  o.kind = ScheduleKind::kCosine, o.t_max = 40, o.eta_min = 0.001;
  const double base = 0.1, eta = 0.001, T = 40;
  // CosineAnnealingLR.get_lr, which goes on past T_max, as PyTorch does.
  expect_matches(LrSchedule(base, o),
                 [&](int t, double lr) {
                   if ((t - 1 - 40) % 80 == 0) return lr + (base - eta) * (1 - std::cos(M_PI / T)) / 2;
                   return (1 + std::cos(M_PI * t / T)) / (1 + std::cos(M_PI * (t - 1) / T)) * (lr - eta) + eta;
                 },
                 base);
}

TEST(LrSchedule, LinearDecayMatchesPyTorchsLinearLR) {
  // LinearLR(start_factor=1, end_factor=eta_min/lr, total_iters=T).get_lr, step by
  // step: it reaches eta_min at T and holds it (T below kSteps, so both parts run).
  for (double eta : {0.0, 0.02}) {
    ScheduleOptions o;
    o.kind = ScheduleKind::kLinear, o.t_max = 60, o.eta_min = eta;
    const double base = 0.2, start = 1.0, end = eta / base, T = 60;
    expect_matches(LrSchedule(base, o),
                   [&](int t, double lr) {
                     if (t > T) return lr;
                     return lr * (1 + (end - start) / (T * start + (t - 1) * (end - start)));
                   },
                   base);
    EXPECT_NEAR(LrSchedule(base, o).lr(kSteps), eta, 1e-15);
  }
  ScheduleOptions none;
  none.kind = ScheduleKind::kLinear, none.t_max = 0;
  EXPECT_THROW(LrSchedule(0.1, none), std::invalid_argument);
}

TEST(LrSchedule, CosineWarmRestartsMatchesItsStepwiseForm) {
  for (std::int64_t mult : {1, 2}) {
    ScheduleOptions o;
    o.kind = ScheduleKind::kCosineRestarts, o.t_0 = 10, o.t_mult = mult, o.eta_min = 0.01;
    const LrSchedule s(0.2, o);
    // CosineAnnealingWarmRestarts.step(): T_cur grows, wraps at T_i, T_i *= T_mult.
    double t_cur = 0, t_i = 10;
    for (int t = 0; t <= kSteps; ++t) {
      if (t > 0) {
        t_cur += 1;
        if (t_cur >= t_i) {
          t_cur -= t_i;
          t_i *= static_cast<double>(mult);
        }
      }
      const double want = 0.01 + (0.2 - 0.01) * (1 + std::cos(M_PI * t_cur / t_i)) / 2;
      EXPECT_NEAR(s.lr(t), want, 1e-12) << "mult " << mult << " step " << t;
    }
  }
}

TEST(LrSchedule, LinearWarmupChainedWithAnySchedule) {
  ScheduleOptions o;
  o.kind = ScheduleKind::kExponential, o.gamma = 0.95, o.warmup = 5, o.warmup_start_factor = 0.25;
  // ChainedScheduler(LinearLR(0.25, 1.0, 5), ExponentialLR(0.95)), step by step.
  expect_matches(LrSchedule(0.4, o),
                 [](int t, double lr) {
                   double factor = 1.0;
                   if (t <= 5) factor = 1 + 0.75 / (5 * 0.25 + (t - 1) * 0.75);  // LinearLR.get_lr
                   return lr * factor * 0.95;
                 },
                 0.4 * 0.25);
}

TEST(LrSchedule, OneCycleMatchesPyTorchsPhases) {
  ScheduleOptions o;
  o.kind = ScheduleKind::kOneCycle, o.max_lr = 0.5, o.total_steps = kSteps + 1, o.pct_start = 0.25;
  const LrSchedule s(0.0, o);
  const double initial = 0.5 / 25, min_lr = initial / 1e4;
  struct Phase { double end_step, start, end; };
  const std::vector<Phase> phases = {{0.25 * (kSteps + 1) - 1, initial, 0.5}, {kSteps + 1 - 1.0, 0.5, min_lr}};
  for (int t = 0; t <= kSteps; ++t) {
    double start_step = 0, want = 0;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      if (t <= phases[i].end_step || i + 1 == phases.size()) {
        const double pct = (t - start_step) / (phases[i].end_step - start_step);
        want = phases[i].end + (phases[i].start - phases[i].end) / 2.0 * (std::cos(M_PI * pct) + 1);
        break;
      }
      start_step = phases[i].end_step;
    }
    EXPECT_NEAR(s.lr(t), want, 1e-12) << t;
  }
}

TEST(LrSchedule, OneCycleWhoseWarmUpEndsAtTheFirstStepStartsAtItsPeak) {
  // pct_start x total_steps = 1: the warm-up phase ends at step 0, where
  // PyTorch's formula divides by zero; the schedule is at max_lr there, then anneals.
  ScheduleOptions o;
  o.kind = ScheduleKind::kOneCycle, o.max_lr = 0.5, o.total_steps = 20, o.pct_start = 0.05;
  const LrSchedule s(0.0, o);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.5);
  for (int t = 1; t < 20; ++t) {
    EXPECT_TRUE(std::isfinite(s.lr(t))) << t;
    EXPECT_LT(s.lr(t), s.lr(t - 1)) << t;
  }
}

TEST(LrSchedule, ReduceOnPlateauFollowsEachModelsOwnMetric) {
  ScheduleOptions o;
  o.kind = ScheduleKind::kPlateau, o.patience = 3, o.factor = 0.5, o.cooldown = 2, o.min_lr = 0.01;
  LrSchedule s(0.4, o);
  // ReduceLROnPlateau(mode='min', threshold_mode='rel'), written out.
  double lr = 0.4, best = INFINITY;
  int bad = 0, cooldown = 0;
  for (int t = 0; t < kSteps; ++t) {
    const double metric = 1.0 / (1 + (t % 17)) + 0.001 * t;  // improves, then plateaus, repeatedly
    s.observe(metric);
    if (metric < best * (1 - 1e-4)) {
      best = metric;
      bad = 0;
    } else {
      ++bad;
    }
    if (cooldown > 0) {
      --cooldown;
      bad = 0;
    }
    if (bad > 3) {
      const double reduced = std::max(lr * 0.5, 0.01);
      if (lr - reduced > 1e-8) lr = reduced;
      cooldown = 2;
      bad = 0;
    }
    EXPECT_DOUBLE_EQ(s.lr(t), lr) << t;
  }
  EXPECT_LT(lr, 0.4);  // the sequence did trigger reductions
}

TEST(FusedLrScheduler, PerModelSchedulesDriveThePerModelLearningRates) {
  std::vector<at::Tensor> params = {at::zeros({2, 3}).set_requires_grad(true)};
  FusedSgd sgd(params, 2, FusedSgdOptions{});
  ScheduleOptions step;
  step.kind = ScheduleKind::kStep, step.step_size = 2, step.gamma = 0.5;
  ScheduleOptions plateau;
  plateau.kind = ScheduleKind::kPlateau, plateau.patience = 0, plateau.factor = 0.1;
  FusedLrScheduler scheduler(sgd, {LrSchedule(1.0, step), LrSchedule(0.2, plateau)});
  EXPECT_DOUBLE_EQ(sgd.lr()[0], 1.0);
  EXPECT_DOUBLE_EQ(sgd.lr()[1], 0.2);
  scheduler.step();
  scheduler.step();
  EXPECT_DOUBLE_EQ(sgd.lr()[0], 0.5);
  scheduler.observe(1, 1.0);
  scheduler.observe(1, 2.0);  // worse, patience 0: reduce
  EXPECT_NEAR(sgd.lr()[1], 0.02, 1e-15);
  sgd.freeze(0);
  scheduler.step();
  scheduler.step();
  EXPECT_EQ(scheduler.steps(0), 2);  // a frozen model's schedule waits
  EXPECT_DOUBLE_EQ(sgd.lr()[0], 0.5);
}

}  // namespace
}  // namespace hfta::fusion
