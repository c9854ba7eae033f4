#include "hfta/core/sweep_config.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hfta::core {

// Order must follow the enums' declarations: to_string indexes by value.
template <>
const std::vector<std::string>& enum_names<BudgetUnit>() {
  static const std::vector<std::string> names{"epochs", "steps", "samples"};
  return names;
}
template <>
const std::vector<std::string>& enum_names<Goal>() {
  static const std::vector<std::string> names{"maximize", "minimize"};
  return names;
}
template <>
const std::vector<std::string>& enum_names<SearchMethod>() {
  static const std::vector<std::string> names{"random", "grid", "hyperband", "sha", "asha", "pbt"};
  return names;
}
template <>
const std::vector<std::string>& enum_names<Searcher>() {
  static const std::vector<std::string> names{"random", "tpe", "grid", "qmc", "cmaes", "gp"};
  return names;
}
template <>
const std::vector<std::string>& enum_names<Stopping>() {
  static const std::vector<std::string> names{"none", "median", "percentile"};
  return names;
}
template <>
const std::vector<std::string>& enum_names<FusionMode>() {
  static const std::vector<std::string> names{"auto", "off"};
  return names;
}

bool TaskOptions::operator==(const TaskOptions& o) const {
  return dataset == o.dataset && model == o.model && batch_size == o.batch_size &&
         loss == o.loss && precision == o.precision && validation_size == o.validation_size &&
         eval_steps == o.eval_steps && options == o.options && table == o.table;
}

bool SearchOptions::operator==(const SearchOptions& o) const {
  return method == o.method && searcher == o.searcher && eta == o.eta && trials == o.trials &&
         repeats == o.repeats && promotion_wait == o.promotion_wait && stopping == o.stopping &&
         grace_period == o.grace_period && min_samples == o.min_samples && percentile == o.percentile &&
         align_brackets == o.align_brackets && iterations == o.iterations && waves == o.waves && points == o.points && population == o.population && multivariate == o.multivariate &&
         quantile_fraction == o.quantile_fraction && resample_probability == o.resample_probability &&
         perturbation_factors == o.perturbation_factors && explore == o.explore &&
         burn_in_period == o.burn_in_period && warm_start == o.warm_start;
}

const search::ParameterSpec* SweepConfig::find_parameter(const std::string& parameter) const {
  for (const auto& p : parameters) {
    if (p.name == parameter) return &p;
  }
  return nullptr;
}

bool SweepConfig::names_metric(const std::string& m) const {
  const auto named = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& o) { return o.name == m; });
  };
  return metric.name == m || named(objectives) || named(constraints);
}

std::vector<const search::ParameterSpec*> SweepConfig::parameter_branches(const std::string& parameter) const {
  std::vector<const search::ParameterSpec*> out;
  for (const auto& p : parameters) {
    if (p.name == parameter) out.push_back(&p);
  }
  return out;
}

std::string parameter_path(const search::ParameterSpec& p) {
  return "parameters." + p.name + (p.branch >= 0 ? "[" + std::to_string(p.branch) + "]" : "");
}

double ConstraintOptions::violation(double value) const {
  if (std::isnan(value)) return std::numeric_limits<double>::infinity();
  // Relative to the bound, so that bounds of other scales (a loss, a count) add up.
  const auto beyond = [](double by, double bound) { return by > 0 ? by / (bound != 0 ? std::abs(bound) : 1.0) : 0.0; };
  return (max ? beyond(value - *max, *max) : 0.0) + (min ? beyond(*min - value, *min) : 0.0);
}

search::Goals SweepConfig::goals() const {
  if (objectives.size() < 2) return metric.goal;
  std::vector<Goal> all;
  for (const auto& o : objectives) all.push_back(o.goal);
  return search::Goals(std::move(all));
}

bool SweepConfig::operator==(const SweepConfig& o) const {
  return name == o.name && seed == o.seed && task == o.task && metric == o.metric && objectives == o.objectives &&
         constraints == o.constraints &&
         budget == o.budget && search == o.search && parameters == o.parameters &&
         early_stopping == o.early_stopping && fusion == o.fusion;
}

}  // namespace hfta::core
