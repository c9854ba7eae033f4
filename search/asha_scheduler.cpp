#include "hfta/search/asha_scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hfta::search {

AshaScheduler::AshaScheduler(std::int64_t trials, std::int64_t max_budget,
                             std::int64_t min_budget, std::int64_t eta, Goals goals,
                             double promotion_wait, Waves waves)
    : trials_(trials), eta_(eta), goals_(std::move(goals)), wait_(promotion_wait), waves_(waves) {
  if (trials < 1) throw std::invalid_argument("ASHA needs at least one trial");
  if (waves.count < 1) throw std::invalid_argument("ASHA needs at least one wave");
  const int k_max = hyperband_s_max(max_budget, min_budget, eta);
  for (int k = 0; k <= k_max; ++k) {
    Rung rung;
    rung.budget = static_cast<double>(max_budget) / static_cast<double>(int_pow(eta, k_max - k));
    rungs_.push_back(std::move(rung));
  }
}

std::vector<std::int64_t> AshaScheduler::promotable(std::size_t k) const {
  if (memo_.size() != rungs_.size()) forget();
  Memo& memo = memo_[k];
  if (memo.promotable) return *memo.promotable;
  const Rung& rung = rungs_[k];
  if (k + 1 >= rungs_.size()) return {};
  std::size_t quota = rung.results.size() / static_cast<std::size_t>(eta_);
  // A rung that has every result it will ever get keeps its best going even
  // when it holds fewer than eta (as Ray Tune's ASHA does): otherwise a sweep
  // of few trials never trains one to the full budget.
  if (quota == 0 && closed(k)) quota = 1;
  std::vector<std::int64_t> out;
  for (std::int64_t id : best_completed(rung.results, quota, goals_)) {
    if (!rung.promoted.count(id)) out.push_back(id);
  }
  memo.promotable = out;
  memo.promotable_ids = std::set<std::int64_t>(out.begin(), out.end());
  return out;
}

bool AshaScheduler::is_promotable(std::size_t k, std::int64_t trial_id) const {
  promotable(k);
  return memo_[k].promotable_ids.count(trial_id) > 0;
}

std::vector<RungJob> AshaScheduler::next_jobs(std::size_t capacity, double now) {
  forget();
  std::vector<RungJob> jobs;
  // A wave starts once the trials before it have bottom-rung results; one cut
  // short by `capacity` goes on at the next call.
  const bool bottom_running = std::any_of(running_.begin(), running_.end(), [](const auto& r) { return r.second == 0; });
  const std::int64_t begin = wave_ == 0 ? 0 : waves_.end(trials_, wave_ - 1);
  const std::int64_t end = waves_.end(trials_, wave_);
  const bool wave_starts = started_ < end && (wave_ == 0 || started_ > begin || !bottom_running);
  // Held promotions go with a new wave, whatever the wait: which round they
  // train in must not depend on how long the last one took (a resume replays
  // rounds in no time).
  const double wait = wave_starts && waves_.among(trials_) > 1 ? 0.0 : wait_;
  // Highest rung first: finishing promising trials beats starting new ones.
  for (std::size_t k = rungs_.size() - 1; k-- > 0;) {
    Rung& rung = rungs_[k];
    // A trial waiting for its promotion can lose its place to better results that
    // arrive meanwhile: keep the wait times of those still promotable only.
    std::map<std::int64_t, double> pending;
    for (std::int64_t id : promotable(k)) {
      auto it = rung.pending_since.find(id);
      pending[id] = it == rung.pending_since.end() ? now : it->second;
    }
    rung.pending_since = std::move(pending);
    if (rung.pending_since.empty() || capacity == 0) continue;
    double oldest = now;
    for (const auto& [id, since] : rung.pending_since) oldest = std::min(oldest, since);
    if (now - oldest < wait) continue;  // hold so later promotions can join this array
    RungJob job{0, static_cast<int>(k + 1), rungs_[k + 1].budget, {}};
    for (auto it = rung.pending_since.begin();
         it != rung.pending_since.end() && job.trials.size() < capacity;) {
      job.trials.push_back({it->first, rung.budget});
      rung.promoted.insert(it->first);
      running_[it->first] = k + 1;
      it = rung.pending_since.erase(it);
    }
    capacity -= job.trials.size();
    jobs.push_back(std::move(job));
    forget();  // (promoted and running changed)
  }
  if (capacity > 0 && wave_starts) {
    RungJob job{0, 0, rungs_[0].budget, {}};
    while (capacity > 0 && started_ < end) {
      job.trials.push_back({started_, 0.0});
      running_[started_++] = 0;
      --capacity;
    }
    if (started_ == end) ++wave_;
    jobs.push_back(std::move(job));
  }
  forget();
  return jobs;
}

void AshaScheduler::report(const TrialResult& result) {
  auto it = running_.find(result.trial_id);
  if (it == running_.end()) {
    throw std::invalid_argument("trial " + std::to_string(result.trial_id) +
                                " is not training in a rung now");
  }
  rungs_[it->second].results[result.trial_id] = result;
  running_.erase(it);
  forget();
}

bool AshaScheduler::finished() const {
  return started_ == trials_ && running_.empty() && promotable_count() == 0;
}

bool AshaScheduler::may_train_again(std::int64_t trial_id) const {
  if (trial_id >= started_ || running_.count(trial_id)) return trial_id < trials_;
  // Its highest result: promoted from there, it would be training or higher.
  for (std::size_t k = rungs_.size(); k-- > 0;) {
    auto it = rungs_[k].results.find(trial_id);
    if (it == rungs_[k].results.end()) continue;
    if (it->second.status != TrialStatus::kCompleted || k + 1 == rungs_.size()) return false;
    // A rung that gets no more results promotes no one beyond what it may now.
    if (!closed(k)) return true;
    return is_promotable(k, trial_id);
  }
  return false;
}

bool AshaScheduler::closed(std::size_t k) const {
  if (started_ < trials_) return false;
  if (memo_.size() != rungs_.size()) forget();
  if (memo_[k].closed) return *memo_[k].closed;
  bool closed = true;
  for (const auto& [id, rung] : running_) {
    if (rung <= k) closed = false;
  }
  for (std::size_t j = 0; j < k && closed; ++j) {
    if (!promotable(j).empty()) closed = false;
  }
  memo_[k].closed = closed;
  return closed;
}

std::size_t AshaScheduler::promotable_count() const {
  std::size_t n = 0;
  for (std::size_t k = 0; k < rungs_.size(); ++k) n += promotable(k).size();
  return n;
}

double AshaScheduler::next_release_time() const {
  double due = std::numeric_limits<double>::infinity();
  for (const auto& rung : rungs_) {
    for (const auto& [id, since] : rung.pending_since) due = std::min(due, since + wait_);
  }
  return due;
}

std::vector<BracketPlan> AshaScheduler::plan() const {
  BracketPlan bracket;
  bracket.s = static_cast<int>(rungs_.size()) - 1;
  for (std::size_t k = 0; k < rungs_.size(); ++k) {
    bracket.rungs.push_back({std::max<std::int64_t>(1, trials_ / int_pow(eta_, static_cast<int>(k))), rungs_[k].budget});
  }
  return {bracket};
}

}  // namespace hfta::search
