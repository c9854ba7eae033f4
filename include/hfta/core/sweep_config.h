// A sweep, loaded from YAML into typed, validated options. The format is documented
// in the README; configs/reference.yaml uses every key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "hfta/search/parameter_spec.h"
#include "hfta/search/scheduler.h"
#include "hfta/search/search_space.h"

namespace hfta::core {

enum class BudgetUnit { kEpochs, kSteps, kSamples };
using search::Goal;  // the scheduler ranks by it
enum class SearchMethod { kRandom, kGrid, kHyperband, kSha, kAsha, kPbt };
enum class Searcher { kRandom, kTpe, kGrid, kQmc, kCmaEs, kGp };

/// TPE and the Gaussian process: searchers that model the results so far,
/// proposing new trials in waves (or across Hyperband's rounds) from them.
inline bool models_results(Searcher s) { return s == Searcher::kTpe || s == Searcher::kGp; }
enum class Stopping { kNone, kMedian, kPercentile };
enum class FusionMode { kAuto, kOff };

/// Names of an enum's values as sweep files write them, indexed by the value.
template <typename E>
const std::vector<std::string>& enum_names();
template <> const std::vector<std::string>& enum_names<BudgetUnit>();
template <> const std::vector<std::string>& enum_names<Goal>();
template <> const std::vector<std::string>& enum_names<SearchMethod>();
template <> const std::vector<std::string>& enum_names<Searcher>();
template <> const std::vector<std::string>& enum_names<Stopping>();
template <> const std::vector<std::string>& enum_names<FusionMode>();

/// The name a sweep file uses for an enum value ("hyperband", "maximize").
template <typename E>
const std::string& to_string(E value) {
  return enum_names<E>()[static_cast<size_t>(value)];
}

/// A table of the user's own (task.dataset csv): its CSV files and label column.
struct TableOptions {
  std::string train, test;  ///< as written in the sweep file (test: "" for none)
  std::string label;        ///< the label column ("": the last)
  // Not part of the sweep's identity: where the files are read, and what they hold.
  std::string train_file, test_file;  ///< as written, from the sweep file's directory; or an experiment's copies
  std::string source;                 ///< the sweep file, for messages
  std::map<std::string, std::pair<int, int>> marks;  ///< "train", "test", "label", "validation": line, column
  std::int64_t features = 0, classes = 0;            ///< once read (0 before); a regression's classes: 1 output
  bool regression = false;                           ///< once read: the label is a number to predict (task.loss mse, ...)
  bool integer_classes = false;                      ///< once read: every class an integer
  std::string label_column;                          ///< once read: the label's name
  std::int64_t train_rows = 0, validation_rows = 0, test_rows = 0;
  /// Once read, a classification's: the classes of the validation rows, and
  /// those that hold none of them (a rare class's share may round to none).
  std::int64_t validation_classes = 0;
  std::vector<std::string> validation_lacks;
  std::int64_t test_classes = 0;  ///< once read: the classes of the test table's rows (0: none)
  bool operator==(const TableOptions& o) const { return train == o.train && test == o.test && label == o.label; }
};

/// What is trained: the dataset, the model and its fixed shape options.
struct TaskOptions {
  std::string dataset;  ///< defaults to the model's dataset
  std::string model;
  std::int64_t batch_size = 64;
  std::string loss;     ///< defaults to the model's usual loss
  std::string precision = "fp32";  ///< fp32, bf16 or fp16 (autocast; fusion/mixed_precision.h)
  /// Validation examples: Fashion-MNIST's last N training images, N generated
  /// point clouds, or N rows of a table; 0: the dataset's default (10,000,
  /// 2,000, a fifth of the table).
  std::int64_t validation_size = 0;
  /// Training steps between evaluations, counted from a trial's first step;
  /// 0: one epoch of the training data (at the trial's batch size).
  std::int64_t eval_steps = 0;
  std::map<std::string, search::ParamValue> options;  ///< every model option, defaults filled in
  TableOptions table;  ///< dataset csv: the files
  /// Language models: the text file the corpus is read from, DIR/data/corpus.txt
  /// once run kept it (sweep_corpus.h); empty: text_corpus_path(). Not part of
  /// the sweep's identity (the kept copy's bytes are checked instead).
  std::string corpus_file;
  /// Where `precision` was written (1-based; 0 when defaulted), for errors that only
  /// the device can raise (fp16 on a CPU). Not part of the sweep's identity.
  int precision_line = 0;
  int precision_column = 0;
  bool operator==(const TaskOptions& o) const;
};

/// The metric the search optimizes.
struct MetricOptions {
  std::string name;
  Goal goal = Goal::kMaximize;
  /// W&B's metric.target: once a round ends with a trial's metric at or past it, the sweep ends.
  std::optional<double> target;
  bool operator==(const MetricOptions& o) const { return name == o.name && goal == o.goal && target == o.target; }
};

/// A bound on what a trial measures (Optuna's constraints): a result outside
/// it ranks after every result within the sweep's bounds, and is never best.
struct ConstraintOptions {
  std::string name;  ///< a metric the model measures, or params
  std::optional<double> min, max;
  bool operator==(const ConstraintOptions& o) const { return name == o.name && min == o.min && max == o.max; }
  /// How far `value` lies outside, relative to the bound (0 within; NaN: infinitely).
  double violation(double value) const;
};

/// How much training a trial gets: Hyperband's r_min and R in `unit`s.
struct BudgetOptions {
  BudgetUnit unit = BudgetUnit::kEpochs;
  std::int64_t min = 1;
  std::int64_t max = 1;
  bool operator==(const BudgetOptions& o) const {
    return unit == o.unit && min == o.min && max == o.max;
  }
};

/// A result of an earlier sweep that search.warm_start feeds the searcher
/// (warm_start.h), as Optuna's add_trials or Ray Tune's evaluated_rewards.
struct WarmResult {
  search::Config params;       ///< the earlier trial's values of this sweep's parameters
  search::TrialResult result;  ///< trial_id: -1, -2, ... (one per earlier trial; no trial of this sweep)
  std::string source;          ///< the directory, as search.warm_start names it
  std::int64_t trial = 0;      ///< its id there
};

/// How configurations are chosen and how budget is spent on them.
struct SearchOptions {
  SearchMethod method = SearchMethod::kRandom;
  Searcher searcher = Searcher::kRandom;  ///< kGrid exactly when method is grid
  std::int64_t eta = 3;                   ///< hyperband, sha, asha
  std::int64_t trials = 0;                ///< random, sha, asha: configurations to sample
  std::int64_t repeats = 1;               ///< grid: runs of each grid point, with distinct seeds
  double promotion_wait = 2.0;            ///< asha: seconds to wait to batch near-simultaneous promotions
  Stopping stopping = Stopping::kNone;    ///< random: the median (or percentile) stopping rule
  std::int64_t grace_period = 1;          ///< the rule's: no trial stops below it (budget.min unless given)
  std::int64_t min_samples = 3;           ///< the rule's: others that reached a budget before it stops a trial
  double percentile = 50;                 ///< the rule's: the share of the others a trial keeps up with (median: 50)
  bool align_brackets = true;             ///< hyperband: every bracket's last rung in one round
  std::int64_t iterations = 1;            ///< hyperband: passes over its brackets, one after another
  std::int64_t waves = 0;                 ///< random, sha, asha with tpe: parts new trials start in (0: trial_waves picks)
  std::int64_t population = 0;            ///< pbt: members trained together, trials 0..population-1; cmaes: trials per generation
  bool multivariate = false;              ///< tpe: the parameters every trial has proposed together (Optuna's multivariate)
  double quantile_fraction = 0.25;        ///< pbt: the bottom share replaced by clones of the top share, each generation
  double resample_probability = 0.25;    ///< pbt: the chance explore draws a value again rather than perturbing it
  std::vector<double> perturbation_factors = {1.2, 0.8};  ///< pbt: what explore multiplies a number by
  /// pbt: the parameters explore may change (Ray Tune's hyperparam_mutations);
  /// empty: every one that can change mid-training (pbt_mutable).
  std::vector<std::string> explore;
  std::int64_t burn_in_period = 0;        ///< pbt: no exploit at a generation that ends below this budget
  /// Configurations to try first (Ray Tune's points_to_evaluate; not grid):
  /// trial t below their number is point t, with the parameters it leaves out
  /// drawn. Each value is as its parameter draws it (search::as_drawn).
  std::vector<search::Config> points;
  /// Experiment directories of earlier sweeps whose results the searcher
  /// starts from (tpe, gp, cmaes), as written in the sweep file.
  std::vector<std::string> warm_start;
  // Not part of the sweep's identity: where they are, and what was read.
  struct WarmSource {
    std::string dir;       ///< as written, from the sweep file's directory
    std::string at;        ///< its YAML path (search.warm_start, or [k] of a list)
    int line = 0, column = 0;
  };
  std::vector<WarmSource> warm_sources;      ///< one per warm_start entry
  std::string warm_start_file;               ///< the sweep file, for messages
  std::vector<WarmResult> warm_results;      ///< once read (read_warm_start, or the kept warm_start.json)
  std::vector<std::string> warm_notes;       ///< "note: ..." lines on what reading them left out
  bool operator==(const SearchOptions& o) const;
};

/// Per-model early stopping inside an array.
struct EarlyStoppingOptions {
  bool enabled = false;
  std::int64_t patience = 3;  ///< evaluations without improvement by min_delta (0: divergence alone)
  double min_delta = 0.0;
  double divergence = 0.0;    ///< > 0: a training loss above it counts as diverged (NaN/Inf always do)
  bool operator==(const EarlyStoppingOptions& o) const {
    return enabled == o.enabled && patience == o.patience && min_delta == o.min_delta &&
           divergence == o.divergence;
  }
};

/// How trials are fused into arrays.
struct FusionOptions {
  FusionMode enabled = FusionMode::kAuto;
  std::int64_t max_array = 64;    ///< most models in one array
  double memory_fraction = 0.9;   ///< share of device memory arrays may plan to use
  double min_gain = 0.1;          ///< arrays must beat one model's measured rate by this share
  bool operator==(const FusionOptions& o) const {
    return enabled == o.enabled && max_array == o.max_array && memory_fraction == o.memory_fraction &&
           min_gain == o.min_gain;
  }
};

/// A whole sweep. Parameters are sorted by name, so the order in the file never
/// changes which trials a sweep produces.
struct SweepConfig {
  std::string name;
  std::uint64_t seed = 0;
  TaskOptions task;
  MetricOptions metric;  ///< with several objectives, the first
  /// Several objectives (Optuna's `directions`, a list under `metric`): each in
  /// order, the first `metric`; empty for one metric. "params" counts the
  /// model's trainable parameters.
  std::vector<MetricOptions> objectives;
  std::vector<ConstraintOptions> constraints;  ///< all must hold (empty: none)
  BudgetOptions budget;
  SearchOptions search;
  std::vector<search::ParameterSpec> parameters;
  EarlyStoppingOptions early_stopping;
  FusionOptions fusion;

  /// The parameter with that name (its first branch), or nullptr.
  const search::ParameterSpec* find_parameter(const std::string& parameter) const;
  /// Every spec with that name: one, its branches in order, or none.
  std::vector<const search::ParameterSpec*> parameter_branches(const std::string& parameter) const;

  /// What makes a result better: metric.goal, or each objective's goal.
  search::Goals goals() const;
  /// Whether the metric, an objective or a constraint is `metric`.
  bool names_metric(const std::string& metric) const;
  bool operator==(const SweepConfig& o) const;
  bool operator!=(const SweepConfig& o) const { return !(*this == o); }
};

/// Where a parameter is written: "parameters.lr", or "parameters.lr[1]" for a branch.
std::string parameter_path(const search::ParameterSpec& p);

}  // namespace hfta::core
