// What `resume` checks in an experiment directory before it continues the
// sweep there (and `status` before it advises resuming): the options the run
// was given (run.json), what sweep.yaml was edited in since the run began, and
// whether the trials on disk are the recorded sweep's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// DIR/run.json, the options run was given; nullopt where it is missing or
/// damaged, a field of the wrong type included (run_json_damage says which).
std::optional<nlohmann::json> run_options_of(const std::string& dir);
/// Why run_options_of(DIR) found none: "DIR/run.json is missing (...)" or "... is damaged (...)".
std::string run_json_damage(const std::string& dir);

/// Whether DIR/sweep.json records search.waves (every TPE sweep since it existed does).
bool recorded_names_waves(const std::string& dir);

/// What a sweep file as edited (`given`) changes against the sweep the run
/// started (`recorded`), as dotted keys ("parameters.lr.max"): keys that would
/// change its trials (resume refuses them), keys of the fusion section (how
/// they are packed, never their numbers: taken), and the name (what the
/// results are called: taken).
struct SweepEdits {
  std::vector<std::string> changed, packing;
  bool renamed = false;
  /// Each changed key "as recorded -> as given" (JSON; "none" where absent),
  /// shortened past 40 characters, for messages.
  std::vector<std::string> changed_values;
};

/// `seed_given`: run was given --seed, which is then part of the recorded
/// sweep, whatever the file says. `before_waves`: a TPE sweep recorded before
/// search.waves existed, which the file cannot name (it goes on with 1).
SweepEdits sweep_edits(const SweepConfig& recorded, SweepConfig given, bool seed_given, bool before_waves);

/// A sweep that its file makes larger, all else the same (as Optuna's
/// study.optimize called again): more trials of a random search or ASHA, more
/// repeats of a grid, more passes of Hyperband. The trials so far keep their
/// ids, configurations and results; the new ones follow them.
struct SweepGrowth {
  std::string key;  ///< "search.trials", "search.repeats" or "search.iterations"
  std::int64_t from = 0, to = 0;
};

/// The growth `edits` (of `recorded` into `given`) stand for. Nullopt where
/// they are not one: `why` then says why the growth key's edit cannot be
/// taken (a smaller count, TPE's waves, a stopping rule, other keys edited
/// with it), or is empty where the edits leave it as it was.
std::optional<SweepGrowth> sweep_growth(const SweepConfig& recorded, const SweepConfig& given, const SweepEdits& edits,
                                        std::string& why);

/// Where the directory's trials are not the recorded sweep's (its seed gives
/// each trial its seed): what says so, else "".
std::string trials_of_another_sweep(const std::string& dir, const SweepConfig& recorded);

}  // namespace hfta::core
