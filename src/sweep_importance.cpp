#include "hfta/core/sweep_importance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "hfta/search/param_importance.h"
#include "hfta/search/rng.h"
#include "hfta/search/scheduler.h"

namespace hfta::core {

nlohmann::json importance_json(const SweepConfig& sweep, const std::vector<TrialRecord>& trials) {
  nlohmann::json out = {{"method", "fanova"}, {"metric", sweep.metric.name}, {"budget", nullptr},
                        {"results", 0},       {"params", nlohmann::json::array()}};
  if (sweep.search.method == SearchMethod::kPbt) {
    out["why"] = "under population based training a member's result comes of its lineage's schedule of "
                 "hyperparameters, not of its own configuration";
    return out;
  }
  std::map<double, std::size_t> count;
  for (const auto& t : trials) {
    for (const auto& [budget, metric] : t.rung_metrics) ++count[budget];
  }
  const auto chosen = std::find_if(count.rbegin(), count.rend(), [](const auto& c) { return c.second >= kImportanceResults; });
  if (chosen == count.rend()) {
    const auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    out["why"] = "it needs results of " + std::to_string(kImportanceResults) + " trials at one budget; " +
                 (most == count.end() ? std::string("there are none yet")
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
  // A diverged result (NaN) as the worst finite one: its parameters made it bad.
  double worst = NAN;
  for (double v : values) {
    if (std::isfinite(v) && (std::isnan(worst) || search::better(worst, v, sweep.metric.goal))) worst = v;
  }
  for (double& v : values) {
    if (!std::isfinite(v)) v = worst;
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
  std::string why;
  const auto importance = std::isnan(worst) ? std::nullopt
                                            : search::param_importance(sweep.parameters, configs, values, sweep.seed, why);
  if (std::isnan(worst)) why = "every result there diverged";
  if (!importance) {
    out["why"] = why;
    return out;
  }
  out["main_effects"] = importance->main_effects;
  for (const auto& [name, share] : importance->params) out["params"].push_back({{"name", name}, {"importance", share}});
  return out;
}

}  // namespace hfta::core
