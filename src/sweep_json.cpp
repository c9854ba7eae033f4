#include "hfta/core/sweep_json.h"

#include "hfta/core/search_setup.h"

namespace hfta::core {

using nlohmann::json;

json to_json(const search::ParamValue& value) {
  return std::visit([](const auto& v) { return json(v); }, value);
}

search::ParamValue param_value_of(const json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  return j.get<std::string>();
}

namespace {

json values_json(const std::vector<search::ParamValue>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back(to_json(v));
  return out;
}

json parameter_json(const search::ParameterSpec& p) {
  using search::Distribution;
  json out;
  out["distribution"] = search::distribution_name(p.distribution);
  switch (p.distribution) {
    case Distribution::kUniform:
    case Distribution::kLogUniform:
      out["min"] = p.min;
      out["max"] = p.max;
      break;
    case Distribution::kIntUniform:
    case Distribution::kIntLogUniform:
      out["min"] = static_cast<std::int64_t>(p.min);
      out["max"] = static_cast<std::int64_t>(p.max);
      break;
    case Distribution::kQuantized:
      out["min"] = p.min;
      out["max"] = p.max;
      out["q"] = p.q;
      out["log"] = p.log;
      break;
    case Distribution::kChoice:
    case Distribution::kGrid:
      out["values"] = values_json(p.values);
      if (!p.probabilities.empty()) out["probabilities"] = p.probabilities;
      break;
    case Distribution::kConst:
      out["value"] = to_json(p.values.at(0));
      break;
  }
  out["fuse"] = p.fuse;
  if (!p.when.empty()) {
    json when = json::object();
    for (const auto& c : p.when) when[c.parameter] = values_json(c.values);
    out["when"] = when;
  }
  return out;
}

}  // namespace

json to_json(const SweepConfig& s) {
  json out;
  out["name"] = s.name;
  out["seed"] = s.seed;

  json options = json::object();
  for (const auto& [name, value] : s.task.options) options[name] = to_json(value);
  out["task"] = {{"dataset", s.task.dataset},
                 {"model", s.task.model},
                 {"batch_size", s.task.batch_size},
                 {"loss", s.task.loss},
                 {"precision", s.task.precision},
                 {"options", options}};
  // Only when given: 0 stands for the dataset's default, which a sweep file cannot write.
  if (s.task.validation_size > 0) out["task"]["validation_size"] = s.task.validation_size;
  if (s.task.eval_steps > 0) out["task"]["eval_steps"] = s.task.eval_steps;  // 0: each epoch, as before it existed
  if (s.task.dataset == "csv") {  // the files as written: where they are read from is no part of the sweep
    json data = {{"train", s.task.table.train}};
    if (!s.task.table.test.empty()) data["test"] = s.task.table.test;
    if (!s.task.table.label.empty()) data["label"] = s.task.table.label;
    out["task"]["data"] = data;
  }

  out["metric"] = {{"name", s.metric.name}, {"goal", to_string(s.metric.goal)}};
  if (s.metric.target) out["metric"]["target"] = *s.metric.target;
  if (!s.objectives.empty()) {
    out["metric"] = json::array();
    for (const auto& o : s.objectives) out["metric"].push_back({{"name", o.name}, {"goal", to_string(o.goal)}});
  }
  if (!s.constraints.empty()) {
    out["constraints"] = json::array();
    for (const auto& c : s.constraints) {
      json bound = {{"name", c.name}};
      if (c.min) bound["min"] = *c.min;
      if (c.max) bound["max"] = *c.max;
      out["constraints"].push_back(bound);
    }
  }
  out["budget"] = {
      {"unit", to_string(s.budget.unit)}, {"min", s.budget.min}, {"max", s.budget.max}};

  // Only the keys the method uses: the canonical form must load back as valid.
  json search = {{"method", to_string(s.search.method)}};
  switch (s.search.method) {
    case SearchMethod::kGrid:
      search["repeats"] = s.search.repeats;
      break;
    case SearchMethod::kRandom:
      search["searcher"] = to_string(s.search.searcher);
      search["trials"] = s.search.trials;
      search["stopping"] = to_string(s.search.stopping);
      if (s.search.stopping != Stopping::kNone) {
        search["grace_period"] = s.search.grace_period;
        search["min_samples"] = s.search.min_samples;
      }
      if (s.search.stopping == Stopping::kPercentile) search["percentile"] = s.search.percentile;
      break;
    case SearchMethod::kHyperband:
      search["searcher"] = to_string(s.search.searcher);
      search["eta"] = s.search.eta;
      search["align_brackets"] = s.search.align_brackets;
      search["iterations"] = s.search.iterations;
      break;
    case SearchMethod::kSha:
    case SearchMethod::kAsha:
      search["searcher"] = to_string(s.search.searcher);
      search["eta"] = s.search.eta;
      search["trials"] = s.search.trials;
      if (s.search.method == SearchMethod::kAsha) {
        search["promotion_wait"] = s.search.promotion_wait;
      }
      break;
    case SearchMethod::kPbt:
      search["searcher"] = to_string(s.search.searcher);
      search["population"] = s.search.population;
      search["quantile_fraction"] = s.search.quantile_fraction;
      search["resample_probability"] = s.search.resample_probability;
      search["perturbation_factors"] = s.search.perturbation_factors;
      if (!s.search.explore.empty()) search["explore"] = s.search.explore;
      search["burn_in_period"] = s.search.burn_in_period;
      break;
  }
  // As resolved (trial_waves), so that a later default never changes a recorded sweep.
  if (models_results(s.search.searcher) && s.search.method != SearchMethod::kHyperband) {
    search["waves"] = trial_waves(s).count;
  }
  if (s.search.searcher == Searcher::kCmaEs) search["population"] = s.search.population;  // as resolved
  if (s.search.searcher == Searcher::kTpe) search["multivariate"] = s.search.multivariate;
  if (!s.search.points.empty()) {
    json points = json::array();
    for (const auto& point : s.search.points) {
      json p = json::object();
      for (const auto& [name, value] : point) p[name] = to_json(value);
      points.push_back(p);
    }
    search["points_to_evaluate"] = points;
  }
  if (!s.search.warm_start.empty()) search["warm_start"] = s.search.warm_start;
  out["search"] = search;

  json parameters = json::object();
  for (const auto& p : s.parameters) {
    if (p.branch < 0) {
      parameters[p.name] = parameter_json(p);
    } else {
      parameters[p.name].push_back(parameter_json(p));  // branches: a list, in order (as written)
    }
  }
  out["parameters"] = parameters;

  if (s.early_stopping.enabled) {
    out["early_stopping"] = {{"patience", s.early_stopping.patience},
                             {"min_delta", s.early_stopping.min_delta}};
    if (s.early_stopping.divergence > 0) {
      out["early_stopping"]["divergence"] = s.early_stopping.divergence;
    }
  }
  out["fusion"] = {{"enabled", to_string(s.fusion.enabled)},
                   {"max_array", s.fusion.max_array},
                   {"memory_fraction", s.fusion.memory_fraction},
                   {"min_gain", s.fusion.min_gain}};
  return out;
}

}  // namespace hfta::core
