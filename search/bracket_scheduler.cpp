#include "hfta/search/bracket_scheduler.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace hfta::search {

BracketScheduler::BracketScheduler(std::vector<BracketPlan> brackets, Goals goals,
                                   std::int64_t first_trial_id, Waves waves)
    : brackets_(std::move(brackets)), goals_(std::move(goals)), waves_(waves) {
  if (waves.count < 1) throw std::invalid_argument("a rung needs at least one wave");
  std::int64_t next_id = first_trial_id;
  for (std::size_t b = 0; b < brackets_.size(); ++b) {
    BracketState st;
    if (brackets_[b].rungs.empty()) {
      st.done = true;
    } else {
      for (std::int64_t i = 0; i < brackets_[b].rungs[0].n; ++i) {
        st.place[next_id] = st.trials.size();
        st.trials.push_back({next_id, 0.0});
        bracket_of_[next_id++] = b;
      }
    }
    state_.push_back(std::move(st));
  }
  trial_count_ = next_id - first_trial_id;
}

std::vector<RungJob> BracketScheduler::next_jobs(std::size_t /*capacity*/, double /*now*/) {
  // The round now running: the earliest of every unfinished bracket's current rung
  // (a bracket that ends early, all its trials stopped, no longer holds the others).
  int round = std::numeric_limits<int>::max();
  for (std::size_t b = 0; b < state_.size(); ++b) {
    if (!state_[b].done) round = std::min(round, brackets_[b].first_round + state_[b].rung);
  }
  std::vector<RungJob> jobs;
  for (std::size_t b = 0; b < state_.size(); ++b) {
    BracketState& st = state_[b];
    if (st.done || brackets_[b].first_round + st.rung != round) continue;
    // The next part once every trial handed out so far has reported.
    if (st.handed == st.trials.size() || st.results.size() < st.handed) continue;
    const auto n = static_cast<std::int64_t>(st.trials.size());
    auto end = static_cast<std::size_t>(n);
    if (st.rung == 0) {  // the next wave that is not empty (a rung may hold fewer trials than waves)
      do end = static_cast<std::size_t>(waves_.end(n, st.wave++)); while (end == st.handed);
    }
    jobs.push_back({static_cast<int>(b), st.rung, brackets_[b].rungs[st.rung].r,
                    std::vector<TrialJob>(st.trials.begin() + static_cast<std::ptrdiff_t>(st.handed),
                                          st.trials.begin() + static_cast<std::ptrdiff_t>(end))});
    st.handed = end;
  }
  return jobs;
}

void BracketScheduler::report(const TrialResult& result) {
  auto it = bracket_of_.find(result.trial_id);
  if (it == bracket_of_.end()) {
    throw std::invalid_argument("result for unknown trial " + std::to_string(result.trial_id));
  }
  BracketState& st = state_[it->second];
  const auto place = st.place.find(result.trial_id);
  const bool in_rung = place != st.place.end() && place->second < st.handed;  // (handed out)
  if (st.done || !in_rung) {
    throw std::invalid_argument("trial " + std::to_string(result.trial_id) +
                                " is not training in a rung now");
  }
  st.results[result.trial_id] = result;
  if (st.results.size() == st.trials.size()) advance(it->second);
}

void BracketScheduler::advance(std::size_t b) {
  BracketState& st = state_[b];
  const auto& rungs = brackets_[b].rungs;
  if (st.rung + 1 >= static_cast<int>(rungs.size())) {
    st.done = true;
    return;
  }
  const RungPlan& next = rungs[st.rung + 1];
  const double reached = rungs[st.rung].r;
  std::vector<TrialJob> promoted;
  for (std::int64_t id : best_completed(st.results, static_cast<std::size_t>(next.n), goals_)) {
    promoted.push_back({id, reached});
  }
  st.rung += 1;
  st.handed = 0;
  st.results.clear();
  st.trials = std::move(promoted);
  st.place.clear();
  for (std::size_t i = 0; i < st.trials.size(); ++i) st.place[st.trials[i].trial_id] = i;
  if (st.trials.empty()) st.done = true;  // every trial stopped, diverged or failed
}

bool BracketScheduler::may_train_again(std::int64_t trial_id) const {
  auto it = bracket_of_.find(trial_id);
  if (it == bracket_of_.end()) return false;
  const BracketState& st = state_[it->second];
  // A result in the last rung, or one other than completed: never promoted.
  if (auto r = st.results.find(trial_id); r != st.results.end() &&
      (r->second.status != TrialStatus::kCompleted || st.rung + 1 == static_cast<int>(brackets_[it->second].rungs.size()))) {
    return false;
  }
  return !st.done && st.place.count(trial_id) > 0;
}

bool BracketScheduler::finished() const {
  return std::all_of(state_.begin(), state_.end(), [](const BracketState& s) { return s.done; });
}

BracketScheduler make_hyperband(std::int64_t max_budget, std::int64_t min_budget,
                                std::int64_t eta, const Goals& goals, bool align_ends, std::int64_t iterations) {
  auto brackets = hyperband_brackets(max_budget, min_budget, eta);
  if (align_ends) align_bracket_ends(brackets);
  repeat_iterations(brackets, iterations);
  return BracketScheduler(std::move(brackets), goals);
}

}  // namespace hfta::search
