// Runs a searcher as the tuner runs random search in waves, for tests of the search side.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/searcher.h"

namespace hfta::search::test {

/// A numeric parameter's value in a configuration.
inline double number(const Config& c, const char* name) { return as_double(c.at(name)); }

/// `trials` trials of one rung in `waves`, each wave proposed once the ones
/// before have reported, each trial told metric(its configuration). Returns
/// each wave's mean metric; `configs` gets every trial's configuration.
template <typename Metric>
std::vector<double> run_in_waves(Searcher& searcher, std::int64_t trials, Waves waves, Metric metric,
                                 std::map<std::int64_t, Config>& configs) {
  BracketScheduler scheduler({{0, {{trials, 1.0}}}}, Goal::kMinimize, 0, waves);
  std::vector<double> means;
  while (!scheduler.finished()) {
    for (const auto& job : scheduler.next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
      double sum = 0;
      for (const auto& t : job.trials) configs[t.trial_id] = searcher.suggest(t.trial_id);
      for (const auto& t : job.trials) {
        const double m = metric(configs[t.trial_id]);
        sum += m;
        searcher.observe(t.trial_id, configs[t.trial_id], TrialResult{t.trial_id, 1.0, m});
        scheduler.report({t.trial_id, 1.0, m});
      }
      means.push_back(sum / static_cast<double>(job.trials.size()));
    }
  }
  return means;
}

}  // namespace hfta::search::test
