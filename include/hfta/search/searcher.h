// Searchers propose each trial's configuration: random, grid, and TPE (model-based).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "hfta/search/cma_es.h"
#include "hfta/search/gaussian_process.h"
#include "hfta/search/scheduler.h"
#include "hfta/search/search_space.h"

namespace hfta::search {

/// Proposes configurations by trial id, and may learn from results.
class Searcher {
 public:
  virtual ~Searcher() = default;
  /// The configuration of trial `trial_id` (ask once per trial; the tuner records it).
  virtual Config suggest(std::int64_t trial_id) = 0;
  /// A trial's metric at a budget; model-based searchers learn from it.
  virtual void observe(std::int64_t /*trial_id*/, const Config& /*config*/, double /*budget*/,
                       double /*metric*/) {}
  /// A whole result: with several objectives their values (the metric's
  /// first), and how far it breaks the sweep's constraints.
  virtual void observe(std::int64_t trial_id, const Config& config, const TrialResult& result) {
    observe(trial_id, config, result.budget, result.metric);
  }
  /// A trial that is about to train with `config`, whether this searcher
  /// suggested it or an earlier run did (the tuner tells each trial once per
  /// run, before its results are replayed). TPE counts those without results
  /// as a wave's liars.
  virtual void proposed(std::int64_t /*trial_id*/, const Config& /*config*/) {}
};

/// Independent draws: trial t's configuration is a pure function of (seed, t).
class RandomSearcher : public Searcher {
 public:
  RandomSearcher(SearchSpace space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}
  Config suggest(std::int64_t trial_id) override { return space_.sample(seed_, trial_id); }

 private:
  SearchSpace space_;
  std::uint64_t seed_;
};

/// Ray Tune's `points_to_evaluate` (Optuna's enqueued trials): trial t below
/// the number of points is point t, with each parameter the point leaves out
/// drawn as random search draws it (SearchSpace::sample with the point fixed);
/// every later trial is the inner searcher's, which learns from all results.
class PointsFirstSearcher : public Searcher {
 public:
  PointsFirstSearcher(std::unique_ptr<Searcher> inner, std::vector<Config> points, SearchSpace space,
                      std::uint64_t seed)
      : inner_(std::move(inner)), points_(std::move(points)), space_(std::move(space)), seed_(seed) {}
  Config suggest(std::int64_t trial_id) override {
    if (trial_id >= 0 && trial_id < static_cast<std::int64_t>(points_.size())) {
      return space_.sample(seed_, trial_id, points_[static_cast<size_t>(trial_id)]);
    }
    return inner_->suggest(trial_id);
  }
  void observe(std::int64_t trial_id, const Config& config, double budget, double metric) override {
    inner_->observe(trial_id, config, budget, metric);
  }
  void observe(std::int64_t trial_id, const Config& config, const TrialResult& result) override {
    inner_->observe(trial_id, config, result);
  }
  void proposed(std::int64_t trial_id, const Config& config) override { inner_->proposed(trial_id, config); }

 private:
  std::unique_ptr<Searcher> inner_;
  std::vector<Config> points_;
  SearchSpace space_;
  std::uint64_t seed_;
};

/// The cross product of every choice, grid and const parameter, each point
/// `repeats` times: trial t is point t mod |points| (repeats differ by seed).
class GridSearcher : public Searcher {
 public:
  GridSearcher(const SearchSpace& space, std::int64_t repeats);
  Config suggest(std::int64_t trial_id) override;
  /// Points times repeats: the trials grid search runs.
  std::int64_t trial_count() const;
  const std::vector<Config>& points() const { return points_; }

 private:
  std::vector<Config> points_;
  std::int64_t repeats_;
};

/// Tree-structured Parzen estimator (Bergstra et al. 2011) as Optuna's
/// TPESampler (3.1) with its defaults: once min_points() trials have
/// results, it ranks each trial by its furthest result (further budgets
/// first, as Optuna ranks a pruned trial by its last step; then the metric
/// there; results that break the constraints after those that meet them, the
/// least first; diverged ones last), splits them into the best tenth (at
/// least one, at most 25) and the rest, and proposes each parameter on its
/// own (or, multivariate, the parameters every trial has together) as the
/// candidate (of 24 drawn from the good group's density) with the highest
/// ratio of the two groups' densities (ParzenEstimator). Before, it
/// proposes what RandomSearcher would. Grid parameters keep the trial's
/// values in the cycle (SearchSpace::cycled); a parameter no good result has
/// is drawn as random search draws it.
/// A wave's trials are proposed from the same results, so each counts the
/// wave-mates proposed before it (suggested, or told by proposed(), with
/// lower ids and no result yet) among the bad results: Optuna's constant
/// liar, which keeps a wave from piling onto one spot. A trial's
/// configuration is so a pure function of (seed, id, the results and the
/// proposals before it).
class TpeSearcher : public Searcher {
 public:
  /// With several goals (pareto.h) the good group is the first of pareto_order, as Optuna's MOTPE;
  /// results that break the constraints rank after those that meet them, the least first.
  /// `multivariate`: Optuna's multivariate TPE (ParzenEstimator's joint
  /// densities) over the parameters every trial has.
  TpeSearcher(SearchSpace space, std::uint64_t seed, Goals goals, bool multivariate = false);
  Config suggest(std::int64_t trial_id) override;
  void observe(std::int64_t trial_id, const Config& config, double budget, double metric) override;
  void observe(std::int64_t trial_id, const Config& config, const TrialResult& result) override;
  void proposed(std::int64_t trial_id, const Config& config) override;
  /// The proposal for `trial_id` from the results and liars so far, without
  /// counting it as proposed (suggest() does).
  Config propose(std::int64_t trial_id) const;

  /// Trials with results needed before the model is used (BOHB's d + 2, d the
  /// parameters that take more than one value).
  std::size_t min_points() const;

 private:
  struct Observation {
    Config config;
    double metric;
    std::vector<double> objectives;  ///< with several goals
    double violation = 0;            ///< of the constraints
    bool finite() const;
  };
  struct Ranked {
    std::int64_t id;
    double budget;
    const Observation* result;
  };
  /// Each trial's furthest result, best first (the class comment's order).
  std::vector<Ranked> ranked() const;
  SearchSpace space_;
  std::uint64_t seed_;
  Goals goals_;
  std::map<double, std::map<std::int64_t, Observation>> by_budget_;
  bool multivariate_;
  std::map<std::int64_t, Config> unmeasured_;  ///< proposed, no result yet: the liars
};

/// CMA-ES (cma_es.h) as Optuna's CmaEsSampler drives it: trials `first`,
/// `first` + 1, ... form generations of `population`, each drawn from the
/// Gaussian that the generations before it moved. It searches the numeric
/// range parameters that every trial has (dimensions()), each scaled to
/// [0, 1] on its own scale (log space for log distributions, an integer or
/// grid point owning the interval around it), starting at the centre with
/// sigma 1/6 (Optuna's range / 6); a draw outside [0, 1] is drawn again, up to
/// 10 per dimension, then clipped (as Optuna). Every other parameter is what
/// random search draws for the trial. A generation is ranked by each trial's
/// first result (its first rung's; the constraints' least violation first,
/// as TPE); a diverged trial, and one with no result (it failed), ranks last,
/// and a generation with fewer than half its trials measured so (the part
/// CMA-ES moves the mean to) leaves the Gaussian as it was.
/// With points to evaluate (trials 0 .. first - 1) the Gaussian starts at the
/// best of their results. Generation g is drawn once every trial before it has
/// a result: its trials form one wave (generation_waves).
class CmaEsSearcher : public Searcher {
 public:
  CmaEsSearcher(SearchSpace space, std::uint64_t seed, Goal goal, std::size_t population, std::int64_t first = 0);
  Config suggest(std::int64_t trial_id) override;
  using Searcher::observe;
  void observe(std::int64_t trial_id, const Config& config, const TrialResult& result) override;

  /// The parameters CMA-ES moves: numeric ranges (not choices, grids or
  /// constants) that every trial has (no condition, or one every trial meets:
  /// always_present) and no branches, in parameters() order.
  static std::vector<const ParameterSpec*> dimensions(const SearchSpace& space);
  /// Hansen's default population for the space's dimensions() (at least 4).
  static std::size_t default_population(const SearchSpace& space);

 private:
  struct Result {
    double budget, rank_value, violation;
    std::vector<double> x;  ///< the trial's values, scaled (for the points to evaluate)
  };
  std::vector<double> scaled(const Config& config) const;
  /// Trial `trial_id`'s configuration with CMA-ES's parameters at `x` (scaled).
  Config config_at(std::int64_t trial_id, const std::vector<double>& x) const;
  /// Trial `trial_id`'s draw from the Gaussian now (its generation's), scaled.
  std::vector<double> draw(std::int64_t trial_id) const;
  /// Tells the Gaussian every generation before `generation`.
  void advance_to(std::int64_t generation);
  SearchSpace space_;
  std::uint64_t seed_;
  Goal goal_;
  std::size_t population_;
  std::int64_t first_;
  std::vector<const ParameterSpec*> dims_;
  std::optional<CmaEs> es_;  ///< made at the first generation's first draw
  std::int64_t passed_ = 0;  ///< generations before the one es_ draws (a generation too poorly measured tells it nothing)
  std::map<std::int64_t, Result> first_results_;
};

/// Gaussian-process Bayesian optimisation (gaussian_process.h; as Ray Tune's
/// BayesOptSearch or Optuna's GPSampler) that proposes a wave at once by
/// Thompson sampling (Kandasamy et al., AISTATS 2018): each trial takes the
/// best of 256 candidates under its own draw of the posterior, so a wave's
/// trials differ without waiting for each other's results. As BOHB, it models
/// the largest budget with enough results (min_points, two of them finite)
/// and proposes what random search would until one has them. It models the
/// parameters every trial has: numeric ranges scaled to [0, 1] as CMA-ES's,
/// choices and booleans one-hot; conditional and branched ones are random
/// search's draws. A diverged result, or one that breaks the constraints,
/// counts as the worst at its budget; a failed trial tells it nothing.
/// Under a stopping rule (`lockstep`: every trial of the waves before trains
/// on until the rule stops it) a trial with no result at a budget counts as
/// the worst there too, so the model of the survivors' budget knows where the
/// rule stopped trials. Hyperparameters are fitted on the latest 64 results,
/// the posterior conditioned on the latest 256.
class GpSearcher : public Searcher {
 public:
  GpSearcher(SearchSpace space, std::uint64_t seed, Goal goal, bool lockstep = false);
  Config suggest(std::int64_t trial_id) override;
  using Searcher::observe;
  void observe(std::int64_t trial_id, const Config& config, const TrialResult& result) override;

  /// Results needed at one budget before the model is used: the modelled parameters + 2.
  std::size_t min_points() const { return modelled_.size() + 2; }
  /// The parameters the model sees.
  static std::vector<const ParameterSpec*> modelled(const SearchSpace& space);

 private:
  struct Result {
    Config values;     ///< the modelled parameters' values
    double value;      ///< larger is better; NaN: diverged or breaks the constraints
  };
  std::vector<double> encode(const Config& values) const;
  /// The results the model of `budget` sees: that budget's, and under lockstep the worst for every trial stopped below it.
  std::map<std::int64_t, Result> at_budget(double budget) const;
  /// The GP of one budget's results (cached while they stay the same).
  const GaussianProcess& model(double budget, const std::map<std::int64_t, Result>& results);
  SearchSpace space_;
  std::uint64_t seed_;
  Goal goal_;
  bool lockstep_;
  std::vector<const ParameterSpec*> modelled_;
  std::map<double, std::map<std::int64_t, Result>> by_budget_;
  struct Cached {
    double budget = -1;
    std::vector<std::pair<std::int64_t, double>> results;  ///< every result it was built from (NaN: the worst)
    std::optional<GaussianProcess> gp;
    std::vector<std::int64_t> ids;  ///< the results it is conditioned on
  } cached_;
};

}  // namespace hfta::search
