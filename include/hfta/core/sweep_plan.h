// What a sweep will run, computed without training: `hfta-tune plan`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"
#include "hfta/search/scheduler.h"

namespace hfta::core {

/// One array a rung would form: its fusion key and how many models it holds.
struct PlannedArray {
  std::string key;
  std::int64_t models = 0;
  std::optional<double> predicted_bytes;  ///< nullopt until the model's size is known
};

/// One rung: n trials trained to budget r; arrays when they are known before training
/// (a bracket's first rung; later rungs depend on which trials are promoted).
struct PlannedRung {
  std::int64_t n = 0;
  double r = 0;
  std::optional<std::vector<PlannedArray>> arrays;  ///< wave by wave
  search::Waves waves;  ///< parts its trials start in, one after another (trial_waves)
};

struct PlannedBracket {
  int s = 0;
  std::vector<PlannedRung> rungs;
  int first_round = 0;  ///< rung i trains in round first_round + i
  int iteration = 0;    ///< Hyperband's pass over its brackets (search.iterations)
};

/// The brackets, rungs, arrays and budget totals of a sweep.
struct SweepPlan {
  std::vector<PlannedBracket> brackets;
  double total_budget = 0;    ///< sum of n_i r_i, as Li et al. count it (random, grid, pbt: trained_budget)
  double trained_budget = 0;  ///< with promoted trials resuming from their checkpoints
  bool fused = true;
  std::string device = "cpu";
  double budget_bytes = 0;    ///< memory the arrays may plan to use (one worker's)
  int sharing = 1;            ///< workers that share one device's memory: budget_bytes is 1/sharing of its share
};

/// Plans `sweep` on `device` ("cpu", "cuda:0,...") with `available_bytes` free
/// for one worker (1/`sharing` of a device's free memory); `fuse` false is --fusion off.
SweepPlan make_plan(const SweepConfig& sweep, bool fuse, const std::string& device,
                    double available_bytes, int sharing = 1);

/// The documented JSON shape: {"format": 1, "brackets": [{"s", "rungs": [{"n", "r", "arrays"}]}],
/// "total_budget", ...}.
nlohmann::json to_json(const SweepPlan& plan, const SweepConfig& sweep);

/// A table for people.
std::string to_text(const SweepPlan& plan, const SweepConfig& sweep);

}  // namespace hfta::core
