#include "hfta/core/search_setup.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "hfta/search/asha_scheduler.h"
#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/median_stopping.h"
#include "hfta/search/pbt_scheduler.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/core/warm_start.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {

search::SearchSpace make_search_space(const SweepConfig& sweep) {
  return search::SearchSpace(sweep.parameters, sweep.search.searcher == Searcher::kQmc ? search::Sampling::kQuasi
                                                                                       : search::Sampling::kRandom);
}

namespace {

std::unique_ptr<search::Searcher> make_proposer(const SweepConfig& sweep) {
  switch (sweep.search.searcher) {
    case Searcher::kGrid:
      return std::make_unique<search::GridSearcher>(make_search_space(sweep), sweep.search.repeats);
    case Searcher::kTpe:
      return std::make_unique<search::TpeSearcher>(make_search_space(sweep), sweep.seed, sweep.goals(),
                                                   sweep.search.multivariate);
    case Searcher::kGp:
      return std::make_unique<search::GpSearcher>(make_search_space(sweep), sweep.seed, sweep.metric.goal,
                                                  sweep.search.stopping != Stopping::kNone);
    case Searcher::kCmaEs:
      return std::make_unique<search::CmaEsSearcher>(make_search_space(sweep), sweep.seed, sweep.metric.goal,
                                                     static_cast<std::size_t>(sweep.search.population),
                                                     static_cast<std::int64_t>(sweep.search.points.size()));
    case Searcher::kRandom:
    case Searcher::kQmc: break;  // (make_search_space samples quasi-randomly)
  }
  return std::make_unique<search::RandomSearcher>(make_search_space(sweep), sweep.seed);
}

}  // namespace

std::unique_ptr<search::Searcher> make_searcher(const SweepConfig& sweep) {
  auto proposer = make_proposer(sweep);
  warm_searcher(*proposer, sweep);  // (search.warm_start: the earlier sweeps' results, before any of this one's)
  if (sweep.search.points.empty()) return proposer;
  return std::make_unique<search::PointsFirstSearcher>(std::move(proposer), sweep.search.points,
                                                       make_search_space(sweep), sweep.seed);
}

std::size_t model_min_points(const SweepConfig& sweep) {
  if (sweep.search.searcher == Searcher::kGp) return search::GpSearcher(make_search_space(sweep), sweep.seed, sweep.metric.goal).min_points();
  return search::TpeSearcher(make_search_space(sweep), sweep.seed, sweep.metric.goal).min_points();
}

search::Waves trial_waves(const SweepConfig& sweep) {
  const auto& s = sweep.search;
  const bool one_bracket = s.method == SearchMethod::kSha || s.method == SearchMethod::kAsha || s.method == SearchMethod::kRandom;
  if (s.searcher == Searcher::kCmaEs && one_bracket && s.population >= 4) {
    return search::Waves::sized(static_cast<std::int64_t>(s.points.size()), s.population);
  }
  if (!models_results(s.searcher) || !one_bracket || s.trials < 1) return 1;
  if (s.waves > 0) return std::min(s.waves, s.trials);
  const auto needs = static_cast<std::int64_t>(model_min_points(sweep));
  std::int64_t waves = std::clamp<std::int64_t>(s.trials / needs, 1, 4);
  // The points to evaluate wait for no result: all in the first wave.
  const auto points = static_cast<std::int64_t>(s.points.size());
  while (waves > 1 && search::wave_end(s.trials, waves, 0) < points) --waves;
  return waves;
}

std::unique_ptr<search::Scheduler> make_scheduler(const SweepConfig& sweep) {
  const auto& b = sweep.budget;
  const auto& s = sweep.search;
  const search::Goals goal = sweep.goals();  // (pbt and the stopping rules take one metric: the loader says so)
  switch (s.method) {
    case SearchMethod::kHyperband:
      return std::make_unique<search::BracketScheduler>(
          search::make_hyperband(b.max, b.min, s.eta, goal, s.align_brackets, s.iterations));
    case SearchMethod::kSha:
      return std::make_unique<search::BracketScheduler>(
          std::vector<search::BracketPlan>{
              search::successive_halving_bracket(s.trials, b.max, b.min, s.eta)},
          goal, 0, trial_waves(sweep));
    case SearchMethod::kAsha:
      return std::make_unique<search::AshaScheduler>(s.trials, b.max, b.min, s.eta, goal,
                                                     s.promotion_wait, trial_waves(sweep));
    case SearchMethod::kGrid: {
      const search::GridSearcher grid(make_search_space(sweep), s.repeats);
      return std::make_unique<search::BracketScheduler>(
          std::vector<search::BracketPlan>{{0, {{grid.trial_count(), double(b.max)}}}}, goal);
    }
    case SearchMethod::kPbt:
      return std::make_unique<search::PbtScheduler>(s.population, b.max, b.min, goal.metric, s.quantile_fraction, sweep.seed,
                                                    s.burn_in_period);
    case SearchMethod::kRandom:
      if (s.stopping != Stopping::kNone) {
        const search::StoppingRule rule{static_cast<double>(s.grace_period), static_cast<std::size_t>(s.min_samples),
                                        s.percentile};
        return std::make_unique<search::MedianStoppingScheduler>(s.trials, b.max, b.min, goal.metric, rule,
                                                                 trial_waves(sweep));
      }
      break;
  }
  return std::make_unique<search::BracketScheduler>(
      std::vector<search::BracketPlan>{{0, {{s.trials, double(b.max)}}}}, goal, 0, trial_waves(sweep));
}

std::vector<double> rung_budgets(const SweepConfig& sweep) {
  const auto& s = sweep.search;
  const auto& b = sweep.budget;
  std::vector<double> out;
  if (s.method == SearchMethod::kHyperband || s.method == SearchMethod::kSha || s.method == SearchMethod::kAsha) {
    for (const auto& rung : search::successive_halving_bracket(1, b.max, b.min, s.eta).rungs) out.push_back(rung.r);
  } else if ((s.method == SearchMethod::kRandom && s.stopping != Stopping::kNone) || s.method == SearchMethod::kPbt) {
    out = search::lockstep_budgets(b.min, b.max);
  } else {
    out.push_back(static_cast<double>(b.max));
  }
  return out;
}

std::optional<RungStepsProblem> rung_steps_problem(const SweepConfig& sweep, std::int64_t train_rows) {
  if (sweep.budget.unit != BudgetUnit::kSamples) return std::nullopt;
  const auto rungs = rung_budgets(sweep);
  if (rungs.size() < 2) return std::nullopt;
  const bool median = sweep.search.stopping != Stopping::kNone;
  const bool pbt = sweep.search.method == SearchMethod::kPbt;
  for (const std::int64_t batch : batch_sizes(sweep)) {
    // What a step trains: a batch, or the whole set where it is smaller (TrialSettings::examples_per_step).
    const std::int64_t step = train_rows > 0 ? std::min(batch, train_rows) : batch;
    auto steps = [&](double budget) { return std::max<long long>(1, std::llround(budget / static_cast<double>(step))); };
    for (std::size_t k = 1; k < rungs.size(); ++k) {
      if (steps(rungs[k]) > steps(rungs[k - 1])) continue;
      // Median stopping's and PBT's last step is what is left of budget.max: that may be under a batch.
      const bool tail = (median || pbt) && k + 1 == rungs.size() && sweep.budget.min >= step;
      std::ostringstream what;
      what << (median ? to_string(sweep.search.stopping) + " stopping's steps"
               : pbt  ? std::string("population based training's generations")
                      : std::string("the rungs"))
           << " to " << budget_text(rungs[k - 1], "samples") << " and " << budget_text(rungs[k], "samples")
           << " would both train " << steps(rungs[k]) << " step" << (steps(rungs[k]) == 1 ? "" : "s")
           << " of batch_size " << batch;
      if (step < batch) {
        what << " (a step trains the whole table's " << train_rows << " training rows, fewer than a batch): ";
      } else {
        what << " (a step trains a whole batch): ";
      }
      if (tail) {
        what << "make budget.max a multiple of budget.min";
      } else {
        what << "give budget.min at least " << (step < batch ? "what a step trains (" : "one batch (") << step
             << " samples)";
      }
      what << ", or count the budget in steps";
      return RungStepsProblem{tail, what.str()};
    }
  }
  return std::nullopt;
}

const std::vector<std::string>& pbt_mutable_names() {
  // Each read per slot at every step (trial_settings.cpp's slot_of), none
  // shaping the model or its optimizer state.
  static const std::vector<std::string> names = {"lr",    "momentum", "weight_decay", "dropout", "beta1",
                                                 "beta2", "eps",      "dampening",    "alpha",   "rho",
                                                 "lr_decay", "label_smoothing", "grad_clip", "class_weight"};
  return names;
}

std::set<std::string> pbt_mutable(const SweepConfig& sweep) {
  std::set<std::string> named;  // by a condition: which parameters a trial has must not change
  for (const auto& p : sweep.parameters) {
    for (const auto& c : p.when) named.insert(c.parameter);
  }
  const auto& names = pbt_mutable_names();
  std::set<std::string> out;
  const auto& chosen = sweep.search.explore;
  for (const auto& p : sweep.parameters) {
    const bool one_value = search::is_categorical(p.distribution) && p.values.size() == 1;
    if (p.distribution != search::Distribution::kConst && !one_value && !named.count(p.name) &&
        std::find(names.begin(), names.end(), p.name) != names.end() &&
        (chosen.empty() || std::find(chosen.begin(), chosen.end(), p.name) != chosen.end())) {
      out.insert(p.name);
    }
  }
  return out;
}

std::int64_t pbt_planned_trials(const SweepConfig& sweep) {
  if (sweep.search.method != SearchMethod::kPbt) return 0;
  const auto& s = sweep.search;
  return search::PbtScheduler(s.population, sweep.budget.max, sweep.budget.min, sweep.metric.goal, s.quantile_fraction,
                              sweep.seed, s.burn_in_period)
      .planned_trials();
}

std::string task_key(const SweepConfig& sweep) {
  std::string key = sweep.task.model + "|" + sweep.task.dataset +
                    "|batch_size=" + std::to_string(sweep.task.batch_size);
  for (const auto& [name, value] : sweep.task.options) {
    // A parameter of the same name overrides the option per trial: the packer
    // adds it when it is unfused, and leaves it out when it fuses.
    if (sweep.find_parameter(name)) continue;
    // No augmentation: the key of directories written before flip and crop
    // existed, whose kept throughput and strategies it finds again.
    const auto* model = trainers::find_model(sweep.task.model);
    const auto* option = model ? model->find_option(name) : nullptr;
    if (option && option->augments && search::to_string(value) == option->default_value) continue;
    key += "|" + name + "=" + search::to_string(value);
  }
  return key;
}

search::Packer make_packer(const SweepConfig& sweep, bool fuse) {
  std::set<std::string> unfused;
  for (const auto& p : sweep.parameters) {
    if (!p.fuse) unfused.insert(p.name);
  }
  return search::Packer(task_key(sweep), unfused, sweep.fusion.max_array,
                        fuse && sweep.fusion.enabled == FusionMode::kAuto);
}

std::vector<std::int64_t> batch_sizes(const SweepConfig& sweep) {
  std::set<std::int64_t> out;
  const auto branches = sweep.parameter_branches("batch_size");
  if (!search::always_present(branches, sweep.parameters)) out.insert(sweep.task.batch_size);
  for (const auto* p : branches) {
    if (search::is_categorical(p->distribution)) {
      for (const auto& v : p->values) {
        if (search::is_numeric(v)) out.insert(std::llround(search::as_double(v)));
      }
      continue;
    }
    const double q = p->distribution == search::Distribution::kQuantized && p->q > 0 ? p->q : 1.0;
    const double first = q == 1.0 ? std::ceil(p->min) : p->min;
    const auto count = static_cast<std::int64_t>(std::floor((p->max - first) / q + 1e-9)) + 1;
    for (std::int64_t k = 0; k < count; k = count <= 4096 || k + 1 == count ? k + 1 : count - 1) {
      out.insert(std::llround(first + static_cast<double>(k) * q));
    }
  }
  return {out.rbegin(), out.rend()};
}

}  // namespace hfta::core
