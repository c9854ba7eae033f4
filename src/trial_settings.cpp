#include "hfta/core/trial_settings.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "hfta/fusion/precision.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {
namespace {

using search::Config;

// A model option's catalog default, as written in YAML; null when the model has no such option.
const std::string* model_default(const SweepConfig& s, const std::string& name) {
  const auto* model = trainers::find_model(s.task.model);
  const auto* option = model ? model->find_option(name) : nullptr;
  return option ? &option->default_value : nullptr;
}

// An option as text: the trial's parameter, else the task's, else the model's default, else `fallback`.
std::string text_of(const Config& c, const SweepConfig& s, const std::string& name, const std::string& fallback) {
  if (auto it = c.find(name); it != c.end()) return search::to_string(it->second);
  if (auto it = s.task.options.find(name); it != s.task.options.end()) return search::to_string(it->second);
  if (const auto* d = model_default(s, name)) return *d;
  return fallback;
}

}  // namespace

trainers::ModelOptions model_options(const SweepConfig& sweep, const Config& c) {
  trainers::ModelOptions out;
  for (const auto& o : trainers::find_model(sweep.task.model)->options) {
    if (c.count(o.name) || sweep.task.options.count(o.name)) out[o.name] = text_of(c, sweep, o.name, o.default_value);
  }
  return out;
}

double TrialSettings::number(const Config& c, const std::string& name, double fallback) const {
  if (auto it = c.find(name); it != c.end() && search::is_numeric(it->second)) return search::as_double(it->second);
  if (auto it = sweep_->task.options.find(name); it != sweep_->task.options.end() && search::is_numeric(it->second)) {
    return search::as_double(it->second);
  }
  if (const auto* d = model_default(*sweep_, name)) return std::stod(*d);
  return fallback;
}

std::string TrialSettings::text(const Config& c, const std::string& name, const std::string& fallback) const {
  return text_of(c, *sweep_, name, fallback);
}

double TrialSettings::hyperparameter(const Config& c, const char* name) const {
  const auto* spec = trainers::find_training_hyperparameter(name);
  return number(c, name, spec ? std::stod(spec->default_value) : 0.0);
}

std::int64_t TrialSettings::batch_size(const Config& c) const {
  return static_cast<std::int64_t>(number(c, "batch_size", static_cast<double>(sweep_->task.batch_size)));
}

std::int64_t TrialSettings::steps_for(double budget, const Config& c) const {
  const std::int64_t steps = raw_steps(budget, c);
  return budget > 0 ? std::max<std::int64_t>(steps, 1) : 0;
}

std::int64_t TrialSettings::raw_steps_at(double budget, std::int64_t b) const {
  const double per_epoch = std::ceil(static_cast<double>(train_size_) / static_cast<double>(b));
  switch (sweep_->budget.unit) {
    case BudgetUnit::kEpochs: return std::llround(budget * per_epoch);
    case BudgetUnit::kSteps: return std::llround(budget);
    case BudgetUnit::kSamples: return std::llround(budget / static_cast<double>(examples_per_step(b)));
  }
  return 0;
}

// A batch larger than the training set is the whole set (a table's 114 rows
// at batch_size 512): a step trains that many examples, and a budget in
// samples counts them.
std::int64_t TrialSettings::examples_per_step(std::int64_t b) const {
  return train_size_ > 0 ? std::min(b, train_size_) : b;
}

double TrialSettings::budget_of(std::int64_t steps, const Config& c) const {
  const auto b = static_cast<double>(batch_size(c)), n = static_cast<double>(steps);
  switch (sweep_->budget.unit) {
    case BudgetUnit::kEpochs: return n / std::ceil(static_cast<double>(train_size_) / b);
    case BudgetUnit::kSteps: return n;
    case BudgetUnit::kSamples: return n * static_cast<double>(examples_per_step(batch_size(c)));
  }
  return n;
}

fusion::ScheduleOptions TrialSettings::schedule_of(const Config& c) const {
  using fusion::ScheduleKind;
  fusion::ScheduleOptions o;
  const std::map<std::string, ScheduleKind> kinds = {
      {"constant", ScheduleKind::kConstant}, {"step", ScheduleKind::kStep}, {"multistep", ScheduleKind::kMultiStep},
      {"exponential", ScheduleKind::kExponential}, {"linear", ScheduleKind::kLinear}, {"cosine", ScheduleKind::kCosine},
      {"cosine_restarts", ScheduleKind::kCosineRestarts}, {"one_cycle", ScheduleKind::kOneCycle},
      {"plateau", ScheduleKind::kPlateau}};
  o.kind = kinds.at(text(c, "schedule", "constant"));
  auto hp = [&](const char* name) { return hyperparameter(c, name); };
  const std::int64_t total = steps_for(static_cast<double>(sweep_->budget.max), c);
  // Milestones are fractions of the sweep's full budget, in training steps.
  // (Held here: a range-for over `*parse_fractions(...)` reads the optional after its end.)
  const auto fractions = trainers::parse_fractions(text(c, "milestones", "0.5,0.75"));
  for (double f : fractions.value()) {
    o.milestones.push_back(std::llround(f * static_cast<double>(total)));
  }
  o.step_size = static_cast<std::int64_t>(hp("step_size"));
  o.gamma = hp("gamma");
  o.t_max = hp("t_max") > 0 ? static_cast<std::int64_t>(hp("t_max")) : total;
  o.t_0 = static_cast<std::int64_t>(hp("t_0"));
  o.t_mult = static_cast<std::int64_t>(hp("t_mult"));
  o.eta_min = hp("eta_min");
  // warmup_ratio (the loader keeps it from beside warmup): a share of the full budget's steps.
  o.warmup = hp("warmup_ratio") > 0 ? std::llround(hp("warmup_ratio") * static_cast<double>(total))
                                    : static_cast<std::int64_t>(hp("warmup"));
  o.max_lr = hp("max_lr");
  o.total_steps = std::max<std::int64_t>(total, 2);
  o.pct_start = hp("pct_start");
  o.factor = hp("plateau_factor");
  o.patience = static_cast<std::int64_t>(hp("plateau_patience"));
  return o;
}

trainers::SlotTrial TrialSettings::slot_of(std::int64_t id, const Config& c, std::uint64_t seed) const {
  trainers::SlotTrial t{id, seed};
  auto hp = [&](const char* name) { return hyperparameter(c, name); };
  t.lr = hp("lr"), t.momentum = hp("momentum"), t.weight_decay = hp("weight_decay");
  t.dropout = number(c, "dropout", 0), t.beta1 = hp("beta1"), t.beta2 = hp("beta2");
  // eps unset: each optimizer's own default, PyTorch's (the catalog's 1e-8 is Adam's and RMSprop's).
  const std::string optimizer = text(c, "optimizer", "sgd");
  t.eps = c.count("eps") ? hp("eps") : optimizer == "adagrad" ? 1e-10 : optimizer == "adadelta" ? 1e-6 : hp("eps");
  t.dampening = hp("dampening"), t.alpha = hp("alpha"), t.rho = hp("rho"), t.lr_decay = hp("lr_decay");
  t.label_smoothing = hp("label_smoothing");
  t.balanced_class_weight = text(c, "class_weight", "none") == "balanced";
  t.nesterov = text(c, "nesterov", "false") == "true";
  t.amsgrad = text(c, "amsgrad", "false") == "true";
  t.centered = text(c, "centered", "false") == "true";
  t.grad_clip = hp("grad_clip");
  t.schedule = schedule_of(c);
  return t;
}

trainers::ArrayTrainerOptions TrialSettings::array_options(const Config& first) const {
  trainers::ArrayTrainerOptions o;
  o.optimizer = text(first, "optimizer", "sgd");
  if (!sweep_->task.loss.empty()) o.loss = sweep_->task.loss;
  o.batch_size = batch_size(first);
  o.least_batch = trainers::least_batch(sweep_->task.model, model_options(*sweep_, first));
  o.data_seed = sweep_->seed;
  // Structural options: every trial of an array has the first's.
  o.augmentation.flip = text(first, "flip", "false") == "true";
  o.augmentation.crop = static_cast<std::int64_t>(number(first, "crop", 0));
  o.metric = sweep_->metric.name;
  const auto* model = trainers::find_model(sweep_->task.model);
  o.class_metrics = model && trainers::task_kind(*model, sweep_->task.loss) == trainers::TaskKind::kClassification;
  o.auc = o.class_metrics && sweep_->names_metric("val_auc");
  o.average_precision = o.class_metrics && sweep_->names_metric("val_average_precision");
  o.maximize = sweep_->metric.goal == Goal::kMaximize;
  o.record_losses = false;  // losses are read at evaluations: no host round trip per step on a GPU
  o.precision = fusion::precision_from_name(sweep_->task.precision);
  if (sweep_->early_stopping.enabled) {
    o.patience = sweep_->early_stopping.patience;
    o.min_delta = sweep_->early_stopping.min_delta;
    o.divergence = sweep_->early_stopping.divergence;
  }
  return o;
}

}  // namespace hfta::core
