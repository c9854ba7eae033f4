// search.warm_start: the results of earlier sweeps that a searcher which
// learns from results (TPE, the Gaussian process, CMA-ES) starts from, as
// Optuna's study.add_trials or Ray Tune's evaluated_rewards. They are read
// from the earlier experiment directories when a sweep file is given
// (validate, plan, run) and kept in the new one as warm_start.json, which
// resume reads: the earlier directories may change or go meanwhile.
#pragma once

#include <string>

#include "hfta/core/sweep_config.h"
#include "hfta/search/searcher.h"

namespace hfta::core {

/// Reads the directories search.warm_start names into warm_results and
/// warm_notes: every finished rung of every earlier trial that lies in this
/// sweep's space, its value of this sweep's metric, objectives and
/// constraints taken from its history at the rung's end, up to budget.max.
/// Throws ConfigError, at the entry, for a directory that holds no sweep or
/// one of another model, dataset or budget unit.
void read_warm_start(SweepConfig& sweep);

/// DIR/warm_start.json: the results read, written atomically.
void keep_warm_start(const std::string& dir, const SweepConfig& sweep);

/// The results run kept in DIR (resume); "" or what is wrong.
std::string read_kept_warm_start(SweepConfig& sweep, const std::string& dir);

/// Tells the searcher every warm result, before any of the sweep's own, as
/// the tuner tells its own (a diverged result as NaN).
void warm_searcher(search::Searcher& searcher, const SweepConfig& sweep);

}  // namespace hfta::core
