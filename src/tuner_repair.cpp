#include "tuner_impl.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace hfta::core::tuning {

// Whether the trial's checkpoint at `budget` is on disk with the CRC its
// rung recorded (saying why not), without loading it: a round checks every
// promoted trial's first, and each array loads its own (load_state).
bool Tuner::intact(std::int64_t id, double budget) {
  const RungResult* r = finished(id, budget);
  if (!r) return false;
  std::string problem;
  if (store_.intact_checkpoint(id, r->checkpoint_crc, &problem)) return true;
  progress_.message("trial " + std::to_string(id) + ": no intact checkpoint at " + format_budget(budget) + ": " +
                    problem);
  return false;
}

// The trial's state at `budget`: saved_'s (a run without a directory, or a
// rung resumed from its mid-rung checkpoint), else its rung's checkpoint.
Saved Tuner::load_state(std::int64_t id, double budget) {
  if (auto it = saved_.find(id); it != saved_.end()) return it->second;
  const RungResult* r = finished(id, budget);
  if (!r) throw std::logic_error("trial " + std::to_string(id) + " has no rung at " + format_budget(budget));
  auto model = build(1, records_.at(id).params)->make_plain();
  fusion::SlotState state;
  std::string problem;
  if (take_one(faults_.damaged_at_load, {id, budget})) damage_checkpoint(id);
  if (!store_.load_checkpoint(id, r->checkpoint_crc, model, state, &problem)) {
    throw CheckpointLost(id, "trial " + std::to_string(id) + ": its checkpoint at " + format_budget(budget) +
                                 " could not be read: " + problem);
  }
  return {model, state, r->steps, r->progress};
}

// (Tests: HFTA_TUNE_DAMAGE_CHECKPOINTS...) Cuts the trial's last checkpoint short.
void Tuner::damage_checkpoint(std::int64_t id) const {
  std::filesystem::resize_file(options_.dir + "/trials/" + std::to_string(id) + "/checkpoint.pt", 100);
}

// A trial whose checkpoint at `budget` could not be loaded: falls back to
// its previous rung's checkpoint (repairing that one first, down to the
// start where none is left) and trains the lost rung again, alone, recording
// what it recorded the first time: the rung's evaluations, training losses
// averaged as they were (the rung's checkpoint holds the running sums). Returns whether it stands at
// `budget` again, still running (false: it failed, or this time stopped).
bool Tuner::repair(std::int64_t id, double budget) {
  // Up to its parent's budget a trial trained as its parent, with other
  // hyperparameters: that cannot be trained again as the trial.
  if (const auto& parent = records_.at(id).parent; parent && budget <= parent->budget) {
    TrialRecord& r = records_.at(id);
    r.status = "failed";
    r.error = "its state at " + format_budget(parent->budget) + " came from trial " + std::to_string(parent->trial) +
              " (population based training), and cannot be trained again as this trial's";
    return false;
  }
  double previous = 0;
  for (const auto& r : rungs_.at(id)) {
    if (r.budget < budget && r.status == "completed") previous = std::max(previous, r.budget);
  }
  if (previous > 0 && !intact(id, previous) && !repair(id, previous)) return false;
  progress_.message("trial " + std::to_string(id) + ": " +
                    (previous > 0 ? "falling back to its checkpoint at " + format_budget(previous) + " and training"
                                  : "training from the start") +
                    " its rung to " + format_budget(budget) + " again");
  auto& rungs = rungs_.at(id);
  rungs.erase(std::remove_if(rungs.begin(), rungs.end(), [&](const RungResult& r) { return r.budget >= budget; }),
              rungs.end());
  const std::int64_t start = settings_.steps_for(previous, config_of(id));
  auto& h = records_.at(id).history;
  h.erase(std::remove_if(h.begin(), h.end(), [&](const nlohmann::json& e) { return e.at("step") > start; }), h.end());
  rung_start_[id] = previous;
  reported_.erase({id, budget});  // reported earlier in this process, perhaps: it trains again
  progress_.unreplayed(budget - previous);
  auto capacity = [this](const std::string& key, const Config& c) { return sizer_.capacity(key, c); };
  Reports already_reported;  // the scheduler replayed this rung's result
  for (const auto& plan : packer_.pack({{id, config_of(id), previous, budget}}, capacity)) {
    train_isolating_failures(plan, already_reported, 0);
  }
  rung_start_[id] = budget;
  const RungResult* again = finished(id, budget);
  return again && again->status == "completed";
}

// repair(), and where training the lost rungs again fails (or this time
// stops early), the trial fails at `to`, the rung it could not start, with
// the rungs and history the scheduler was told before: what a resumed run
// replays from trial.json then equals what this run decided from.
bool Tuner::repaired_or_failed(std::int64_t id, double from, double to) {
  const std::vector<RungResult> rungs = rungs_.at(id);
  const nlohmann::json history = records_.at(id).history;
  repairing_ = true;
  bool repaired = false;
  try {
    repaired = repair(id, from);
  } catch (...) {
    repairing_ = false;
    throw;
  }
  repairing_ = false;
  if (repaired) return true;
  TrialRecord& r = records_.at(id);
  const std::string why = r.status == "failed" ? r.error : "it stopped early this time, where it had not";
  rungs_.at(id) = rungs;
  r.history = history;
  r.status = "failed";
  r.error = "its checkpoint at " + format_budget(from) + " was lost, and training its rungs again failed: " + why;
  r.budget = reached_budget(rungs);
  r.metric = std::numeric_limits<double>::quiet_NaN();
  r.objectives.clear();
  r.violation = 0;
  r.rung_metrics = rung_metrics(rungs);
  check_directory();
  store_.save_failure(r, rungs, to);
  rungs_.at(id).push_back({to, r.metric, r.status, 0, 0});
  saved_.erase(id);
  progress_.message("trial " + std::to_string(id) + " failed: " + r.error);
  progress_.result(id, r.metric);  // the rung it could not start: a result of the plan's
  report_failure(id, to);
  return false;
}

// The round's trials whose checkpoint was lost after the round checked it
// (an array may start hours after its round began): their lost rungs train
// again, as a round's first check repairs them, and then the rung they were
// promoted to, in arrays of their own.
void Tuner::train_lost_again() {
  while (!lost_.empty()) {
    std::vector<search::PackItem> items;
    for (const auto& [id, job] : std::map<std::int64_t, std::pair<double, double>>(std::move(lost_))) {
      if (repaired_or_failed(id, job.first, job.second)) items.push_back({id, config_of(id), job.first, job.second});
    }
    lost_.clear();
    auto capacity = [this](const std::string& key, const Config& c) { return sizer_.capacity(key, c); };
    train_arrays(packer_.pack(items, capacity));
  }
  lost_in_round_.clear();
}

// A trial killed mid-rung: loads its partial checkpoint for the rung
// [from, to] into saved_ and returns the budget it reached; nullopt when it has
// none for this rung or the checkpoint is damaged (the rung then restarts).
std::optional<double> Tuner::resume_partial(std::int64_t id, double from, double to) {
  auto it = partials_.find(id);
  if (it == partials_.end()) return std::nullopt;
  const PartialRung partial = it->second;
  partials_.erase(it);
  if (partial.from_budget != from || partial.to_budget != to) return std::nullopt;
  const Config& c = config_of(id);
  auto model = build(1, c)->make_plain();
  fusion::SlotState state;
  std::string problem;
  if (!store_.load_partial(id, partial, model, state, &problem)) {
    progress_.message("trial " + std::to_string(id) + ": " + problem + "; restarting its rung");
    return std::nullopt;
  }
  saved_[id] = {model, state, partial.steps, partial.progress};
  progress_.message("trial " + std::to_string(id) + " continues its rung from step " + std::to_string(partial.steps));
  progress_.restored(settings_.budget_of(partial.steps, c) - partial.from_budget);
  return settings_.budget_of(partial.steps, c);
}

}  // namespace hfta::core::tuning
