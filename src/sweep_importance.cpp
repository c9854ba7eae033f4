#include "hfta/core/sweep_importance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "hfta/core/sweep_summary.h"
#include "hfta/search/param_importance.h"
#include "hfta/search/rng.h"
#include "hfta/search/scheduler.h"

namespace hfta::core {

std::size_t importance_results_needed(const SweepConfig& sweep) {
  std::set<std::string> varying;
  for (const auto& p : sweep.parameters) {
    if (p.distribution != search::Distribution::kConst) varying.insert(p.name);
  }
  return std::max(kImportanceResults, 2 * varying.size());
}

nlohmann::json importance_json(const SweepConfig& sweep, const std::vector<TrialRecord>& trials) {
  nlohmann::json out = {{"method", "fanova"}, {"metric", sweep.metric.name}, {"budget", nullptr},
                        {"unit", to_string(sweep.budget.unit)}, {"results", 0}, {"params", nlohmann::json::array()}};
  if (sweep.search.method == SearchMethod::kPbt) {
    out["why"] = "under population based training a member's result comes of its lineage's schedule of "
                 "hyperparameters, not of its own configuration";
    return out;
  }
  std::map<double, std::size_t> count;
  for (const auto& t : trials) {
    for (const auto& [budget, metric] : t.rung_metrics) ++count[budget];
  }
  const std::size_t needed = importance_results_needed(sweep);
  const auto chosen = std::find_if(count.rbegin(), count.rend(), [&](const auto& c) { return c.second >= needed; });
  if (chosen == count.rend()) {
    const auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    out["why"] = "it needs results of " + std::to_string(needed) + " trials at one budget; " +
                 (most == count.end() ? std::string("no trial has a result")
                                      : "the most at any is " + std::to_string(most->second));
    return out;
  }
  const double budget = chosen->first;
  std::vector<search::Config> configs;
  std::vector<double> values;
  for (const auto& t : trials) {
    if (const auto it = t.rung_metrics.find(budget); it != t.rung_metrics.end()) {
      configs.push_back(t.params);
      values.push_back(it->second);
    }
  }
  out["budget"] = budget;
  if (values.size() > kImportanceMostResults) {  // a seeded sample: the first of a partial shuffle
    out["sampled_from"] = values.size();
    search::Rng rng(sweep.seed, search::hash_string("importance"));
    for (std::size_t i = 0; i < kImportanceMostResults; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(values.size() - i));
      std::swap(configs[i], configs[j]);
      std::swap(values[i], values[j]);
    }
    configs.resize(kImportanceMostResults);
    values.resize(kImportanceMostResults);
  }
  out["results"] = values.size();
  // A diverged result (NaN) as the worst finite one: its parameters made it bad.
  double worst = NAN;
  for (double v : values) {
    if (std::isfinite(v) && (std::isnan(worst) || search::better(worst, v, sweep.metric.goal))) worst = v;
  }
  if (std::isnan(worst)) {
    out["why"] = "every result at " + budget_text(budget, to_string(sweep.budget.unit)) + " diverged";
    return out;
  }
  for (double& v : values) {
    if (!std::isfinite(v)) v = worst;
  }
  std::string why;
  std::vector<std::pair<std::string, std::string>> left_out;
  const auto importance = search::param_importance(sweep.parameters, configs, values, sweep.seed, why, &left_out);
  out["left_out"] = nlohmann::json::array();
  for (const auto& [name, reason] : left_out) out["left_out"].push_back({{"name", name}, {"why", reason}});
  if (!importance) {
    out["why"] = why;
    return out;
  }
  out["main_effects"] = importance->main_effects;
  for (const auto& [name, share] : importance->params) out["params"].push_back({{"name", name}, {"importance", share}});
  return out;
}

}  // namespace hfta::core
