// Learning-rate schedules, one per model, as PyTorch defines them: constant,
// step, multi-step, exponential, linear decay, cosine annealing (with warm
// restarts), one-cycle and reduce-on-plateau, each optionally behind a linear warm-up
// (LinearLR chained with it). Their parameters may differ per model.
#pragma once

#include <cstdint>
#include <vector>

#include "hfta/fusion/fused_optimizer.h"

namespace hfta::fusion {

enum class ScheduleKind {
  kConstant, kStep, kMultiStep, kExponential, kLinear, kCosine, kCosineRestarts, kOneCycle, kPlateau
};

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::kConstant;
  std::int64_t step_size = 1;            ///< step: StepLR's step_size
  double gamma = 0.1;                    ///< step, multi-step, exponential
  std::vector<std::int64_t> milestones;  ///< multi-step
  std::int64_t t_max = 1;                ///< cosine: CosineAnnealingLR's T_max; linear: LinearLR's total_iters
  double eta_min = 0;                    ///< cosine, cosine restarts; linear: where it ends
  std::int64_t t_0 = 1, t_mult = 1;      ///< cosine restarts
  double max_lr = 0.1;                   ///< one-cycle
  std::int64_t total_steps = 1;          ///< one-cycle
  double pct_start = 0.3, div_factor = 25, final_div_factor = 1e4;  ///< one-cycle (cosine annealing)
  bool maximize = false;                 ///< plateau: the metric's goal
  double factor = 0.1;                   ///< plateau
  std::int64_t patience = 10, cooldown = 0;
  double threshold = 1e-4, min_lr = 0, eps = 1e-8;  ///< plateau (relative threshold)
  std::int64_t warmup = 0;               ///< LinearLR total_iters; 0: no warm-up
  double warmup_start_factor = 1.0 / 3;  ///< LinearLR start_factor (PyTorch's default)
};

/// One model's schedule: lr(t) after t scheduler steps.
class LrSchedule {
 public:
  LrSchedule(double base_lr, ScheduleOptions options);

  /// The learning rate after `steps` scheduler steps (0: before the first).
  double lr(std::int64_t steps) const;
  /// Reduce-on-plateau: one evaluation of the model's metric (other kinds ignore it).
  void observe(double metric);

  /// Reduce-on-plateau's state, to resume a model elsewhere.
  struct PlateauState {
    double lr = 0, best = 0;
    std::int64_t bad_epochs = 0, cooldown_counter = 0;
    bool has_best = false;
  };
  const PlateauState& plateau() const { return plateau_; }
  void set_plateau(const PlateauState& s) { plateau_ = s; }

 private:
  double schedule(std::int64_t t) const;
  double warmup_factor(std::int64_t t) const;

  double base_;
  ScheduleOptions o_;
  PlateauState plateau_;
};

/// Drives a fused optimizer's per-model learning rates. Frozen models' schedules
/// do not advance, so a model resumed elsewhere continues where it stopped.
class FusedLrScheduler {
 public:
  FusedLrScheduler(FusedOptimizer& optimizer, std::vector<LrSchedule> schedules);

  /// One scheduler step (after optimizer.step()), for every model not frozen.
  void step();
  /// Model b's metric for reduce-on-plateau, at an evaluation point.
  void observe(std::int64_t model, double metric);

  std::int64_t steps(std::int64_t model) const { return steps_.at(static_cast<std::size_t>(model)); }
  void set_steps(std::int64_t model, std::int64_t steps);
  LrSchedule& schedule(std::int64_t model) { return schedules_.at(static_cast<std::size_t>(model)); }

 private:
  void apply(std::int64_t model);

  FusedOptimizer& optimizer_;
  std::vector<LrSchedule> schedules_;
  std::vector<std::int64_t> steps_;
};

}  // namespace hfta::fusion
