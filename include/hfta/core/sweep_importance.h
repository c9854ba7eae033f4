// Which hyperparameters mattered to a sweep's metric: results.json's
// "importance" (fANOVA, search/param_importance.h).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"
#include "hfta/core/sweep_results.h"

namespace hfta::core {

/// Results of at least this many trials at one budget are needed to judge
/// importance, and of twice the parameters that vary.
constexpr std::size_t kImportanceResults = 8;
/// At most this many are judged (a seeded sample of them): the forest of
/// 5000 takes about a second here, of 20,000 five.
constexpr std::size_t kImportanceMostResults = 5000;

/// The results importance_json needs at one budget: kImportanceResults, or
/// twice the parameters that are not constant where that is more.
std::size_t importance_results_needed(const SweepConfig& sweep);

/// {"method": "fanova", "metric", "budget", "unit", "results", "main_effects",
/// "params": [{"name", "importance"}, ...] largest first, "left_out": [{"name",
/// "why"}, ...]}, over the trials' results at one budget, the rung ranks them
/// by: the largest at which importance_results_needed() trials have one (a
/// trial stopped early counts with its result where it stopped, as its rung
/// ranks it; a diverged result counts as the worst there, as TPE counts it;
/// a failed rung has none), at most kImportanceMostResults of
/// them ("sampled_from": how many there were, where more). With several
/// objectives, of the first. Where it cannot be judged, "params" is empty and
/// "why" says why.
nlohmann::json importance_json(const SweepConfig& sweep, const std::vector<TrialRecord>& trials);

}  // namespace hfta::core
