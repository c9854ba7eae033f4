#include "hfta/search/parameter_spec.h"

#include <algorithm>
#include <array>
#include <utility>

namespace hfta::search {
namespace {

constexpr std::array<std::pair<Distribution, const char*>, 8> kNames{{
    {Distribution::kUniform, "uniform"},
    {Distribution::kLogUniform, "log_uniform"},
    {Distribution::kIntUniform, "int_uniform"},
    {Distribution::kIntLogUniform, "int_log_uniform"},
    {Distribution::kQuantized, "quantized"},
    {Distribution::kChoice, "choice"},
    {Distribution::kConst, "const"},
    {Distribution::kGrid, "grid"},
}};

}  // namespace

const char* distribution_name(Distribution d) {
  for (const auto& [dist, name] : kNames) {
    if (dist == d) return name;
  }
  return "?";
}

std::optional<Distribution> distribution_from_name(const std::string& name) {
  for (const auto& [dist, n] : kNames) {
    if (name == n) return dist;
  }
  return std::nullopt;
}

std::vector<std::string> distribution_names() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) names.emplace_back(entry.second);
  return names;
}

bool is_categorical(Distribution d) {
  return d == Distribution::kChoice || d == Distribution::kConst || d == Distribution::kGrid;
}

bool ParameterSpec::operator==(const ParameterSpec& o) const {
  return name == o.name && distribution == o.distribution && min == o.min && max == o.max &&
         q == o.q && log == o.log && values == o.values && probabilities == o.probabilities && fuse == o.fuse &&
         when == o.when && branch == o.branch;
}

bool always_present(const std::vector<const ParameterSpec*>& specs, const std::vector<ParameterSpec>& all,
                    const std::vector<ParamValue>* limits) {
  if (specs.empty()) return false;
  if (std::any_of(specs.begin(), specs.end(), [](const ParameterSpec* s) { return s->when.empty(); })) return true;
  const std::string& on = specs.front()->when.front().parameter;
  std::vector<ParamValue> covered;
  for (const ParameterSpec* s : specs) {
    if (s->when.size() != 1 || s->when.front().parameter != on) return false;
    covered.insert(covered.end(), s->when.front().values.begin(), s->when.front().values.end());
  }
  const auto p = std::find_if(all.begin(), all.end(), [&](const ParameterSpec& x) { return x.name == on; });
  if (p == all.end() || !p->when.empty() || p->branch >= 0 || !is_categorical(p->distribution)) return false;
  const std::vector<ParamValue>& takes = limits ? *limits : p->values;
  return std::all_of(takes.begin(), takes.end(), [&](const ParamValue& v) {
    return std::find(covered.begin(), covered.end(), v) != covered.end();
  });
}

}  // namespace hfta::search
