#include "hfta/search/pbt_explore.h"

#include <algorithm>
#include <cmath>

namespace hfta::search {
namespace {

ParamValue perturbed(const ParameterSpec& p, const ParamValue& value, double factor, Rng& rng) {
  switch (p.distribution) {
    case Distribution::kChoice:
    case Distribution::kGrid: {
      const auto it = std::find(p.values.begin(), p.values.end(), value);
      if (it == p.values.end() || p.values.size() < 2) return value;
      const auto at = static_cast<std::int64_t>(it - p.values.begin());
      const std::int64_t next = std::clamp<std::int64_t>(at + (rng.below(2) ? 1 : -1), 0,
                                                         static_cast<std::int64_t>(p.values.size()) - 1);
      return p.values[static_cast<std::size_t>(next)];
    }
    case Distribution::kUniform:
    case Distribution::kLogUniform: return std::clamp(as_double(value) * factor, p.min, p.max);
    case Distribution::kIntUniform:
    case Distribution::kIntLogUniform: {
      const auto x = static_cast<std::int64_t>(std::llround(as_double(value)));
      std::int64_t y = std::llround(static_cast<double>(x) * factor);
      if (y == x && factor != 1) y += factor > 1 ? 1 : -1;  // 2 * 1.2 is still 2
      return std::clamp(y, static_cast<std::int64_t>(std::ceil(p.min)), static_cast<std::int64_t>(std::floor(p.max)));
    }
    case Distribution::kQuantized: {
      const double x = as_double(value);
      ParamValue y = quantize(x * factor, p);
      if (as_double(y) == x && factor != 1) y = quantize(x + (factor > 1 ? p.q : -p.q), p);
      return y;
    }
    case Distribution::kConst: break;
  }
  return value;
}

}  // namespace

Config explore(const Config& parent, const SearchSpace& space, const std::set<std::string>& mutable_names,
               const Perturbation& perturbation, std::uint64_t seed, std::int64_t child) {
  Config out = parent;
  for (const auto& p : space.parameters()) {
    const auto it = out.find(p.name);
    if (!mutable_names.count(p.name) || it == out.end() || p.distribution == Distribution::kConst ||
        !SearchSpace::active(p, parent)) {
      continue;
    }
    Rng rng(seed, static_cast<std::uint64_t>(child), hash_string("pbt explore " + p.name));
    if (rng.uniform() < perturbation.resample_probability) {
      it->second = SearchSpace::draw(p, rng);
      continue;
    }
    const double factor =
        perturbation.factors.empty() ? 1.0 : perturbation.factors[rng.below(perturbation.factors.size())];
    it->second = perturbed(p, it->second, factor, rng);
  }
  return out;
}

}  // namespace hfta::search
