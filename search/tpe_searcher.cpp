#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "hfta/search/param_scale.h"
#include "hfta/search/pareto.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

constexpr double kGamma = 0.25;     // share of results counted as good (at least two)
constexpr int kCandidates = 24;     // candidates per proposal, each around a good result
constexpr double kBandwidthFactor = 3;  // BOHB's: candidates are drawn this much wider
// BOHB's random fraction: this share of proposals is random search's, so that
// regions no good result is near are still explored.
constexpr double kRandomFraction = 1.0 / 3.0;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// The normal reference bandwidth of a kernel density of `points` over [lo,
// hi] in one of `dims` parameters, as BOHB's (statsmodels' normal_reference):
// 1.06 sd n^(-1/(4 + dims)), at least a thousandth of the range. Its
// kernels are truncated Gaussians, with no uniform prior: with one, the few
// points of a budget that only survivors reach left both densities flat but
// for the prior, whose larger share in the good one made the ends of the range
// win the ratio, so TPE proposed whole brackets at the edges of the space.
double bandwidth(const std::vector<double>& points, double lo, double hi, std::size_t dims) {
  const double n = static_cast<double>(points.size());
  double mean = 0, var = 0;
  for (double x : points) mean += x / n;
  for (double x : points) var += (x - mean) * (x - mean) / n;
  return std::max(1.06 * std::sqrt(var) * std::pow(n, -1.0 / (4.0 + static_cast<double>(dims))), (hi - lo) * 1e-3);
}


// A categorical parameter's kernel: its own value this likely, the others sharing the rest.
constexpr double kKeep = 0.8;

// One parameter's kernels in the good and the bad group: for a numeric one a
// truncated Gaussian of the group's bandwidth(), in model space; for a categorical one the kernel above. A parameter that
// fewer than two good and one bad results have (a conditional one) is not
// modelled: it is drawn as random search draws it.
struct Dimension {
  const ParameterSpec* p = nullptr;
  bool modelled = false;
  double lo = 0, hi = 0, good_bandwidth = 0, bad_bandwidth = 0;

  Dimension(const ParameterSpec& spec, const std::vector<const Config*>& good, const std::vector<const Config*>& bad,
            std::size_t dims)
      : p(&spec) {
    auto values = [&](const std::vector<const Config*>& group) {
      std::vector<double> out;
      for (const Config* c : group) {
        if (holds(*c)) out.push_back(is_categorical(p->distribution) ? 0.0 : to_scale(*p, as_double(c->at(p->name))));
      }
      return out;
    };
    const auto g = values(good), b = values(bad);
    modelled = p->distribution != Distribution::kConst && g.size() >= 2 && !b.empty() &&
               !(is_categorical(p->distribution) && p->values.size() < 2);
    if (!modelled || is_categorical(p->distribution)) return;
    std::tie(lo, hi) = scaled_range(*p);
    if (!(hi > lo)) {  // min == max: one value, nothing to model
      modelled = false;
      return;
    }
    good_bandwidth = bandwidth(g, lo, hi, dims);
    bad_bandwidth = bandwidth(b, lo, hi, dims);
  }

  // Whether a result has this parameter from this spec: a branch (lr under
  // sgd) models only the results its condition holds in, not another branch's.
  bool holds(const Config& c) const { return c.count(p->name) && (p->branch < 0 || SearchSpace::active(*p, c)); }

  // The log of the kernel, at `point` (a result) and of the group's bandwidth,
  // of the value x; a result without the parameter counts as uniform.
  double log_kernel(const ParamValue& x, const Config& point, double width) const {
    if (is_categorical(p->distribution)) {
      const double m = static_cast<double>(p->values.size());
      if (!holds(point)) return -std::log(m);
      return std::log(same(x, point.at(p->name)) ? kKeep : (1 - kKeep) / (m - 1));
    }
    if (!holds(point)) return -std::log(hi - lo);
    const double mu = to_scale(*p, as_double(point.at(p->name)));
    const double d = (to_scale(*p, as_double(x)) - mu) / width;
    const double mass = normal_cdf((hi - mu) / width) - normal_cdf((lo - mu) / width);
    return -0.5 * d * d - std::log(width * std::sqrt(2.0 * M_PI) * std::max(mass, 1e-12));
  }

  // Near a good result's value, at BOHB's wider bandwidth (a categorical one:
  // its value, or now and then any).
  ParamValue draw_near(const ParamValue& centre, Rng& rng) const {
    if (is_categorical(p->distribution)) {
      if (rng.uniform() < kKeep) return centre;
      return p->values[rng.below(p->values.size())];
    }
    const double mu = to_scale(*p, as_double(centre));
    for (int attempt = 0; attempt < 64; ++attempt) {
      const double t = mu + kBandwidthFactor * good_bandwidth * rng.normal();
      if (t >= lo && t <= hi) return from_scale(*p, t);
    }
    return from_scale(*p, std::clamp(mu, lo, hi));
  }
};

// The log of a group's density at `candidate`: the mean over its results of
// the product of their kernels in every modelled parameter (BOHB's
// multivariate KDE), summed as a log-sum-exp.
double log_density(const Config& candidate, const std::vector<const Config*>& group,
                   const std::vector<Dimension>& dims, bool good) {
  std::vector<double> terms;
  for (const Config* point : group) {
    double sum = 0;
    for (const auto& d : dims) {
      if (!d.modelled || !d.holds(candidate)) continue;
      sum += d.log_kernel(candidate.at(d.p->name), *point, good ? d.good_bandwidth : d.bad_bandwidth);
    }
    terms.push_back(sum);
  }
  const double top = *std::max_element(terms.begin(), terms.end());
  double total = 0;
  for (double t : terms) total += std::exp(t - top);
  return top + std::log(total / static_cast<double>(terms.size()));
}

}  // namespace

TpeSearcher::TpeSearcher(SearchSpace space, std::uint64_t seed, Goals goals)
    : space_(std::move(space)), seed_(seed), goals_(std::move(goals)) {}

std::size_t TpeSearcher::min_points() const { return space_.parameters().size() + 2; }

void TpeSearcher::observe(std::int64_t trial_id, const Config& config, double budget,
                          double metric) {
  // A diverged result (NaN or infinite) counts as the worst there is, as in
  // BOHB: its region belongs with the bad ones, and it counts towards the
  // results a model needs.
  if (!std::isfinite(metric)) metric = goals_.metric == Goal::kMaximize ? -INFINITY : INFINITY;
  by_budget_[budget][trial_id] = {config, metric, {}};
}

void TpeSearcher::observe(std::int64_t trial_id, const Config& config, const TrialResult& result) {
  if (goals_.several()) {
    by_budget_[result.budget][trial_id] = {config, result.objectives.at(0), result.objectives, result.violation};
  } else {
    observe(trial_id, config, result.budget, result.metric);
    by_budget_[result.budget][trial_id].violation = result.violation;
  }
}

bool TpeSearcher::Observation::finite() const {
  return std::isfinite(metric) &&
         std::all_of(objectives.begin(), objectives.end(), [](double v) { return std::isfinite(v); });
}

std::vector<const TpeSearcher::Observation*> TpeSearcher::ranked(
    const std::map<std::int64_t, Observation>& results) const {
  // Those that meet the constraints by the goals, then the others by the
  // least violation, then the diverged (non-finite).
  std::vector<const Observation*> out, breaking, diverged;
  for (const auto& [id, o] : results) {  // by id: deterministic ties
    (!o.finite() ? diverged : o.violation != 0 ? breaking : out).push_back(&o);
  }
  std::stable_sort(breaking.begin(), breaking.end(),
                   [](const auto* a, const auto* b) { return a->violation < b->violation; });
  if (!goals_.several()) {
    std::stable_sort(out.begin(), out.end(),
                     [this](const auto* a, const auto* b) { return better(a->metric, b->metric, goals_.metric); });
  } else {
    std::vector<std::vector<double>> points;
    for (const auto* o : out) points.push_back(o->objectives);
    std::vector<const Observation*> ordered;
    for (std::size_t i : pareto_order(points, goals_.objectives)) ordered.push_back(out[i]);
    out = std::move(ordered);
  }
  out.insert(out.end(), breaking.begin(), breaking.end());
  out.insert(out.end(), diverged.begin(), diverged.end());
  return out;
}

Config TpeSearcher::suggest(std::int64_t trial_id) {
  // BOHB's choice: the largest budget that already has enough results, two
  // of them finite (a good group of diverged results models nothing).
  const auto finite = [](const std::map<std::int64_t, Observation>& results) {
    return std::count_if(results.begin(), results.end(), [](const auto& r) { return r.second.finite(); });
  };
  const std::map<std::int64_t, Observation>* model = nullptr;
  for (auto it = by_budget_.rbegin(); it != by_budget_.rend(); ++it) {
    if (it->second.size() >= min_points() && finite(it->second) >= 2) {
      model = &it->second;
      break;
    }
  }
  if (!model) return space_.sample(seed_, trial_id);
  if (Rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string("tpe random")).uniform() < kRandomFraction) {
    return space_.sample(seed_, trial_id);
  }

  const std::vector<const Observation*> ranked = this->ranked(*model);
  // The best quarter (at least two) of the results against the rest; a
  // diverged result is never good.
  const auto n_good = std::min(
      static_cast<std::size_t>(finite(*model)),
      static_cast<std::size_t>(std::max(2.0, std::ceil(kGamma * static_cast<double>(ranked.size())))));
  std::vector<const Config*> good, bad;
  for (std::size_t i = 0; i < ranked.size(); ++i) (i < n_good ? good : bad).push_back(&ranked[i]->config);
  // The KDE's dimensions, as BOHB's bandwidth counts them: every parameter but a const one.
  const auto varying = static_cast<std::size_t>(
      std::count_if(space_.parameters().begin(), space_.parameters().end(),
                    [](const ParameterSpec& p) { return p.distribution != Distribution::kConst; }));
  std::vector<Dimension> dims;
  for (const auto& p : space_.parameters()) dims.emplace_back(p, good, bad, varying);

  // BOHB's proposal: candidates each drawn around one good result in every
  // parameter at once, so that they keep what made it good together (one
  // parameter at a time paired one result's large learning rate with
  // another's large momentum, and diverged), and the best good/bad density
  // ratio wins.
  Rng rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string("tpe"));
  Config best;
  double best_score = -INFINITY;
  for (int c = 0; c < kCandidates; ++c) {
    const Config& centre = *good[rng.below(good.size())];
    Config candidate;
    for (const auto& d : dims) {
      if (!SearchSpace::active(*d.p, candidate)) continue;
      // A grid's values are the trial's in the cycle: TPE proposes the rest around them.
      candidate[d.p->name] = d.p->distribution == Distribution::kGrid ? space_.cycled(*d.p, trial_id)
                             : d.modelled && d.holds(centre) ? d.draw_near(centre.at(d.p->name), rng)
                                                                     : SearchSpace::draw(*d.p, rng);
    }
    const double score = log_density(candidate, good, dims, true) - log_density(candidate, bad, dims, false);
    if (score > best_score) best_score = score, best = std::move(candidate);
  }
  return best_score > -INFINITY ? best : space_.sample(seed_, trial_id);  // (no finite score: as random search)
}

}  // namespace hfta::search
