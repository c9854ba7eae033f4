// Turns a sweep's options into the search side's plain objects: the search
// space, the searcher, the brackets the scheduler runs, and the packer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hfta/core/sweep_config.h"
#include "hfta/search/brackets.h"
#include "hfta/search/packer.h"
#include "hfta/search/scheduler.h"
#include "hfta/search/searcher.h"

namespace hfta::core {

/// The sweep's parameters as a search space.
search::SearchSpace make_search_space(const SweepConfig& sweep);

/// The searcher the sweep asks for (random, qmc, grid, TPE or CMA-ES), after its points_to_evaluate.
std::unique_ptr<search::Searcher> make_searcher(const SweepConfig& sweep);

/// Results a model-based searcher (TPE, the Gaussian process) needs at one
/// budget before it proposes from them: its min_points().
std::size_t model_min_points(const SweepConfig& sweep);

/// The parts a sweep's new trials start in, so that TPE proposes each from the
/// results of those before: search.waves, or when not given, as many (at most
/// four) as leave each wave enough results for TPE's model and the first every
/// point to evaluate. Under CMA-ES, the points to evaluate and then each
/// generation of search.population. One wave for the random searcher, and for
/// Hyperband (TPE learns across its brackets).
search::Waves trial_waves(const SweepConfig& sweep);

/// The scheduler the sweep's method runs: Hyperband, SHA, ASHA, or one rung at
/// the full budget for random and grid search.
std::unique_ptr<search::Scheduler> make_scheduler(const SweepConfig& sweep);

/// What population based training may change between generations: the
/// sweep's training hyperparameters that a model can take up mid-training
/// (optimizer settings, dropout, label smoothing, gradient clipping), unless
/// a `when` names them or they are constant; of those, the ones
/// search.explore lists where it does. Everything else (shapes, the
/// optimizer, the schedule, the batch size) a new trial keeps from its parent.
std::set<std::string> pbt_mutable(const SweepConfig& sweep);

/// The trials population based training makes when each generation replaces
/// its quantile (PbtScheduler::planned_trials); 0 for other methods.
std::int64_t pbt_planned_trials(const SweepConfig& sweep);

/// The names pbt_mutable() picks from, in order.
const std::vector<std::string>& pbt_mutable_names();

/// The budgets a trial's rungs end at, in order, for the sweep's method: the
/// rungs of successive halving (every Hyperband bracket's are a tail of
/// them), median stopping's steps and PBT's generations (min, 2 min, ...,
/// max), or the full budget.
std::vector<double> rung_budgets(const SweepConfig& sweep);

/// Why a budget in samples would train two rungs (or median stopping's
/// steps, or PBT's generations) to the same step: a step trains a whole
/// batch, or the whole training set where that is smaller (`train_rows`; 0
/// where it is not known yet, as for a table before it is read). `at_max`:
/// budget.max is what to change.
struct RungStepsProblem {
  bool at_max = false;
  std::string message;
};
std::optional<RungStepsProblem> rung_steps_problem(const SweepConfig& sweep, std::int64_t train_rows);

/// The batch sizes a trial may train with, largest first: the batch_size
/// parameter's values (a range's every one, up to 4096 of them, else its
/// ends), and task.batch_size where no such parameter is, or where its `when`
/// may leave it out.
std::vector<std::int64_t> batch_sizes(const SweepConfig& sweep);

/// The task's fusion key: model, dataset, batch size and fixed options.
std::string task_key(const SweepConfig& sweep);

/// The packer for the sweep; `fuse` false is --fusion off.
search::Packer make_packer(const SweepConfig& sweep, bool fuse);

}  // namespace hfta::core
