// What a sweep and one trial's configuration make of the trainer's settings:
// each option is the trial's parameter, else the task's, else the model's or
// the training hyperparameter's catalog default (what the README lists).
#pragma once

#include <cstdint>
#include <string>

#include "hfta/core/sweep_config.h"
#include "hfta/fusion/lr_schedule.h"
#include "hfta/search/search_space.h"
#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::core {

/// The model's options for a trial: its parameters over the task's (catalog
/// defaults for the rest). Needs no data: it says which data to load.
trainers::ModelOptions model_options(const SweepConfig& sweep, const search::Config& c);

class TrialSettings {
 public:
  /// `train_size`: the training split's examples, which an epoch's steps count.
  TrialSettings(const SweepConfig& sweep, std::int64_t train_size) : sweep_(&sweep), train_size_(train_size) {}

  std::int64_t batch_size(const search::Config& c) const;
  /// Training steps for a budget; every positive budget trains at least one step.
  std::int64_t steps_for(double budget, const search::Config& c) const;
  /// Training steps for a budget at batch size `b`, as rounded (0 for a tiny budget).
  std::int64_t raw_steps_at(double budget, std::int64_t b) const;
  std::int64_t raw_steps(double budget, const search::Config& c) const { return raw_steps_at(budget, batch_size(c)); }
  /// The budget that `steps` training steps make (steps_for's inverse).
  double budget_of(std::int64_t steps, const search::Config& c) const;
  /// The trial's learning-rate schedule; its lengths count training steps.
  fusion::ScheduleOptions schedule_of(const search::Config& c) const;
  /// A trial's slot: its hyperparameters, unset ones at the catalog's defaults.
  trainers::SlotTrial slot_of(std::int64_t id, const search::Config& c, std::uint64_t seed) const;
  /// What every model of an array shares (optimizer, batches, early stopping), from its first trial.
  trainers::ArrayTrainerOptions array_options(const search::Config& first) const;

 private:
  double number(const search::Config& c, const std::string& name, double fallback) const;
  std::string text(const search::Config& c, const std::string& name, const std::string& fallback) const;
  /// A training hyperparameter: as number(), falling back to its catalog default.
  double hyperparameter(const search::Config& c, const char* name) const;

  const SweepConfig* sweep_;  // a pointer: the tuner assigns its settings once the data is loaded
  std::int64_t examples_per_step(std::int64_t batch_size) const;
  std::int64_t train_size_;
};

}  // namespace hfta::core
