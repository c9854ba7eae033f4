#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "hfta/search/param_scale.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

constexpr double kSigma0 = 1.0 / 6;  // Optuna's min(range) / 6 on ranges scaled to [0, 1]

bool numeric_range(Distribution d) {
  return d == Distribution::kUniform || d == Distribution::kLogUniform || d == Distribution::kIntUniform ||
         d == Distribution::kIntLogUniform || d == Distribution::kQuantized;
}

}  // namespace

std::vector<const ParameterSpec*> CmaEsSearcher::dimensions(const SearchSpace& space) {
  std::vector<const ParameterSpec*> out;
  for (const auto& p : space.parameters()) {
    // (A `when` that every trial meets, on a constant say, leaves it in every trial.)
    if (numeric_range(p.distribution) && p.branch < 0 && always_present({&p}, space.parameters())) out.push_back(&p);
  }
  return out;
}

std::size_t CmaEsSearcher::default_population(const SearchSpace& space) {
  return CmaEs::default_population(dimensions(space).size());
}

CmaEsSearcher::CmaEsSearcher(SearchSpace space, std::uint64_t seed, Goal goal, std::size_t population,
                             std::int64_t first)
    : space_(std::move(space)), seed_(seed), goal_(goal), population_(population), first_(first) {
  dims_ = dimensions(space_);
  if (dims_.empty()) throw std::invalid_argument("CMA-ES needs a numeric range parameter that every trial has");
  if (population_ < 4) throw std::invalid_argument("CMA-ES needs a population of at least 4");
}

std::vector<double> CmaEsSearcher::scaled(const Config& config) const {
  std::vector<double> x;
  for (const auto* p : dims_) {
    const auto [lo, hi] = scaled_range(*p);
    x.push_back(std::clamp((to_scale(*p, as_double(config.at(p->name))) - lo) / (hi - lo), 0.0, 1.0));
  }
  return x;
}

std::vector<double> CmaEsSearcher::draw(std::int64_t trial_id) const {
  const std::size_t n = dims_.size();
  Rng rng(mix64(seed_ ^ hash_string("cma-es")), static_cast<std::uint64_t>(trial_id));
  std::vector<double> x;
  for (std::size_t attempt = 0; attempt <= 10 * n; ++attempt) {
    std::vector<double> z(n);
    for (double& v : z) v = rng.normal();
    x = es_->sample(z);
    if (std::all_of(x.begin(), x.end(), [](double v) { return v >= 0 && v <= 1; })) return x;
  }
  for (double& v : x) v = std::clamp(v, 0.0, 1.0);
  return x;
}

void CmaEsSearcher::advance_to(std::int64_t generation) {
  if (!es_) {
    // The best point to evaluate or earlier result (negative ids: warm_start.h), where there are some, else the centre.
    std::vector<double> mean(dims_.size(), 0.5);
    const Result* best = nullptr;
    // (Further budgets first, as TPE ranks: an earlier sweep's trials reached different ones.)
    for (const auto& [id, r] : first_results_) {
      if (id >= first_) break;
      if (!std::isfinite(r.rank_value)) continue;
      if (!best || std::make_tuple(-r.budget, r.violation, r.rank_value) <
                       std::make_tuple(-best->budget, best->violation, best->rank_value)) {
        best = &r;
      }
    }
    if (best) mean = best->x;
    es_.emplace(mean, kSigma0, population_);
  }
  for (; passed_ < generation; ++passed_) {
    const std::int64_t begin = first_ + passed_ * static_cast<std::int64_t>(population_);
    // Ranked by (violation, value); a trial without a finite result after every one with.
    std::vector<std::pair<std::vector<double>, std::pair<double, double>>> members;
    std::size_t measured = 0;
    for (std::int64_t id = begin; id < begin + static_cast<std::int64_t>(population_); ++id) {
      auto it = first_results_.find(id);
      const bool known = it != first_results_.end() && std::isfinite(it->second.rank_value);
      const double inf = std::numeric_limits<double>::infinity();
      measured += known;
      members.push_back({scaled(config_at(id, draw(id))),
                         known ? std::make_pair(it->second.violation, it->second.rank_value) : std::make_pair(inf, inf)});
    }
    // The mean moves to the best half: with fewer measured, part of it would go
    // to trials ranked by their ids alone, so the Gaussian stays as it was.
    if (measured < population_ / 2) continue;
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<std::pair<std::vector<double>, double>> told;
    for (std::size_t k = 0; k < members.size(); ++k) told.push_back({members[k].first, static_cast<double>(k)});
    es_->tell(std::move(told));
  }
}

Config CmaEsSearcher::suggest(std::int64_t trial_id) {
  if (trial_id < first_) return space_.sample(seed_, trial_id);
  advance_to((trial_id - first_) / static_cast<std::int64_t>(population_));
  return config_at(trial_id, draw(trial_id));
}

Config CmaEsSearcher::config_at(std::int64_t trial_id, const std::vector<double>& x) const {
  Config fixed;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    const auto [lo, hi] = scaled_range(*dims_[i]);
    fixed[dims_[i]->name] = from_scale(*dims_[i], lo + x[i] * (hi - lo));
  }
  return space_.sample(seed_, trial_id, fixed);
}

void CmaEsSearcher::observe(std::int64_t trial_id, const Config& config, const TrialResult& result) {
  auto it = first_results_.find(trial_id);
  // A generation's trial is ranked by its first result; an earlier sweep's
  // (warm_start.h: ids below 0) by its furthest, as the best to start at.
  if (it != first_results_.end() && (trial_id < 0) != (it->second.budget <= result.budget)) return;
  const double value = goal_ == Goal::kMaximize ? -result.metric : result.metric;
  first_results_[trial_id] = {result.budget, std::isfinite(value) ? value : std::numeric_limits<double>::infinity(),
                              result.violation, scaled(config)};
}

}  // namespace hfta::search
