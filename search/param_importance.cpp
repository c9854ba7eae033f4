#include "hfta/search/param_importance.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "hfta/search/fanova.h"
#include "hfta/search/param_scale.h"
#include "hfta/search/random_forest.h"

namespace hfta::search {
namespace {

// How one parameter becomes one feature.
struct Feature {
  std::string name;
  FeatureRange range;
  std::vector<const ParameterSpec*> specs;  ///< the name's branches (one without)
  std::vector<ParamValue> values;           ///< categorical: the values, each owning [k, k + 1)
  bool numeric = false;

  double encode(const ParamValue& v) const {
    if (!numeric) return static_cast<double>(std::find(values.begin(), values.end(), v) - values.begin()) + 0.5;
    return log_scale(*specs.front()) ? std::log(as_double(v)) : as_double(v);
  }
};

bool numeric_range(const ParameterSpec& p) {
  return !is_categorical(p.distribution);
}

// The feature of a name, if it has one: numeric where every branch is a
// numeric range on one scale, categorical where every branch lists its values.
std::optional<Feature> feature_of(const std::string& name, const std::vector<const ParameterSpec*>& specs) {
  Feature f{name, {}, specs, {}, numeric_range(*specs.front())};
  for (const auto* p : specs) {
    if (numeric_range(*p) != f.numeric || (f.numeric && log_scale(*p) != log_scale(*specs.front()))) return std::nullopt;
  }
  if (f.numeric) {
    f.range = {INFINITY, -INFINITY};
    for (const auto* p : specs) {
      const auto [lo, hi] = scaled_range(*p);
      f.range.lo = std::min(f.range.lo, lo);
      f.range.hi = std::max(f.range.hi, hi);
    }
    if (!(f.range.hi > f.range.lo) || (specs.size() == 1 && specs.front()->min == specs.front()->max)) return std::nullopt;
    return f;
  }
  for (const auto* p : specs) {
    for (const auto& v : p->values) {
      if (std::find(f.values.begin(), f.values.end(), v) == f.values.end()) f.values.push_back(v);
    }
  }
  if (f.values.size() < 2) return std::nullopt;
  f.range = {0.0, static_cast<double>(f.values.size())};
  return f;
}

}  // namespace

std::optional<ParamImportance> param_importance(const std::vector<ParameterSpec>& space,
                                                const std::vector<Config>& configs, const std::vector<double>& values,
                                                std::uint64_t seed, std::string& why) {
  std::map<std::string, std::vector<const ParameterSpec*>> by_name;
  for (const auto& p : space) by_name[p.name].push_back(&p);
  std::vector<Feature> features;
  for (const auto& [name, specs] : by_name) {
    const bool everywhere = std::all_of(configs.begin(), configs.end(), [&](const Config& c) { return c.count(name) > 0; });
    if (!everywhere) continue;  // (as Optuna's intersection search space: a conditional parameter is judged by its condition's)
    if (auto f = feature_of(name, specs)) features.push_back(std::move(*f));
  }
  if (features.empty()) {
    why = "no parameter that every trial holds takes more than one value";
    return std::nullopt;
  }
  std::vector<std::vector<double>> x;
  for (const auto& c : configs) {
    x.emplace_back();
    for (const auto& f : features) x.back().push_back(f.encode(c.at(f.name)));
  }
  std::vector<FeatureRange> domain;
  for (const auto& f : features) domain.push_back(f.range);
  const auto effects = forest_main_effects(fit_forest(x, values, ForestOptions{}, seed), domain);
  double total = 0;
  if (effects) {
    for (double e : *effects) total += e;
  }
  if (!(total > 0)) {
    why = effects ? "no parameter alone changes the metric" : "the metric is the same in every result";
    return std::nullopt;
  }
  ParamImportance out;
  out.main_effects = std::min(1.0, total);
  for (std::size_t i = 0; i < features.size(); ++i) out.params.emplace_back(features[i].name, (*effects)[i] / total);
  std::stable_sort(out.params.begin(), out.params.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace hfta::search
