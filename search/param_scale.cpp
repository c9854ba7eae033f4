#include "hfta/search/param_scale.h"

#include <algorithm>
#include <cmath>

#include "hfta/search/search_space.h"

namespace hfta::search {

bool log_scale(const ParameterSpec& p) {
  return p.distribution == Distribution::kLogUniform || p.distribution == Distribution::kIntLogUniform || p.log;
}

std::pair<double, double> scaled_range(const ParameterSpec& p) {
  const bool integer = p.distribution == Distribution::kIntUniform || p.distribution == Distribution::kIntLogUniform;
  const double half = integer ? 0.5 : p.distribution == Distribution::kQuantized && !p.log ? p.q / 2 : 0.0;
  const double lo = p.min - half;
  const double hi = half > 0 && !integer ? p.min + quantized_steps(p) * p.q + half : p.max + half;
  if (log_scale(p)) return {std::log(std::max(lo, p.min * 0.5)), std::log(hi)};
  return {lo, hi};
}

double to_scale(const ParameterSpec& p, double x) { return log_scale(p) ? std::log(x) : x; }

ParamValue from_scale(const ParameterSpec& p, double t) {
  const double x = log_scale(p) ? std::exp(t) : t;
  switch (p.distribution) {
    case Distribution::kIntUniform:
    case Distribution::kIntLogUniform:
      return std::clamp<std::int64_t>(std::llround(x), static_cast<std::int64_t>(p.min),
                                      static_cast<std::int64_t>(p.max));
    case Distribution::kQuantized: return quantize(std::clamp(x, p.min, p.max), p);
    default: return std::clamp(x, p.min, p.max);
  }
}

}  // namespace hfta::search
