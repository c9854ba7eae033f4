#include "tuner_impl.h"

#include <cmath>
#include <fstream>

#include "hfta/core/experiment_dir.h"

namespace hfta::core::tuning {

// state.json: the scheduler's and searcher's state after each round, for
// reading. It is derived: resume rebuilds both by replaying trials/ (every
// random draw is a pure function of the sweep's seed and the trial's id), and
// says which rung results state.json holds that trials/ lost.
void Tuner::write_state() {
  if (options_.dir.empty()) return;
  check_directory();
  nlohmann::json reports = nlohmann::json::array();
  for (const auto& r : told_) {
    static const char* const names[] = {"completed", "stopped", "diverged", "failed"};
    reports.push_back({{"trial", r.trial_id}, {"budget", r.budget},
                       {"metric", std::isfinite(r.metric) ? nlohmann::json(r.metric) : nlohmann::json()},
                       {"status", names[static_cast<int>(r.status)]}});
  }
  nlohmann::json state = {
      {"format", 1},
      {"name", sweep_.name},
      {"finished", done()},
      {"scheduler", {{"method", to_string(sweep_.search.method)}, {"results", reports}}},
      {"searcher", {{"kind", to_string(sweep_.search.searcher)}, {"configurations", records_.size()}, {"observations", observations_}}},
      {"random_streams",
       {{"seed", sweep_.seed},
        {"scheme", "counter-based (search/rng.h): a trial's configuration and seed are functions of the sweep's "
                   "seed and the trial's id; batch order of the seed and epoch; dropout masks of the trial's seed "
                   "and step: no stream position to keep"}}}};
  write_atomically(options_.dir + "/state.json", state.dump(1) + "\n");
}

// On resume: the rung results an earlier state.json recorded that trials/ no longer holds.
void Tuner::check_state() {
  std::ifstream in = open_regular(options_.dir + "/state.json");
  if (!in) return;
  const auto state = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  // Valid JSON of another shape is as damaged as a truncated file.
  auto is_result = [](const nlohmann::json& r) {
    return r.is_object() && r.contains("trial") && r["trial"].is_number_integer() && r.contains("budget") &&
           r["budget"].is_number();
  };
  const bool readable = state.is_object() && state.contains("scheduler") && state["scheduler"].is_object() &&
                        state["scheduler"].contains("results") && state["scheduler"]["results"].is_array() &&
                        std::all_of(state["scheduler"]["results"].begin(), state["scheduler"]["results"].end(), is_result);
  if (!readable) {
    progress_.message("state.json is damaged: rebuilt from trials/");
    return;
  }
  std::vector<std::string> lost;
  for (const auto& r : state["scheduler"]["results"]) {
    const auto id = r["trial"].get<std::int64_t>();
    const double budget = r["budget"].get<double>();
    if (!finished(id, budget)) lost.push_back("trial " + std::to_string(id) + " at " + nlohmann::json(budget).dump());
  }
  if (lost.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < lost.size() && i < 5; ++i) list += (i ? ", " : "") + lost[i];
  if (lost.size() > 5) list += " and " + std::to_string(lost.size() - 5) + " more";
  progress_.message("state.json records " + std::to_string(lost.size()) + " rung result(s) that trials/ no longer holds (" +
                    list + "): they train again");
}

// --keep-checkpoints live: the checkpoints of every trial the scheduler
// will not train again go (only training reads them; its weights stay).
void Tuner::drop_done_checkpoints() {
  if (options_.keep_checkpoints || options_.dir.empty()) return;
  const bool over = done();  // (ended at metric.target: nothing trains again)
  for (const auto& [id, record] : records_) {
    if (checkpoints_dropped_.count(id) || (!over && scheduler_->may_train_again(id))) continue;
    dropped_bytes_ += store_.drop_checkpoints(id);
    checkpoints_dropped_.insert(id);
  }
}

}  // namespace hfta::core::tuning
