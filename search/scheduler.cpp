#include "hfta/search/scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hfta/search/pareto.h"

namespace hfta::search {

std::int64_t wave_end(std::int64_t n, std::int64_t waves, std::int64_t k) {
  if (waves <= 1 || k + 1 >= waves) return n;
  return (n * (k + 1) + waves - 1) / waves;
}

Waves Waves::sized(std::int64_t lead, std::int64_t size) {
  if (size < 1 || lead < 0) throw std::invalid_argument("waves of a size need a positive size");
  Waves w;
  w.lead = lead;
  w.size = size;
  return w;
}

std::int64_t Waves::among(std::int64_t n) const {
  if (size == 0) return std::max<std::int64_t>(1, std::min(count, n));
  const std::int64_t after = std::max<std::int64_t>(0, n - lead);
  return std::max<std::int64_t>(1, (lead > 0 ? 1 : 0) + (after + size - 1) / size);
}

std::int64_t Waves::end(std::int64_t n, std::int64_t k) const {
  if (k + 1 >= among(n)) return n;
  if (size == 0) return wave_end(n, count, k);
  return std::min(n, lead > 0 ? lead + k * size : (k + 1) * size);
}

std::vector<double> lockstep_budgets(std::int64_t min_budget, std::int64_t max_budget) {
  std::vector<double> out;
  for (std::int64_t b = min_budget; b < max_budget; b += min_budget) out.push_back(static_cast<double>(b));
  out.push_back(static_cast<double>(max_budget));
  return out;
}

RungJob lockstep_job(const std::vector<double>& budgets, std::size_t step, const std::vector<std::int64_t>& trials) {
  RungJob job{0, static_cast<int>(step), budgets[step], {}};
  const double from = step ? budgets[step - 1] : 0.0;
  for (std::int64_t id : trials) job.trials.push_back({id, from});
  return job;
}

bool better(double a, double b, Goal goal) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMaximize ? a > b : a < b;
}

namespace {

bool meets_constraints(const TrialResult& r) { return r.violation == 0; }

std::vector<std::int64_t> best_by_objectives(const std::map<std::int64_t, TrialResult>& results, std::size_t k,
                                             const std::vector<Goal>& goals) {
  std::vector<std::int64_t> ids;
  std::vector<std::vector<double>> points;
  for (const auto& [id, r] : results) {
    if (r.status != TrialStatus::kCompleted || !meets_constraints(r) || r.objectives.size() != goals.size() ||
        !std::all_of(r.objectives.begin(), r.objectives.end(), [](double v) { return std::isfinite(v); })) {
      continue;
    }
    ids.push_back(id);
    points.push_back(r.objectives);
  }
  std::vector<std::int64_t> out;
  for (std::size_t i : pareto_order(points, goals)) {
    if (out.size() == k) break;
    out.push_back(ids[i]);
  }
  return out;
}

std::vector<std::int64_t> best_by_metric(const std::map<std::int64_t, TrialResult>& results, std::size_t k, Goal goal) {
  std::vector<const TrialResult*> completed;
  for (const auto& [id, r] : results) {
    if (r.status == TrialStatus::kCompleted && meets_constraints(r) && !std::isnan(r.metric)) completed.push_back(&r);
  }
  // Stable on ids (the map's order), so ties keep the smaller id first.
  std::stable_sort(completed.begin(), completed.end(), [goal](const auto* a, const auto* b) {
    return better(a->metric, b->metric, goal);
  });
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < completed.size() && i < k; ++i) ids.push_back(completed[i]->trial_id);
  return ids;
}

}  // namespace

std::vector<std::int64_t> best_completed(const std::map<std::int64_t, TrialResult>& results,
                                         std::size_t k, const Goals& goals) {
  std::vector<std::int64_t> ids =
      goals.several() ? best_by_objectives(results, k, goals.objectives) : best_by_metric(results, k, goals.metric);
  if (ids.size() == k) return ids;
  // Too few meet the constraints: then those that break them least.
  std::vector<const TrialResult*> breaking;
  for (const auto& [id, r] : results) {
    if (r.status == TrialStatus::kCompleted && !meets_constraints(r)) breaking.push_back(&r);
  }
  std::stable_sort(breaking.begin(), breaking.end(),
                   [](const auto* a, const auto* b) { return a->violation < b->violation; });
  for (std::size_t i = 0; i < breaking.size() && ids.size() < k; ++i) ids.push_back(breaking[i]->trial_id);
  return ids;
}

}  // namespace hfta::search
