#include <algorithm>
#include <cmath>
#include <limits>

#include "hfta/search/param_scale.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

constexpr std::size_t kRandomCandidates = 192;  // drawn as random search draws
constexpr std::size_t kBest = 8;                // results that local candidates are drawn around
constexpr std::size_t kAround = 8;              // candidates around each of them
constexpr double kLocalStep = 0.1;              // their spread on the [0, 1] scale
constexpr std::size_t kConditioned = 256;       // latest results the posterior is conditioned on
constexpr std::size_t kFitted = 64;             // latest results the hyperparameters are fitted on

bool numeric_range(Distribution d) {
  return d == Distribution::kUniform || d == Distribution::kLogUniform || d == Distribution::kIntUniform ||
         d == Distribution::kIntLogUniform || d == Distribution::kQuantized;
}

double scaled(const ParameterSpec& p, const ParamValue& v) {
  const auto [lo, hi] = scaled_range(p);
  return std::clamp((to_scale(p, as_double(v)) - lo) / (hi - lo), 0.0, 1.0);
}

ParamValue unscaled(const ParameterSpec& p, double u) {
  const auto [lo, hi] = scaled_range(p);
  return from_scale(p, lo + std::clamp(u, 0.0, 1.0) * (hi - lo));
}

}  // namespace

std::vector<const ParameterSpec*> GpSearcher::modelled(const SearchSpace& space) {
  std::vector<const ParameterSpec*> out;
  for (const auto& p : space.parameters()) {
    const bool listed = p.distribution == Distribution::kChoice && p.values.size() > 1;
    if ((numeric_range(p.distribution) || listed) && p.branch < 0 && always_present({&p}, space.parameters())) {
      out.push_back(&p);
    }
  }
  return out;
}

GpSearcher::GpSearcher(SearchSpace space, std::uint64_t seed, Goal goal, bool lockstep)
    : space_(std::move(space)), seed_(seed), goal_(goal), lockstep_(lockstep) {
  modelled_ = modelled(space_);
}

std::vector<double> GpSearcher::encode(const Config& values) const {
  std::vector<double> x;
  for (const auto* p : modelled_) {
    const ParamValue& v = values.at(p->name);
    if (p->distribution == Distribution::kChoice) {
      for (const auto& option : p->values) x.push_back(same(option, v) ? 1.0 : 0.0);
    } else {
      x.push_back(scaled(*p, v));
    }
  }
  return x;
}

const GaussianProcess& GpSearcher::model(double budget, const std::map<std::int64_t, Result>& results) {
  std::vector<std::pair<std::int64_t, double>> key;
  for (const auto& [id, r] : results) key.push_back({id, r.value});
  const bool same_results = std::equal(key.begin(), key.end(), cached_.results.begin(), cached_.results.end(),
                                       [](const auto& a, const auto& b) {
                                         return a.first == b.first && (a.second == b.second ||
                                                                       (std::isnan(a.second) && std::isnan(b.second)));
                                       });
  if (cached_.gp && cached_.budget == budget && same_results) return *cached_.gp;
  // The latest results by trial id; a diverged one (or one outside the constraints) at the worst finite value.
  std::vector<std::int64_t> ids;
  for (auto it = results.rbegin(); it != results.rend() && ids.size() < kConditioned; ++it) ids.push_back(it->first);
  std::reverse(ids.begin(), ids.end());
  double worst = std::numeric_limits<double>::infinity();
  for (auto id : ids) {
    if (std::isfinite(results.at(id).value)) worst = std::min(worst, results.at(id).value);
  }
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (auto id : ids) {
    const Result& r = results.at(id);
    x.push_back(encode(r.values));
    y.push_back(std::isfinite(r.value) ? r.value : worst);
  }
  // Standardised, so the hyperparameters' ranges fit any metric.
  double mean = 0, var = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (double v : y) var += (v - mean) * (v - mean) / static_cast<double>(y.size());
  const double sd = var > 0 ? std::sqrt(var) : 1.0;
  for (double& v : y) v = (v - mean) / sd;
  const std::size_t fitted = std::min(kFitted, x.size());
  const auto h = GaussianProcess::fit({x.end() - static_cast<std::ptrdiff_t>(fitted), x.end()},
                                      {y.end() - static_cast<std::ptrdiff_t>(fitted), y.end()});
  cached_ = {budget, std::move(key), GaussianProcess(x, y, h), ids};
  return *cached_.gp;
}

std::map<std::int64_t, GpSearcher::Result> GpSearcher::at_budget(double budget) const {
  std::map<std::int64_t, Result> out = by_budget_.at(budget);
  if (!lockstep_) return out;
  for (auto it = by_budget_.begin(); it != by_budget_.end() && it->first < budget; ++it) {
    for (const auto& [id, r] : it->second) out.emplace(id, Result{r.values, std::numeric_limits<double>::quiet_NaN()});
  }
  return out;
}

Config GpSearcher::suggest(std::int64_t trial_id) {
  std::map<std::int64_t, Result> chosen;
  double budget = -1;
  for (auto it = by_budget_.rbegin(); it != by_budget_.rend() && budget < 0; ++it) {
    auto results = at_budget(it->first);
    const auto finite = std::count_if(results.begin(), results.end(),
                                      [](const auto& r) { return std::isfinite(r.second.value); });
    if (results.size() >= min_points() && finite >= 2) {
      chosen = std::move(results);
      budget = it->first;
    }
  }
  if (budget < 0 || modelled_.empty()) return space_.sample(seed_, trial_id);
  const std::map<std::int64_t, Result>* results = &chosen;
  const GaussianProcess& gp = model(budget, *results);

  // Candidates: random search's draws under the trial's own keys, and draws around the best results.
  const auto id = static_cast<std::uint64_t>(trial_id);
  std::vector<Config> candidates;
  const std::uint64_t candidate_seed = mix64(seed_ ^ hash_string("gp candidates") ^ mix64(id));
  for (std::size_t k = 0; k < kRandomCandidates; ++k) {
    const Config c = space_.sample(candidate_seed, static_cast<std::int64_t>(k));
    Config values;
    for (const auto* p : modelled_) values[p->name] = c.at(p->name);
    candidates.push_back(std::move(values));
  }
  std::vector<std::int64_t> best(cached_.ids);
  std::stable_sort(best.begin(), best.end(), [&](std::int64_t a, std::int64_t b) {
    const double va = results->at(a).value, vb = results->at(b).value;
    return std::isfinite(va) && (!std::isfinite(vb) || va > vb);
  });
  Rng local(seed_ ^ hash_string("gp around"), id);
  for (std::size_t b = 0; b < std::min(kBest, best.size()); ++b) {
    const Config& centre = results->at(best[b]).values;
    for (std::size_t k = 0; k < kAround; ++k) {
      Config values;
      for (const auto* p : modelled_) {
        if (p->distribution == Distribution::kChoice) {
          values[p->name] = local.uniform() < 0.8 ? centre.at(p->name) : p->values[local.below(p->values.size())];
        } else {
          // Reflected at the ends, so that no candidate piles up on a bound.
          double u = scaled(*p, centre.at(p->name)) + kLocalStep * local.normal();
          u = u < 0 ? -u : u > 1 ? 2 - u : u;
          values[p->name] = unscaled(*p, u);
        }
      }
      candidates.push_back(std::move(values));
    }
  }
  std::vector<std::vector<double>> x;
  for (const auto& c : candidates) x.push_back(encode(c));
  Rng normals(seed_ ^ hash_string("gp thompson"), id);
  std::vector<double> z(x.size());
  for (double& v : z) v = normals.normal();
  const auto f = gp.sample(x, z);
  const auto pick = static_cast<std::size_t>(std::max_element(f.begin(), f.end()) - f.begin());
  return space_.sample(seed_, trial_id, candidates[pick]);
}

void GpSearcher::observe(std::int64_t trial_id, const Config& config, const TrialResult& result) {
  Config values;
  for (const auto* p : modelled_) {
    if (!config.count(p->name)) return;  // (cannot happen: modelled parameters are in every trial)
    values[p->name] = config.at(p->name);
  }
  double value = goal_ == Goal::kMaximize ? result.metric : -result.metric;
  if (!std::isfinite(value) || result.violation > 0) value = std::numeric_limits<double>::quiet_NaN();
  by_budget_[result.budget][trial_id] = {std::move(values), value};
}

}  // namespace hfta::search
