// What a sweep found: each trial's outcome, which is best, and results.json.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"
#include "hfta/search/scheduler.h"
#include "hfta/search/search_space.h"

namespace hfta::core {

/// One trial's outcome.
struct TrialRecord {
  std::int64_t id = 0;
  search::Config params;
  std::uint64_t seed = 0;
  std::string status = "completed";  ///< completed, stopped, diverged, failed
  std::string error;                 ///< why it failed, or where and why it diverged
  double budget = 0;                 ///< budget units reached
  double metric = 0;                 ///< the sweep's metric at that budget
  std::vector<double> objectives;    ///< with several objectives, each one's value at that budget
  double violation = 0;              ///< how far it breaks the sweep's constraints there (0: meets them)
  std::int64_t model_params = 0;     ///< its plain model's parameters, as exported (0: not known)
  /// The metric at the end of each rung it trained (NaN where it diverged), by
  /// the rung's budget: what parameter importance compares trials by.
  std::map<double, double> rung_metrics;
  nlohmann::json history = nlohmann::json::array();  ///< every evaluation
  /// Of a sweep that runs or was interrupted: evaluations past `budget`, made
  /// inside a rung not finished yet. Shown (status, export), judged by nothing.
  nlohmann::json in_rung = nlohmann::json::array();
  /// Population based training: the trial whose state at a budget this one
  /// started from (its history and rungs up to there are the parent's).
  std::optional<search::Parent> parent;
};

/// A model's metrics on the test split, which no search decision saw.
struct TestMetrics {
  double loss = 0;
  double accuracy = 0;  ///< of classes, or of (masked) next tokens; a GAN's: its discriminator's
  double fid = NAN;     ///< a GAN's: Fréchet distance of its samples to the test images
  /// A regression's (accuracy NaN): errors in the target's units, and R².
  double rmse = NAN, mae = NAN, r2 = NAN;
  /// A classifier's macro F1 and balanced accuracy; ROC AUC and average
  /// precision where the sweep names val_auc and val_average_precision.
  double f1 = NAN, balanced_accuracy = NAN, auc = NAN, average_precision = NAN;
};

/// The result that ended a sweep at its metric.target.
struct TargetReached {
  std::int64_t id = 0;
  double metric = 0;
  double budget = 0;
};

/// Of rung results (completed or stopped ones), the one that ends the sweep at
/// `target`: the best at or past it, of equals the lower id, then the lower
/// budget (whatever the order they come in); none where none reaches it.
std::optional<TargetReached> reaching_target(const std::vector<TargetReached>& results, double target, Goal goal);

struct SweepResult {
  std::vector<TrialRecord> trials;  ///< by trial id
  std::int64_t best = -1;           ///< index into trials
  std::optional<TestMetrics> best_test;  ///< the best trial at its final budget, on the test split
  bool finished = true;             ///< false: the trials so far, of a sweep that runs or was interrupted
  std::optional<TargetReached> target_reached;  ///< with metric.target: the result that ended the sweep
  std::vector<std::int64_t> pareto;  ///< with several objectives: pareto_front's indexes into trials
  std::map<std::int64_t, TestMetrics> pareto_test;  ///< each of them at its final budget, on the test split, by id
};

/// Whether the trial may be named best: completed or stopped at a budget
/// above 0 with a metric (not diverged, failed, or inside its first rung),
/// within the sweep's constraints there.
bool may_be_best(const TrialRecord& t);

/// Whether `a` ranks before `b` by `goal` (ties: the larger budget first).
bool ranks_before(const TrialRecord& a, const TrialRecord& b, Goal goal);

/// The index of the first trial by ranks_before among those that may be
/// best; -1 when there is none.
std::int64_t best_trial(const std::vector<TrialRecord>& trials, Goal goal);

/// With several objectives, the indexes of the trials that no other
/// dominates, among those that finished training (may be best, and reached
/// budget.max or stopped early: not those a rung passed over), ordered by
/// ranks_before on the metric; empty with one metric.
std::vector<std::int64_t> pareto_front(const std::vector<TrialRecord>& trials, const SweepConfig& sweep);

/// The documented results.json: {"format": 1, "name", "finished", "metric", "trials", "best"}, and
/// "target_reached" with metric.target.
/// With the experiment directory `dir`, a trial's files name its checkpoint
/// only where it is on disk (--keep-checkpoints live removes them).
nlohmann::json results_json(const SweepConfig& sweep, const SweepResult& result, const std::string& dir = "");

}  // namespace hfta::core
