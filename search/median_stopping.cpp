#include "hfta/search/median_stopping.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hfta::search {

MedianStopping::MedianStopping(Goal goal, StoppingRule rule) : goal_(goal), rule_(rule) {
  if (!(rule.percentile > 0 && rule.percentile <= 100)) {
    throw std::invalid_argument("the stopping rule's percentile must lie in (0, 100]");
  }
  if (rule.min_others < 1) throw std::invalid_argument("the stopping rule needs at least one other trial");
}

double MedianStopping::running_average(const std::vector<std::pair<double, double>>& history,
                                       double budget) const {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& [b, m] : history) {
    if (b > budget) break;
    sum += m;
    ++n;
  }
  return n ? sum / static_cast<double>(n) : std::nan("");
}

bool MedianStopping::report(std::int64_t trial_id, double budget, double metric) {
  record(trial_id, budget, metric);
  return should_stop(trial_id, budget);
}

void MedianStopping::record(std::int64_t trial_id, double budget, double metric) {
  history_[trial_id].emplace_back(budget, metric);
}

bool MedianStopping::should_stop(std::int64_t trial_id, double budget) const {
  const auto& mine = history_.at(trial_id);
  if (budget < rule_.grace) return false;

  std::vector<double> averages;
  for (const auto& [id, history] : history_) {
    if (id == trial_id || history.empty() || history.back().first < budget) continue;
    const double avg = running_average(history, budget);
    if (!std::isnan(avg)) averages.push_back(avg);
  }
  if (averages.size() < rule_.min_others) return false;
  // Best first, so the bar is the `percentile`-th from the top, interpolated
  // at position (n - 1) p / 100 (the median of an even count: the two middle ones' mean).
  std::sort(averages.begin(), averages.end(), [&](double a, double b) { return better(a, b, goal_); });
  const double at = static_cast<double>(averages.size() - 1) * rule_.percentile / 100;
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, averages.size() - 1);
  const double w = at - static_cast<double>(below);
  // (1 - w) a + w b: at w = 0.5 bit for bit the mean the median rule took; w = 0 is a alone (never 0 * inf).
  const double bar = w == 0 ? averages[below] : (1 - w) * averages[below] + w * averages[above];

  double best = mine.front().second;
  for (const auto& [b, m] : mine) {
    if (better(m, best, goal_)) best = m;
  }
  return better(bar, best, goal_);
}

MedianStoppingScheduler::MedianStoppingScheduler(std::int64_t trials, std::int64_t max_budget,
                                                 std::int64_t min_budget, Goal goal, StoppingRule rule,
                                                 Waves waves)
    : trials_(trials), waves_(waves), rule_(goal, rule) {
  if (trials < 1) throw std::invalid_argument("median stopping needs at least one trial");
  if (waves.count < 1) throw std::invalid_argument("median stopping needs at least one wave");
  if (min_budget < 1 || max_budget < min_budget) throw std::invalid_argument("median stopping needs 1 <= min <= max");
  budgets_ = lockstep_budgets(min_budget, max_budget);
  start_wave();
}

void MedianStoppingScheduler::start_wave() {
  step_ = 0;
  alive_.clear();
  for (std::int64_t id = wave_ ? waves_.end(trials_, wave_ - 1) : 0; id < waves_.end(trials_, wave_); ++id) {
    alive_.push_back(id);
  }
}

std::vector<RungJob> MedianStoppingScheduler::next_jobs(std::size_t /*capacity*/, double /*now*/) {
  if (handed_out_ || finished()) return {};
  handed_out_ = true;
  return {lockstep_job(budgets_, step_, alive_)};
}

void MedianStoppingScheduler::report(const TrialResult& result) {
  if (!handed_out_ || std::find(alive_.begin(), alive_.end(), result.trial_id) == alive_.end()) {
    throw std::invalid_argument("trial " + std::to_string(result.trial_id) + " is not training in a step now");
  }
  results_[result.trial_id] = result;
  if (results_.size() < alive_.size()) return;
  for (const auto& [id, r] : results_) {
    if (r.status == TrialStatus::kCompleted) rule_.record(id, r.budget, r.metric);
  }
  std::vector<std::int64_t> next;
  for (const auto& [id, r] : results_) {
    if (r.status == TrialStatus::kCompleted && !rule_.should_stop(id, r.budget)) next.push_back(id);
  }
  alive_ = std::move(next);
  results_.clear();
  handed_out_ = false;
  ++step_;
  if ((step_ >= budgets_.size() || alive_.empty()) && ++wave_ < waves_.among(trials_)) start_wave();
}

bool MedianStoppingScheduler::finished() const { return wave_ >= waves_.among(trials_); }

bool MedianStoppingScheduler::may_train_again(std::int64_t trial_id) const {
  if (finished() || trial_id < (wave_ ? waves_.end(trials_, wave_ - 1) : 0)) return false;
  if (trial_id >= waves_.end(trials_, wave_)) return trial_id < trials_;  // a later wave's
  return std::find(alive_.begin(), alive_.end(), trial_id) != alive_.end();
}

std::vector<BracketPlan> MedianStoppingScheduler::plan() const {
  // The most each step can hold: how many the rule stops is known only as it goes.
  BracketPlan bracket;
  for (double b : budgets_) bracket.rungs.push_back({trials_, b});
  return {bracket};
}

}  // namespace hfta::search
