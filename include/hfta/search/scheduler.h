// Schedulers decide how much budget each trial gets: which trials start, which
// are promoted to the next rung, and when the sweep is done. They see trial ids
// and metrics only; configurations come from a searcher, tensors never appear.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "hfta/search/brackets.h"

namespace hfta::search {

/// Whether larger or smaller metric values are better.
enum class Goal { kMaximize, kMinimize };

/// What makes one result better than another: the metric's goal, or with
/// several objectives (pareto.h) each one's, the metric's first.
struct Goals {
  Goals(Goal g) : metric(g) {}  // NOLINT: implicit, one objective is the usual case
  explicit Goals(std::vector<Goal> all) : metric(all.at(0)), objectives(all.size() > 1 ? std::move(all) : std::vector<Goal>{}) {}
  Goal metric;
  std::vector<Goal> objectives;  ///< empty: the metric alone decides
  bool several() const { return !objectives.empty(); }
};

/// How a trial's training ended at a rung.
enum class TrialStatus {
  kCompleted,  ///< reached the rung's budget
  kStopped,    ///< stopped early (patience or median rule): never promoted
  kDiverged,   ///< NaN/Inf or loss above the divergence bound: never promoted
  kFailed,     ///< an error while training: never promoted
};

/// One trial of a rung job: train trial_id from the budget it has reached (0: from scratch).
struct TrialJob {
  std::int64_t trial_id = 0;
  double from_budget = 0;
  bool operator==(const TrialJob& o) const {
    return trial_id == o.trial_id && from_budget == o.from_budget;
  }
};

/// The trial whose state a trial starts from, and at which budget (population
/// based training's exploit: a new trial continues another's training).
struct Parent {
  std::int64_t trial = 0;
  double budget = 0;
  bool operator==(const Parent& o) const { return trial == o.trial && budget == o.budget; }
};

/// Trials that should each reach `budget`: what the packer turns into arrays.
struct RungJob {
  int bracket = 0;
  int rung = 0;
  double budget = 0;
  std::vector<TrialJob> trials;
};

/// What training reports for one trial at one rung.
struct TrialResult {
  std::int64_t trial_id = 0;
  double budget = 0;  ///< the budget the trial reached
  double metric = std::numeric_limits<double>::quiet_NaN();
  TrialStatus status = TrialStatus::kCompleted;
  /// With several objectives, their values in order (the first is `metric`).
  std::vector<double> objectives;
  /// How far the result breaks the sweep's constraints (0: it meets them all).
  double violation = 0;
};

/// Where wave k of `waves` ends among n new trials: waves 0..k hold the first
/// ceil(n (k + 1) / waves). Sizes differ by at most one and the first is the
/// largest, so a model-based searcher has the most results for the second.
std::int64_t wave_end(std::int64_t n, std::int64_t waves, std::int64_t k);

/// How new trials start in waves, each once every trial before it has a
/// result, so that a searcher that learns proposes a wave from the ones
/// before: `count` parts of near-equal size (wave_end; TPE's), or a first part
/// of `lead` trials and then parts of `size` (CMA-ES's points to evaluate,
/// then its generations; the last part may be short).
struct Waves {
  Waves(std::int64_t count = 1) : count(count) {}  // NOLINT: implicit, a count is the usual case
  static Waves sized(std::int64_t lead, std::int64_t size);
  /// The waves among n trials (at least 1; fixed-size parts, or at most n).
  std::int64_t among(std::int64_t n) const;
  /// Where wave k ends among n trials (n for the last).
  std::int64_t end(std::int64_t n, std::int64_t k) const;
  bool operator==(const Waves& o) const { return count == o.count && lead == o.lead && size == o.size; }
  std::int64_t count = 1;
  std::int64_t lead = 0, size = 0;  ///< size > 0: parts of this size after the lead
};

/// The budgets of schedulers whose trials train in steps together (median
/// stopping, population based training): min, 2 min, ... below max, then max.
std::vector<double> lockstep_budgets(std::int64_t min_budget, std::int64_t max_budget);

/// Step `step` of `budgets` for `trials`, each from the step before (0 first).
RungJob lockstep_job(const std::vector<double>& budgets, std::size_t step, const std::vector<std::int64_t>& trials);

/// True when metric a beats b under goal; NaN loses to every number.
bool better(double a, double b, Goal goal);

/// The ids of the best k completed results (ties: smaller id first); with
/// several objectives, of those with every value finite, in pareto_order.
/// Results that meet the constraints come first (Optuna's constrained
/// domination), then the others by the least violation.
std::vector<std::int64_t> best_completed(const std::map<std::int64_t, TrialResult>& results,
                                         std::size_t k, const Goals& goals);

/// The interface of every scheduler.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Jobs that may start now, for at most `capacity` trials in all (synchronous
  /// schedulers hand out every ready rung whatever the capacity). `now` is in seconds.
  virtual std::vector<RungJob> next_jobs(std::size_t capacity, double now) = 0;
  /// Records a result; results are keyed by trial id, in any order.
  virtual void report(const TrialResult& result) = 0;
  /// True when every trial has finished and nothing more will start.
  virtual bool finished() const = 0;
  /// The brackets and rungs this scheduler runs (for ASHA: the most each rung can hold).
  virtual std::vector<BracketPlan> plan() const = 0;
  /// False once the trial will get no more jobs, whatever results come (its
  /// rung passed it over, it stopped, or it reached the top): what only further
  /// training needs (its optimizer state) may then go. True while unsure.
  virtual bool may_train_again(std::int64_t /*trial_id*/) const { return true; }
  /// Where a trial's training starts from another trial's state (its first
  /// job's from_budget is the parent's budget); none for a trial of its own.
  virtual std::optional<Parent> parent_of(std::int64_t /*trial_id*/) const { return std::nullopt; }
};

}  // namespace hfta::search
