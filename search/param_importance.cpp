#include "hfta/search/param_importance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "hfta/search/fanova.h"
#include "hfta/search/param_scale.h"
#include "hfta/search/random_forest.h"

namespace hfta::search {
namespace {

constexpr const char* kOneValue = "it takes one value";

// How one parameter becomes one feature.
struct Feature {
  std::string name;
  FeatureRange range;
  bool numeric = false;
  bool log = false;                 ///< numeric: judged in log space
  std::vector<ParamValue> values;  ///< listed: the values, value k owning [k, k + 1)

  double encode(const ParamValue& v) const {
    if (numeric) return log ? std::log(as_double(v)) : as_double(v);
    const auto at = std::find_if(values.begin(), values.end(), [&](const ParamValue& x) { return same(x, v); });
    if (at == values.end()) throw std::logic_error("parameter " + name + " holds " + to_string(v) + ", which it does not list");
    return static_cast<double>(at - values.begin()) + 0.5;
  }
};

// The feature of a name, or why it has none: numeric where every branch is a
// numeric range, listed where every branch lists its values.
std::optional<Feature> feature_of(const std::string& name, const std::vector<const ParameterSpec*>& specs,
                                  std::string& why) {
  Feature f{name, {}, !is_categorical(specs.front()->distribution), true, {}};
  for (const auto* p : specs) {
    if (is_categorical(p->distribution) == f.numeric) {
      why = "its branches mix listed values and ranges";
      return std::nullopt;
    }
    f.log = f.log && f.numeric && log_scale(*p);
  }
  if (f.numeric) {
    f.range = {INFINITY, -INFINITY};
    for (const auto* p : specs) {
      // A branch on the other scale is judged linearly too: its own range, not log space's.
      const ParameterSpec linear = [&] {
        ParameterSpec q = *p;
        if (!f.log && log_scale(q)) q.distribution = q.distribution == Distribution::kIntLogUniform ? Distribution::kIntUniform
                                                     : q.distribution == Distribution::kLogUniform ? Distribution::kUniform
                                                                                                   : q.distribution;
        if (!f.log) q.log = false;
        return q;
      }();
      const auto [lo, hi] = scaled_range(linear);
      f.range.lo = std::min(f.range.lo, lo);
      f.range.hi = std::max(f.range.hi, hi);
    }
    const bool one_value = std::all_of(specs.begin(), specs.end(), [&](const ParameterSpec* p) {
      return p->min == p->max && p->min == specs.front()->min;
    });
    if (one_value || !(f.range.hi > f.range.lo)) {
      why = kOneValue;
      return std::nullopt;
    }
    return f;
  }
  for (const auto* p : specs) {
    for (const auto& v : p->values) {
      if (std::none_of(f.values.begin(), f.values.end(), [&](const ParamValue& x) { return same(x, v); })) f.values.push_back(v);
    }
  }
  if (f.values.size() < 2) {
    why = kOneValue;
    return std::nullopt;
  }
  f.range = {0.0, static_cast<double>(f.values.size())};
  return f;
}

}  // namespace

std::optional<ParamImportance> param_importance(const std::vector<ParameterSpec>& space,
                                                const std::vector<Config>& configs, const std::vector<double>& values,
                                                std::uint64_t seed, std::string& why,
                                                std::vector<std::pair<std::string, std::string>>* left_out) {
  std::map<std::string, std::vector<const ParameterSpec*>> by_name;
  for (const auto& p : space) by_name[p.name].push_back(&p);
  std::vector<Feature> features;
  std::vector<std::pair<std::string, std::string>> out_of_it;
  for (const auto& [name, specs] : by_name) {
    // As Optuna's intersection search space: a parameter some results lack
    // (its condition did not hold there) is judged by its condition's.
    const bool everywhere = std::all_of(configs.begin(), configs.end(), [&](const Config& c) { return c.count(name) > 0; });
    std::string reason = "conditional: some results lack it";
    if (everywhere) {
      if (auto f = feature_of(name, specs, reason)) {
        features.push_back(std::move(*f));
        continue;
      }
      if (reason == kOneValue) continue;  // not tuned: nothing to judge, nothing left out
    }
    out_of_it.emplace_back(name, reason);
  }
  if (left_out) *left_out = out_of_it;
  if (features.empty()) {
    why = out_of_it.empty() ? "no parameter takes more than one value" : "no parameter can be judged";
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
    const bool flat = std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
    why = effects ? "no parameter alone changes the metric"
          : flat  ? "the metric is the same in every result"
                  : "no parameter judged takes more than one value in these results";
    return std::nullopt;
  }
  ParamImportance out;
  out.main_effects = std::min(1.0, total);
  out.left_out = std::move(out_of_it);
  for (std::size_t i = 0; i < features.size(); ++i) out.params.emplace_back(features[i].name, (*effects)[i] / total);
  std::stable_sort(out.params.begin(), out.params.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace hfta::search
