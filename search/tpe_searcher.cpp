#include <algorithm>
#include <cmath>

#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

constexpr double kGamma = 0.25;     // share of results counted as good (at least two)
constexpr int kCandidates = 24;     // draws from the good density per parameter
constexpr double kBandwidthFactor = 3;  // BOHB's: candidates are drawn this much wider
// BOHB's random fraction: this share of proposals is random search's, so that
// regions no good result is near are still explored.
constexpr double kRandomFraction = 1.0 / 3.0;

bool log_scale(const ParameterSpec& p) {
  return p.distribution == Distribution::kLogUniform ||
         p.distribution == Distribution::kIntLogUniform || p.log;
}

// The numeric range in the space TPE models it in (log space for log distributions).
std::pair<double, double> model_range(const ParameterSpec& p) {
  const bool integer = p.distribution == Distribution::kIntUniform ||
                       p.distribution == Distribution::kIntLogUniform;
  // Integers own the unit interval around them, so the ends are as likely as the middle.
  const double lo = integer ? p.min - 0.5 : p.min;
  const double hi = integer ? p.max + 0.5 : p.max;
  if (log_scale(p)) return {std::log(std::max(lo, p.min * 0.5)), std::log(hi)};
  return {lo, hi};
}

double to_model(const ParameterSpec& p, double x) { return log_scale(p) ? std::log(x) : x; }

ParamValue from_model(const ParameterSpec& p, double t) {
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

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A kernel density over [lo, hi], as BOHB's: a truncated Gaussian at each
// point, of the normal reference bandwidth (1.06 sd n^-1/5, at least a
// thousandth of the range). No uniform prior: with one, the few points of a
// budget that only survivors reach left both densities flat but for the
// prior, whose larger share in the good one made the ends of the range win
// the ratio, so TPE proposed whole brackets at the edges of the space.
struct Parzen {
  std::vector<double> points;
  double lo, hi, bandwidth;

  Parzen(std::vector<double> pts, double lo_, double hi_) : points(std::move(pts)), lo(lo_), hi(hi_) {
    const double n = static_cast<double>(points.size());
    double mean = 0, var = 0;
    for (double x : points) mean += x / n;
    for (double x : points) var += (x - mean) * (x - mean) / n;
    bandwidth = std::max(1.06 * std::sqrt(var) * std::pow(n, -0.2), (hi - lo) * 1e-3);
  }

  double density(double t) const {
    double sum = 0;
    for (double mu : points) {
      const double z = normal_cdf((hi - mu) / bandwidth) - normal_cdf((lo - mu) / bandwidth);
      const double d = (t - mu) / bandwidth;
      sum += std::exp(-0.5 * d * d) / (bandwidth * std::sqrt(2.0 * M_PI) * std::max(z, 1e-12));
    }
    return std::max(sum / static_cast<double>(points.size()), 1e-300);
  }

  // Near a point, at a wider bandwidth (BOHB's bandwidth factor): candidates
  // explore around the good results, never far from all of them.
  double draw(Rng& rng) const {
    const double mu = points[rng.below(points.size())];
    for (int attempt = 0; attempt < 64; ++attempt) {
      const double t = mu + kBandwidthFactor * bandwidth * rng.normal();
      if (t >= lo && t <= hi) return t;
    }
    return std::clamp(mu, lo, hi);
  }
};

bool same(const ParamValue& a, const ParamValue& b) {
  if (is_numeric(a) && is_numeric(b)) return as_double(a) == as_double(b);
  return a == b;
}

}  // namespace

TpeSearcher::TpeSearcher(SearchSpace space, std::uint64_t seed, Goal goal)
    : space_(std::move(space)), seed_(seed), goal_(goal) {}

std::size_t TpeSearcher::min_points() const { return space_.parameters().size() + 2; }

void TpeSearcher::observe(std::int64_t trial_id, const Config& config, double budget,
                          double metric) {
  if (std::isnan(metric) || std::isinf(metric)) return;  // diverged: nothing to learn from
  by_budget_[budget][trial_id] = {config, metric};
}

Config TpeSearcher::suggest(std::int64_t trial_id) {
  // BOHB's choice: the largest budget that already has enough results.
  const std::map<std::int64_t, Observation>* model = nullptr;
  for (auto it = by_budget_.rbegin(); it != by_budget_.rend(); ++it) {
    if (it->second.size() >= min_points()) {
      model = &it->second;
      break;
    }
  }
  if (!model) return space_.sample(seed_, trial_id);
  if (Rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string("tpe random")).uniform() < kRandomFraction) {
    return space_.sample(seed_, trial_id);
  }

  std::vector<const Observation*> ranked;
  for (const auto& [id, o] : *model) ranked.push_back(&o);  // by id: deterministic ties
  std::stable_sort(ranked.begin(), ranked.end(), [this](const auto* a, const auto* b) {
    return better(a->metric, b->metric, goal_);
  });
  Config config;
  for (const auto& p : space_.parameters()) {
    if (!SearchSpace::active(p, config)) continue;
    // Split among the results that have the parameter (a conditional one may
    // be in few): at least two good (BOHB: d + 1), so the good density has a
    // spread, and one bad; with fewer, propose() draws as random search.
    std::vector<const Config*> having;
    for (const auto* o : ranked) {
      if (o->config.count(p.name)) having.push_back(&o->config);
    }
    const auto n_good = static_cast<std::size_t>(std::max(2.0, std::ceil(kGamma * static_cast<double>(having.size()))));
    std::vector<const Config*> good, bad;
    if (having.size() > n_good) {
      good.assign(having.begin(), having.begin() + static_cast<std::ptrdiff_t>(n_good));
      bad.assign(having.begin() + static_cast<std::ptrdiff_t>(n_good), having.end());
    }
    Rng rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string(p.name) ^ hash_string("tpe"));
    config[p.name] = propose(p, good, bad, rng);
  }
  return config;
}

ParamValue TpeSearcher::propose(const ParameterSpec& p, const std::vector<const Config*>& good,
                                const std::vector<const Config*>& bad, Rng& rng) const {
  if (p.distribution == Distribution::kConst || good.empty() || bad.empty()) {
    return SearchSpace::draw(p, rng);
  }
  if (is_categorical(p.distribution)) {
    // Category weights: counts plus one, so unseen values keep a chance.
    auto weights = [&](const std::vector<const Config*>& group) {
      std::vector<double> w(p.values.size(), 1.0);
      for (const Config* c : group) {
        for (std::size_t i = 0; i < p.values.size(); ++i) {
          if (same(c->at(p.name), p.values[i])) w[i] += 1.0;
        }
      }
      return w;
    };
    const auto wg = weights(good), wb = weights(bad);
    double total_g = 0, total_b = 0;
    for (double w : wg) total_g += w;
    for (double w : wb) total_b += w;
    std::size_t best = 0;
    double best_score = -INFINITY;
    for (int c = 0; c < kCandidates; ++c) {
      double u = rng.uniform() * total_g;
      std::size_t i = 0;
      while (i + 1 < wg.size() && u >= wg[i]) u -= wg[i++];
      const double score = std::log(wg[i] / total_g) - std::log(wb[i] / total_b);
      if (score > best_score) {
        best_score = score;
        best = i;
      }
    }
    return p.values[best];
  }
  const auto [lo, hi] = model_range(p);
  auto points = [&](const std::vector<const Config*>& group) {
    std::vector<double> out;
    for (const Config* c : group) out.push_back(to_model(p, as_double(c->at(p.name))));
    return out;
  };
  const Parzen l(points(good), lo, hi), g(points(bad), lo, hi);
  double best_t = l.draw(rng);
  double best_score = std::log(l.density(best_t)) - std::log(g.density(best_t));
  for (int c = 1; c < kCandidates; ++c) {
    const double t = l.draw(rng);
    const double score = std::log(l.density(t)) - std::log(g.density(t));
    if (score > best_score) {
      best_score = score;
      best_t = t;
    }
  }
  return from_model(p, best_t);
}

}  // namespace hfta::search
