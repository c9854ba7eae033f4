#include "hfta/search/median_stopping.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hfta::search {

MedianStopping::MedianStopping(Goal goal, double grace_budget, std::size_t min_trials)
    : goal_(goal), grace_(grace_budget), min_trials_(min_trials) {}

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
  if (budget < grace_) return false;

  std::vector<double> averages;
  for (const auto& [id, history] : history_) {
    if (id == trial_id || history.empty() || history.back().first < budget) continue;
    const double avg = running_average(history, budget);
    if (!std::isnan(avg)) averages.push_back(avg);
  }
  if (averages.size() < min_trials_) return false;
  std::sort(averages.begin(), averages.end());
  const std::size_t n = averages.size();
  const double median = n % 2 ? averages[n / 2] : 0.5 * (averages[n / 2 - 1] + averages[n / 2]);

  double best = mine.front().second;
  for (const auto& [b, m] : mine) {
    if (better(m, best, goal_)) best = m;
  }
  return better(median, best, goal_);
}

MedianStoppingScheduler::MedianStoppingScheduler(std::int64_t trials, std::int64_t max_budget,
                                                 std::int64_t min_budget, Goal goal, std::int64_t waves)
    : trials_(trials), waves_(std::min(waves, trials)), rule_(goal, static_cast<double>(min_budget)) {
  if (trials < 1) throw std::invalid_argument("median stopping needs at least one trial");
  if (waves < 1) throw std::invalid_argument("median stopping needs at least one wave");
  if (min_budget < 1 || max_budget < min_budget) throw std::invalid_argument("median stopping needs 1 <= min <= max");
  for (std::int64_t b = min_budget; b < max_budget; b += min_budget) budgets_.push_back(static_cast<double>(b));
  budgets_.push_back(static_cast<double>(max_budget));
  start_wave();
}

void MedianStoppingScheduler::start_wave() {
  step_ = 0;
  alive_.clear();
  for (std::int64_t id = wave_ ? wave_end(trials_, waves_, wave_ - 1) : 0; id < wave_end(trials_, waves_, wave_); ++id) {
    alive_.push_back(id);
  }
}

std::vector<RungJob> MedianStoppingScheduler::next_jobs(std::size_t /*capacity*/, double /*now*/) {
  if (handed_out_ || finished()) return {};
  handed_out_ = true;
  RungJob job{0, static_cast<int>(step_), budgets_[step_], {}};
  const double from = step_ ? budgets_[step_ - 1] : 0.0;
  for (std::int64_t id : alive_) job.trials.push_back({id, from});
  return {job};
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
  if ((step_ >= budgets_.size() || alive_.empty()) && ++wave_ < waves_) start_wave();
}

bool MedianStoppingScheduler::finished() const { return wave_ >= waves_; }

bool MedianStoppingScheduler::may_train_again(std::int64_t trial_id) const {
  if (finished() || trial_id < (wave_ ? wave_end(trials_, waves_, wave_ - 1) : 0)) return false;
  if (trial_id >= wave_end(trials_, waves_, wave_)) return trial_id < trials_;  // a later wave's
  return std::find(alive_.begin(), alive_.end(), trial_id) != alive_.end();
}

std::vector<BracketPlan> MedianStoppingScheduler::plan() const {
  // The most each step can hold: how many the rule stops is known only as it goes.
  BracketPlan bracket;
  for (double b : budgets_) bracket.rungs.push_back({trials_, b});
  return {bracket};
}

}  // namespace hfta::search
