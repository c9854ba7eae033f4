// Which hyperparameters mattered to a sweep's metric: results.json's
// "importance" (fANOVA, search/param_importance.h).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"
#include "hfta/core/sweep_results.h"

namespace hfta::core {

/// Results of at least this many trials at one budget are needed to judge importance.
constexpr std::size_t kImportanceResults = 8;
/// At most this many are judged (a seeded sample of them): the forest of
/// 5000 takes about a second here, of 20,000 five.
constexpr std::size_t kImportanceMostResults = 5000;

/// {"method": "fanova", "metric", "budget", "results", "main_effects",
/// "params": [{"name", "importance"}, ...] largest first}, over the trials'
/// results at one budget, so that none is judged by less training than
/// another: the largest rung budget at which at least kImportanceResults
/// trials have one (a diverged result counts as the worst there, as TPE
/// counts it; a failed trial has none), at most kImportanceMostResults of
/// them ("sampled_from": how many there were, where more). With several
/// objectives, of the first. Where it cannot be judged, "params" is empty and
/// "why" says why.
nlohmann::json importance_json(const SweepConfig& sweep, const std::vector<TrialRecord>& trials);

}  // namespace hfta::core
