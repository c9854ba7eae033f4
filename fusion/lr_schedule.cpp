#include "hfta/fusion/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hfta::fusion {
namespace {

double cosine_between(double from, double to, double pct) {
  // OneCycleLR's _annealing_cos.
  return to + (from - to) / 2.0 * (std::cos(M_PI * pct) + 1);
}

}  // namespace

LrSchedule::LrSchedule(double base_lr, ScheduleOptions options) : base_(base_lr), o_(std::move(options)) {
  plateau_.lr = base_lr;
  if (o_.kind == ScheduleKind::kStep && o_.step_size < 1) throw std::invalid_argument("step_size must be >= 1");
  if ((o_.kind == ScheduleKind::kCosine || o_.kind == ScheduleKind::kLinear) && o_.t_max < 1) throw std::invalid_argument("t_max must be >= 1");
  if (o_.kind == ScheduleKind::kCosineRestarts && (o_.t_0 < 1 || o_.t_mult < 1)) {
    throw std::invalid_argument("t_0 and t_mult must be >= 1");
  }
  if (o_.kind == ScheduleKind::kOneCycle && o_.total_steps < 2) {
    throw std::invalid_argument("one-cycle needs total_steps >= 2");
  }
  std::sort(o_.milestones.begin(), o_.milestones.end());
}

double LrSchedule::schedule(std::int64_t t) const {
  switch (o_.kind) {
    case ScheduleKind::kConstant: return base_;
    case ScheduleKind::kStep: return base_ * std::pow(o_.gamma, static_cast<double>(t / o_.step_size));
    case ScheduleKind::kMultiStep: {
      const auto passed = std::upper_bound(o_.milestones.begin(), o_.milestones.end(), t) - o_.milestones.begin();
      return base_ * std::pow(o_.gamma, static_cast<double>(passed));
    }
    case ScheduleKind::kExponential: return base_ * std::pow(o_.gamma, static_cast<double>(t));
    case ScheduleKind::kLinear: {
      // LinearLR(start_factor=1, end_factor=eta_min/lr, total_iters=t_max): from lr
      // to eta_min in t_max steps, then held (transformers' linear decay, to 0 by default).
      const double done = static_cast<double>(std::min(t, o_.t_max)) / static_cast<double>(o_.t_max);
      return base_ + (o_.eta_min - base_) * done;
    }
    case ScheduleKind::kCosine:
      return o_.eta_min + (base_ - o_.eta_min) *
                              (1 + std::cos(M_PI * static_cast<double>(t) / static_cast<double>(o_.t_max))) / 2;
    case ScheduleKind::kCosineRestarts: {
      // Which cycle t falls in, and where in it (CosineAnnealingWarmRestarts).
      std::int64_t cycle = o_.t_0, cur = t;
      while (cur >= cycle) {
        cur -= cycle;
        cycle *= o_.t_mult;
      }
      return o_.eta_min + (base_ - o_.eta_min) *
                              (1 + std::cos(M_PI * static_cast<double>(cur) / static_cast<double>(cycle))) / 2;
    }
    case ScheduleKind::kOneCycle: {
      const double initial = o_.max_lr / o_.div_factor;
      const double min_lr = initial / o_.final_div_factor;
      const double warm_end = o_.pct_start * static_cast<double>(o_.total_steps) - 1;
      const double end = static_cast<double>(o_.total_steps) - 1;
      const double step = static_cast<double>(std::min(t, o_.total_steps - 1));
      // A warm-up that ends at step 0 (pct_start x total_steps = 1) has reached max_lr there
      // (where PyTorch would divide by zero).
      if (warm_end > 0 && step <= warm_end) return cosine_between(initial, o_.max_lr, step / warm_end);
      return cosine_between(o_.max_lr, min_lr, (step - warm_end) / (end - warm_end));
    }
    case ScheduleKind::kPlateau: return plateau_.lr;
  }
  return base_;
}

double LrSchedule::warmup_factor(std::int64_t t) const {
  if (o_.warmup <= 0 || o_.kind == ScheduleKind::kOneCycle) return 1.0;
  // LinearLR from start_factor to 1 over `warmup` steps.
  const double done = static_cast<double>(std::min(t, o_.warmup)) / static_cast<double>(o_.warmup);
  return o_.warmup_start_factor + (1.0 - o_.warmup_start_factor) * done;
}

double LrSchedule::lr(std::int64_t steps) const { return schedule(steps) * warmup_factor(steps); }

void LrSchedule::observe(double metric) {
  if (o_.kind != ScheduleKind::kPlateau) return;
  auto& s = plateau_;
  // ReduceLROnPlateau with threshold_mode 'rel'.
  const bool better = !s.has_best ||
                      (o_.maximize ? metric > s.best * (1 + o_.threshold) : metric < s.best * (1 - o_.threshold));
  if (better) {
    s.best = metric;
    s.has_best = true;
    s.bad_epochs = 0;
  } else {
    ++s.bad_epochs;
  }
  if (s.cooldown_counter > 0) {
    --s.cooldown_counter;
    s.bad_epochs = 0;
  }
  if (s.bad_epochs > o_.patience) {
    const double reduced = std::max(s.lr * o_.factor, o_.min_lr);
    if (s.lr - reduced > o_.eps) s.lr = reduced;
    s.cooldown_counter = o_.cooldown;
    s.bad_epochs = 0;
  }
}

FusedLrScheduler::FusedLrScheduler(FusedOptimizer& optimizer, std::vector<LrSchedule> schedules)
    : optimizer_(optimizer), schedules_(std::move(schedules)), steps_(schedules_.size(), 0) {
  if (static_cast<std::int64_t>(schedules_.size()) != optimizer.models()) {
    throw std::invalid_argument("one schedule per model is needed");
  }
  for (std::int64_t b = 0; b < optimizer.models(); ++b) apply(b);
}

void FusedLrScheduler::apply(std::int64_t model) {
  optimizer_.lr().set(model, schedules_[static_cast<std::size_t>(model)].lr(steps(model)), optimizer_.models());
}

void FusedLrScheduler::step() {
  for (std::int64_t b = 0; b < optimizer_.models(); ++b) {
    if (optimizer_.frozen(b)) continue;
    ++steps_[static_cast<std::size_t>(b)];
    apply(b);
  }
}

void FusedLrScheduler::observe(std::int64_t model, double metric) {
  schedules_.at(static_cast<std::size_t>(model)).observe(metric);
  apply(model);
}

void FusedLrScheduler::set_steps(std::int64_t model, std::int64_t steps) {
  steps_.at(static_cast<std::size_t>(model)) = steps;
  apply(model);
}

}  // namespace hfta::fusion
