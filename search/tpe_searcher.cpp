#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "hfta/search/param_scale.h"
#include "hfta/search/parzen_estimator.h"
#include "hfta/search/pareto.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

constexpr int kCandidates = 24;  // Optuna's n_ei_candidates

// Whether a parameter has more than one value to choose from.
bool varies(const ParameterSpec& p) {
  if (p.distribution == Distribution::kConst) return false;
  if (is_categorical(p.distribution)) return p.values.size() >= 2;
  const auto [lo, hi] = scaled_range(p);
  return hi > lo;
}

}  // namespace

TpeSearcher::TpeSearcher(SearchSpace space, std::uint64_t seed, Goals goals, bool multivariate)
    : space_(std::move(space)), seed_(seed), goals_(std::move(goals)), multivariate_(multivariate) {}

// BOHB's d + 2, d the parameters that take more than one value (a constant
// is no dimension of the model).
std::size_t TpeSearcher::min_points() const {
  return static_cast<std::size_t>(std::count_if(space_.parameters().begin(), space_.parameters().end(),
                                                [](const ParameterSpec& p) { return varies(p); })) +
         2;
}

void TpeSearcher::observe(std::int64_t trial_id, const Config& config, double budget,
                          double metric) {
  // A diverged result (NaN or infinite) counts as the worst there is, as in
  // BOHB: its region belongs with the bad ones, and it counts towards the
  // results a model needs.
  if (!std::isfinite(metric)) metric = goals_.metric == Goal::kMaximize ? -INFINITY : INFINITY;
  by_budget_[budget][trial_id] = {config, metric, {}};
  unmeasured_.erase(trial_id);
}

void TpeSearcher::observe(std::int64_t trial_id, const Config& config, const TrialResult& result) {
  if (goals_.several()) {
    by_budget_[result.budget][trial_id] = {config, result.objectives.at(0), result.objectives, result.violation};
    unmeasured_.erase(trial_id);
  } else {
    observe(trial_id, config, result.budget, result.metric);
    by_budget_[result.budget][trial_id].violation = result.violation;
  }
}

void TpeSearcher::proposed(std::int64_t trial_id, const Config& config) {
  for (const auto& [budget, results] : by_budget_) {
    if (results.count(trial_id)) return;  // measured: no liar
  }
  unmeasured_[trial_id] = config;
}

bool TpeSearcher::Observation::finite() const {
  return std::isfinite(metric) &&
         std::all_of(objectives.begin(), objectives.end(), [](double v) { return std::isfinite(v); });
}

std::vector<TpeSearcher::Ranked> TpeSearcher::ranked() const {
  // Each trial's furthest result (by_budget_ is in budget order; ids in order within one).
  std::map<std::int64_t, Ranked> furthest;
  for (const auto& [budget, results] : by_budget_) {
    for (const auto& [id, o] : results) furthest[id] = {id, budget, &o};
  }
  // Those that meet the constraints, further budgets first (Optuna's
  // ranking of a pruned trial by its last step: one that a rung passed over
  // is worse than those it promoted, whatever its metric), then by the goals
  // at that budget; then the others by the least violation; then the
  // diverged (non-finite).
  std::map<double, std::vector<Ranked>, std::greater<>> meeting;
  std::vector<Ranked> breaking, diverged;
  for (const auto& [id, r] : furthest) {
    if (!r.result->finite()) {
      diverged.push_back(r);
    } else if (r.result->violation != 0) {
      breaking.push_back(r);
    } else {
      meeting[r.budget].push_back(r);
    }
  }
  std::stable_sort(breaking.begin(), breaking.end(),
                   [](const Ranked& a, const Ranked& b) { return a.result->violation < b.result->violation; });
  std::vector<Ranked> out;
  for (auto& [budget, group] : meeting) {
    if (!goals_.several()) {
      std::stable_sort(group.begin(), group.end(), [this](const Ranked& a, const Ranked& b) {
        return better(a.result->metric, b.result->metric, goals_.metric);
      });
      out.insert(out.end(), group.begin(), group.end());
    } else {
      std::vector<std::vector<double>> points;
      for (const auto& r : group) points.push_back(r.result->objectives);
      for (std::size_t i : pareto_order(points, goals_.objectives)) out.push_back(group[i]);
    }
  }
  out.insert(out.end(), breaking.begin(), breaking.end());
  out.insert(out.end(), diverged.begin(), diverged.end());
  return out;
}

Config TpeSearcher::suggest(std::int64_t trial_id) {
  const Config config = propose(trial_id);
  proposed(trial_id, config);
  return config;
}

Config TpeSearcher::propose(std::int64_t trial_id) const {
  // Until enough trials have results, two of them finite (a good group of
  // diverged results models nothing), random search's.
  const std::vector<Ranked> ranked = this->ranked();
  const auto finite = std::count_if(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.result->finite(); });
  if (ranked.size() < min_points() || finite < 2) return space_.sample(seed_, trial_id);

  // The good group: the best tenth (at least one, at most 25) of the
  // trials (Optuna's gamma); a diverged one is never good. The bad group:
  // the rest, and the wave-mates proposed before this trial, as if they
  // were the worst (Optuna's constant liar).
  const auto n_good = std::min(static_cast<std::size_t>(finite),
                               static_cast<std::size_t>(std::clamp(std::ceil(0.1 * static_cast<double>(ranked.size())), 1.0, 25.0)));
  std::vector<std::pair<std::int64_t, const Config*>> good, bad;
  for (std::size_t i = 0; i < ranked.size(); ++i) (i < n_good ? good : bad).push_back({ranked[i].id, &ranked[i].result->config});
  for (const auto& [id, config] : unmeasured_) {
    if (id < trial_id) bad.push_back({id, &config});
  }
  // Oldest first, as the age weights count them.
  std::sort(good.begin(), good.end());
  std::sort(bad.begin(), bad.end());

  const auto values = [](const ParameterSpec& p, const std::vector<std::pair<std::int64_t, const Config*>>& group) {
    std::vector<ParamValue> out;
    for (const auto& [id, c] : group) {
      if (c->count(p.name) && (p.branch < 0 || SearchSpace::active(p, *c))) out.push_back(c->at(p.name));
    }
    return out;
  };
  // Multivariate: the parameters every trial has, together, so that a
  // proposal keeps what made one good result good (its large learning rate
  // with its small momentum).
  Config candidate;
  std::vector<const ParameterSpec*> joint;
  if (multivariate_) {
    for (const auto& p : space_.parameters()) {
      if (p.when.empty() && p.distribution != Distribution::kGrid && varies(p) && values(p, good).size() == good.size() &&
          values(p, bad).size() == bad.size()) {
        joint.push_back(&p);
      }
    }
  }
  if (!joint.empty()) {
    std::vector<ParzenEstimator> l, b;
    for (const auto* p : joint) {
      l.emplace_back(*p, values(*p, good), ParzenEstimator::joint_width(good.size(), joint.size()));
      b.emplace_back(*p, values(*p, bad), ParzenEstimator::joint_width(bad.size(), joint.size()));
    }
    Rng rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string("tpe joint"));
    double best = -INFINITY;
    for (int c = 0; c < kCandidates; ++c) {
      const std::vector<ParamValue> x = joint_sample(l, rng);
      const double score = joint_log_pdf(l, x) - joint_log_pdf(b, x);
      if (c == 0 || score > best) {
        best = score;
        for (std::size_t j = 0; j < joint.size(); ++j) candidate[joint[j]->name] = x[j];
      }
    }
  }

  // The others each on its own (Optuna's default, univariate TPE), with its
  // own random stream; a branch's parameter (lr under sgd) from the results
  // its condition holds in, not another branch's.
  for (const auto& p : space_.parameters()) {
    if (candidate.count(p.name) || !SearchSpace::active(p, candidate)) continue;
    Rng rng(seed_, static_cast<std::uint64_t>(trial_id), hash_string("tpe " + p.name));
    if (p.distribution == Distribution::kGrid) {
      candidate[p.name] = space_.cycled(p, trial_id);
      continue;
    }
    const auto g = values(p, good);
    if (g.empty() || !varies(p)) {
      candidate[p.name] = SearchSpace::draw(p, rng);
      continue;
    }
    const ParzenEstimator l(p, g), b(p, values(p, bad));
    double best = -INFINITY;
    for (int c = 0; c < kCandidates; ++c) {
      ParamValue x = l.sample(rng);
      const double score = l.log_pdf(x) - b.log_pdf(x);
      if (c == 0 || score > best) best = score, candidate[p.name] = std::move(x);
    }
  }
  return candidate;
}

}  // namespace hfta::search
