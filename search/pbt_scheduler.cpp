#include "hfta/search/pbt_scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "hfta/search/rng.h"

namespace hfta::search {

std::int64_t pbt_quantile(std::int64_t n, double fraction) {
  const auto q = static_cast<std::int64_t>(std::ceil(static_cast<double>(n) * fraction - 1e-9));
  return std::min(q, n / 2);
}

PbtScheduler::PbtScheduler(std::int64_t population, std::int64_t max_budget, std::int64_t interval, Goal goal,
                           double quantile_fraction, std::uint64_t seed, std::int64_t burn_in)
    : next_id_(population), goal_(goal), quantile_fraction_(quantile_fraction), seed_(seed),
      burn_in_(static_cast<double>(burn_in)) {
  if (population < 2) throw std::invalid_argument("population based training needs a population of at least 2");
  if (interval < 1 || max_budget < interval) throw std::invalid_argument("population based training needs 1 <= interval <= max");
  if (!(quantile_fraction > 0 && quantile_fraction <= 0.5)) {
    throw std::invalid_argument("population based training's quantile fraction must lie in (0, 0.5]");
  }
  budgets_ = lockstep_budgets(interval, max_budget);
  for (std::int64_t id = 0; id < population; ++id) members_.push_back(id);
}

std::vector<RungJob> PbtScheduler::next_jobs(std::size_t /*capacity*/, double /*now*/) {
  if (handed_out_ || finished_) return {};
  handed_out_ = true;
  return {lockstep_job(budgets_, step_, members_)};
}

void PbtScheduler::report(const TrialResult& result) {
  if (!handed_out_ || std::find(members_.begin(), members_.end(), result.trial_id) == members_.end()) {
    throw std::invalid_argument("trial " + std::to_string(result.trial_id) + " is not training in a generation now");
  }
  results_[result.trial_id] = result;
  if (results_.size() < members_.size()) return;
  if (step_ + 1 == budgets_.size()) {
    finished_ = true;
    return;
  }
  // Within the burn-in only those that cannot go on are replaced: too early to tell the best.
  const auto n = static_cast<std::int64_t>(members_.size());
  exploit(budgets_[step_] < burn_in_ ? 0 : pbt_quantile(n, quantile_fraction_));
}

void PbtScheduler::exploit(std::int64_t replaced) {
  const auto n = static_cast<std::int64_t>(members_.size());
  const std::int64_t q = pbt_quantile(n, quantile_fraction_);
  // Best first; only completed members can go on, or be cloned.
  const std::vector<std::int64_t> ranked = best_completed(results_, members_.size(), goal_);
  if (ranked.empty()) {
    finished_ = true;  // none left to train on or to clone
    return;
  }
  const std::vector<std::int64_t> top(ranked.begin(), ranked.begin() + std::min<std::ptrdiff_t>(q, ranked.size()));
  // Replaced: the bottom q of the whole population, ranked with those that
  // cannot go on last (never the top: q is at most half), and all of those.
  const std::size_t keep = std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(n - replaced));
  std::vector<std::int64_t> goes_on(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep));
  const double budget = budgets_[step_];
  for (auto& member : members_) {
    if (std::find(goes_on.begin(), goes_on.end(), member) != goes_on.end()) continue;
    const std::int64_t child = next_id_++;
    Rng rng(seed_, static_cast<std::uint64_t>(child), hash_string("pbt parent"));
    parents_[child] = {top[rng.below(top.size())], budget};
    member = child;
  }
  results_.clear();
  handed_out_ = false;
  ++step_;
}

bool PbtScheduler::may_train_again(std::int64_t trial_id) const {
  if (finished_) return false;
  if (trial_id >= next_id_) return true;  // a clone a later generation may make
  // A parent's state at the generation's budget is read when its children start.
  return std::find(members_.begin(), members_.end(), trial_id) != members_.end();
}

std::optional<Parent> PbtScheduler::parent_of(std::int64_t trial_id) const {
  const auto it = parents_.find(trial_id);
  if (it == parents_.end()) return std::nullopt;
  return it->second;
}

std::vector<BracketPlan> PbtScheduler::plan() const {
  BracketPlan bracket;
  for (double b : budgets_) bracket.rungs.push_back({static_cast<std::int64_t>(members_.size()), b});
  return {bracket};
}

std::int64_t PbtScheduler::planned_trials() const {
  const auto n = static_cast<std::int64_t>(members_.size());
  const auto exploits = std::count_if(budgets_.begin(), budgets_.end() - 1, [&](double b) { return b >= burn_in_; });
  return n + pbt_quantile(n, quantile_fraction_) * static_cast<std::int64_t>(exploits);
}

}  // namespace hfta::search
