#include "hfta/core/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "hfta/core/array_sizer.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/data_notes.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/pbt_scheduler.h"
#include "hfta/trainers/footprint.h"

namespace hfta::core {
namespace {

std::string mib(double bytes) {
  std::ostringstream out;
  out.precision(bytes < 10.0 * (1 << 20) ? 2 : 0);
  out << std::fixed << bytes / (1 << 20) << " MiB";
  return out.str();
}

// Whether search.warm_start's results alone give the model what it needs
// (TPE: trials with results; the GP: results at one budget), two of them
// finite (a diverged one counts as the worst), as they decide to use it.
bool warm_results_suffice(const SweepConfig& sweep) {
  std::set<std::int64_t> trials, finite_trials;
  std::map<double, std::pair<std::size_t, std::size_t>> at;  // budget -> results, finite ones
  for (const auto& w : sweep.search.warm_results) {
    const bool finite = w.result.status != search::TrialStatus::kDiverged && std::isfinite(w.result.metric);
    trials.insert(w.result.trial_id);
    if (finite) finite_trials.insert(w.result.trial_id);
    ++at[w.result.budget].first;
    at[w.result.budget].second += finite;
  }
  const std::size_t needs = model_min_points(sweep);
  if (sweep.search.searcher != Searcher::kGp) return trials.size() >= needs && finite_trials.size() >= 2;
  for (const auto& [budget, n] : at) {
    if (n.first >= needs && n.second >= 2) return true;
  }
  return false;
}

}  // namespace

SweepPlan make_plan(const SweepConfig& sweep, bool fuse, const std::string& device,
                    double available_bytes, int sharing) {
  SweepPlan plan;
  plan.budget_bytes = available_bytes * sweep.fusion.memory_fraction;
  plan.sharing = std::max(1, sharing);
  ArraySizer sizer(sweep, available_bytes);
  plan.fused = fuse && sweep.fusion.enabled == FusionMode::kAuto;
  plan.device = device;
  auto scheduler = make_scheduler(sweep);
  const auto brackets = scheduler->plan();
  plan.trained_budget = search::trained_budget(brackets);
  // Li et al.'s sum counts each rung's trials as trained from scratch: a
  // Hyperband, successive halving or ASHA total. Random search, a grid and
  // population based training train each trial (or member) on through their
  // budgets, so their total is what they train, as `plan` prints it.
  const bool halving = sweep.search.method == SearchMethod::kHyperband || sweep.search.method == SearchMethod::kSha ||
                       sweep.search.method == SearchMethod::kAsha;
  plan.total_budget = halving ? search::total_budget(brackets) : plan.trained_budget;
  for (const auto& b : brackets) {
    PlannedBracket pb{b.s, {}, b.first_round, b.iteration};
    for (const auto& r : b.rungs) pb.rungs.push_back({r.n, r.r, std::nullopt});
    plan.brackets.push_back(std::move(pb));
  }

  // The first rungs' trials are known now, whichever round (and wave) each starts
  // in: pack them as training would, wave by wave. A model-based searcher proposes
  // exactly what random search would until it has results, so TPE's later
  // waves and the brackets that start after the first round are known only
  // where no parameter it proposes decides the arrays (a fuse: false one that
  // varies): elsewhere their arrays are left unknown (null), as later rungs'.
  bool keys_vary = false;
  // (A grid's values are the trial's in the cycle, TPE's or not.)
  for (const auto& p : sweep.parameters) {
    keys_vary |= !p.fuse && p.distribution != search::Distribution::kConst && p.distribution != search::Distribution::kGrid;
  }
  // (Unfused too: each trial's array is its own, of the key TPE proposes.)
  const bool learns = (models_results(sweep.search.searcher) || sweep.search.searcher == Searcher::kCmaEs) && keys_vary;
  const auto points = static_cast<std::int64_t>(sweep.search.points.size());
  auto searcher = make_searcher(sweep);
  const auto packer = make_packer(sweep, fuse);
  SweepConfig all_at_once = sweep;
  all_at_once.search.waves = 1;
  all_at_once.search.searcher = Searcher::kRandom;  // (whose scheduler starts no waves: CMA-ES's generations are)
  // Every bracket's first rung in round 0, Hyperband's later iterations too.
  auto at_once = make_scheduler(all_at_once);
  if (sweep.search.method == SearchMethod::kHyperband) {
    auto flat = brackets;
    for (auto& b : flat) b.first_round = 0;
    at_once = std::make_unique<search::BracketScheduler>(std::move(flat), sweep.goals());
  }
  const search::Waves waves = trial_waves(sweep);
  auto capacity = [&](const std::string& key, const search::Config& c) { return sizer.capacity(key, c); };
  for (const auto& job : at_once->next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
    if (job.rung != 0) continue;
    const auto n = static_cast<std::int64_t>(job.trials.size());
    std::vector<PlannedArray> arrays;
    bool known = true;
    for (std::int64_t wave = 0, begin = 0; wave < waves.among(n); begin = waves.end(n, wave++)) {
      const bool before_results = wave == 0 && plan.brackets[job.bracket].first_round == 0;
      const auto last = job.trials.at(static_cast<std::size_t>(waves.end(n, wave) - 1)).trial_id;
      if (learns && !before_results && last >= points) known = false;  // (a wave of points only is known)
      std::vector<search::PackItem> items;
      for (auto i = begin; i < waves.end(n, wave); ++i) {
        const auto& t = job.trials[static_cast<std::size_t>(i)];
        items.push_back({t.trial_id, searcher->suggest(t.trial_id), t.from_budget, job.budget});
      }
      std::map<std::string, search::Config> example;
      for (const auto& item : items) example.emplace(packer.fusion_key(item.params), item.params);
      for (const auto& a : packer.pack(items, capacity)) {
        const auto models = static_cast<std::int64_t>(a.trial_ids.size());
        arrays.push_back({a.key, models, sizer.predicted_bytes(a.key, example.at(a.key), models)});
      }
    }
    if (known) plan.brackets[job.bracket].rungs[0].arrays = std::move(arrays);
    plan.brackets[job.bracket].rungs[0].waves = waves;
  }
  return plan;
}

nlohmann::json to_json(const SweepPlan& plan, const SweepConfig& sweep) {
  using nlohmann::json;
  json brackets = json::array();
  for (const auto& b : plan.brackets) {
    json rungs = json::array();
    for (const auto& r : b.rungs) {
      // The round it (first) trains in: successive halving's later rungs wait for every wave of the first.
      const auto i = static_cast<std::int64_t>(rungs.size());
      const std::int64_t waited = sweep.search.method == SearchMethod::kSha && i > 0 ? b.rungs[0].waves.among(b.rungs[0].n) - 1 : 0;
      json rung = {{"n", r.n}, {"r", r.r}, {"round", b.first_round + i + waited}, {"waves", r.waves.among(r.n)}};
      if (r.arrays) {
        json arrays = json::array();
        for (const auto& a : *r.arrays) {
          // Null for models whose size is known only once they are built.
          arrays.push_back({{"key", a.key},
                            {"models", a.models},
                            {"predicted_bytes", a.predicted_bytes ? json(*a.predicted_bytes)
                                                                  : json(nullptr)}});
        }
        rung["arrays"] = arrays;
      } else {
        rung["arrays"] = nullptr;
      }
      rungs.push_back(rung);
    }
    brackets.push_back({{"s", b.s}, {"iteration", b.iteration}, {"rungs", rungs}});
  }
  json out = {{"format", 1},
          {"name", sweep.name},
          {"method", to_string(sweep.search.method)},
          {"searcher", to_string(sweep.search.searcher)},
          {"eta", sweep.search.eta},
          {"budget",
           {{"unit", to_string(sweep.budget.unit)},
            {"min", sweep.budget.min},
            {"max", sweep.budget.max}}},
          {"device", plan.device},
          {"fusion", plan.fused ? "auto" : "off"},
          {"max_array", sweep.fusion.max_array},
          {"memory_budget_bytes", plan.budget_bytes},
          {"brackets", brackets},
          {"total_budget", plan.total_budget},
          {"trained_budget", plan.trained_budget}};
  if (sweep.search.searcher == Searcher::kTpe) out["multivariate"] = sweep.search.multivariate;
  if (sweep.search.method == SearchMethod::kPbt) {
    const auto& s = sweep.search;
    out["pbt"] = {{"population", s.population},
                  {"replaced_per_generation", search::pbt_quantile(s.population, s.quantile_fraction)},
                  {"trials", pbt_planned_trials(sweep)},
                  {"explored", pbt_mutable(sweep)},
                  {"burn_in_period", s.burn_in_period}};
  }
  if (!sweep.search.warm_start.empty()) {  // what the searcher starts from, as validate and plan say it
    std::set<std::int64_t> trials;
    for (const auto& w : sweep.search.warm_results) trials.insert(w.result.trial_id);
    out["warm_start"] = {{"sources", sweep.search.warm_start},
                         {"results", sweep.search.warm_results.size()},
                         {"trials", trials.size()}};
  }
  if (!sweep.objectives.empty()) {
    out["objectives"] = json::array();
    for (const auto& o : sweep.objectives) out["objectives"].push_back({{"name", o.name}, {"goal", to_string(o.goal)}});
  }
  return out;
}

std::string to_text(const SweepPlan& plan, const SweepConfig& sweep) {
  std::ostringstream out;
  const std::string unit = to_string(sweep.budget.unit);
  out << "plan for '" << sweep.name << "': " << to_string(sweep.search.method);
  if (sweep.search.searcher != Searcher::kRandom && sweep.search.searcher != Searcher::kGrid) {
    out << " with " << (sweep.search.multivariate ? "multivariate " : "") << to_string(sweep.search.searcher);
  }
  const bool pbt = sweep.search.method == SearchMethod::kPbt;
  if (sweep.search.method != SearchMethod::kRandom && sweep.search.method != SearchMethod::kGrid && !pbt) {
    out << ", eta " << sweep.search.eta;
  }
  out << ", budget " << budget_range(sweep) << ", on " << plan.device << (sweep.task.precision == "fp32" ? "" : " in " + sweep.task.precision + " autocast")
      << ", fusion " << (plan.fused ? "auto (at most " + std::to_string(sweep.fusion.max_array) +
                                                  (sweep.fusion.max_array == 1 ? " model per array)" : " models per array)")
                                    : std::string("off"))
      << "\n";
  // Random and grid search have no brackets: their trials, and the points a
  // stopping rule compares them at, are listed as they are.
  const bool bracketed = sweep.search.method != SearchMethod::kRandom && sweep.search.method != SearchMethod::kGrid;
  for (const auto& b : plan.brackets) {
    if (pbt) {
      out << "population of " << sweep.search.population << ", in generations\n";
    } else if (!bracketed) {
      if (b.rungs.size() > 1) out << "trials, compared by the stopping rule at each budget\n";
    } else {
      out << "bracket s=" << b.s << (sweep.search.iterations > 1 ? " of iteration " + std::to_string(b.iteration) : "")
          << "\n";
    }
    for (std::size_t i = 0; i < b.rungs.size(); ++i) {
      const auto& r = b.rungs[i];
      if (!bracketed) {
        out << "  ";
      } else {
        out << (pbt ? "  generation " : "  rung ") << i << ": ";
      }
      out << r.n << " trial" << (r.n == 1 ? "" : "s") << " to " << budget_text(r.r, unit);
      if (plan.brackets.size() > 1) out << " in round " << b.first_round + i;
      if (const auto waves = r.waves.among(r.n); waves > 1) {
        out << " in " << waves << " waves of";
        for (std::int64_t w = 0; w < waves; ++w) {
          out << (w ? ", " : " ") << r.waves.end(r.n, w) - (w ? r.waves.end(r.n, w - 1) : 0);
        }
      }
      if (r.arrays) {
        out << "; " << r.arrays->size() << " array" << (r.arrays->size() == 1 ? "" : "s") << ":";
        // Each array's size, a run of more than three alike once, counted
        // (a million trials made one line of 15,625 alike).
        const auto& arrays = *r.arrays;
        for (std::size_t k = 0; k < arrays.size();) {
          std::size_t alike = 1;
          while (k + alike < arrays.size() && arrays[k + alike].models == arrays[k].models &&
                 arrays[k + alike].predicted_bytes == arrays[k].predicted_bytes) {
            ++alike;
          }
          const std::size_t shown = alike > 3 ? 1 : alike;
          for (std::size_t j = 0; j < shown; ++j) {
            out << " B=" << arrays[k].models;
            if (arrays[k].predicted_bytes) out << " (" << mib(*arrays[k].predicted_bytes) << ")";
          }
          if (alike > 3) out << " x" << alike;
          k += alike;
        }
      }
      out << "\n";
    }
  }
  if (pbt) {
    out << "total budget: " << budget_text(plan.trained_budget, unit) << " (the population to budget.max)\n";
  } else if (!bracketed) {
    // Each trial trains on through a stopping rule's budgets: what it trains
    // is the trained budget, not the sum over them.
    const bool stopping = plan.brackets.size() == 1 && plan.brackets.front().rungs.size() > 1;
    out << "total budget: " << budget_text(plan.trained_budget, unit)
        << (stopping ? " (every trial to budget.max; less where the stopping rule stops trials)\n"
                     : " (every trial to budget.max)\n");
  } else {
    out << "total budget: " << budget_text(plan.total_budget, unit)
        << " (sum of n_i r_i); trained with checkpoint resume: " << budget_text(plan.trained_budget, unit) << "\n";
  }
  // With several workers on a device, each plans within its share: said so,
  // beside the device's free memory as a user would measure it.
  const double free_bytes = plan.budget_bytes / sweep.fusion.memory_fraction;
  const std::string share = "1/" + std::to_string(plan.sharing) + " of the " + mib(free_bytes * plan.sharing) + " free on " +
                            plan.device + ", shared by " + std::to_string(plan.sharing) + " workers";
  out << "memory: arrays planned within " << mib(plan.budget_bytes)
      << (plan.sharing > 1 ? " a worker (" : " (") << sweep.fusion.memory_fraction * 100
      << (plan.sharing > 1 ? "% of its share, " + share : "% of the free memory of " + plan.device)
      << "); sizes of " << sweep.task.model << " models are "
      << (trainers::estimate_footprint(sweep.task.model, {}) ? "estimated from parameter and activation counts"
                                                              : "known once they are built")
      << "\n";
  // One model past the memory: no array size helps, each of its trials will fail.
  double largest_alone = 0;
  for (const auto& b : plan.brackets) {
    for (const auto& r : b.rungs) {
      for (const auto& array : r.arrays ? *r.arrays : std::vector<PlannedArray>{}) {
        if (array.models == 1 && array.predicted_bytes) largest_alone = std::max(largest_alone, *array.predicted_bytes);
      }
    }
  }
  // Past the share fusion.memory_fraction leaves but within the free memory, a
  // model still trains, alone; past the free memory it does not.
  if (largest_alone > free_bytes) {
    out << "note: one " << sweep.task.model << " model is predicted to need " << mib(largest_alone) << ", more than "
        << (plan.sharing > 1 ? "a worker's " + mib(free_bytes) + " (" + share + ")" : "the " + mib(free_bytes) + " free on " + plan.device)
        << ": its trials will likely fail out of memory (make it smaller: its task options or batch_size"
        << (plan.sharing > 1 ? "; or run fewer workers" : "") << ")\n";
  } else if (largest_alone > plan.budget_bytes && plan.fused) {
    // (Unfused, every trial trains alone anyway; and where two models pass the
    // free memory, no fraction fuses them.)
    const bool two_fit = 2 * largest_alone <= free_bytes;
    out << "note: one " << sweep.task.model << " model is predicted to need " << mib(largest_alone) << ", more than the "
        << mib(plan.budget_bytes) << " arrays are planned within (fusion.memory_fraction " << sweep.fusion.memory_fraction
        << (plan.sharing > 1 ? " of a worker's share of the free memory" : " of the free memory")
        << "): its trials train alone, unfused"
        << (two_fit ? " (raise fusion.memory_fraction to fuse them)" : "") << "\n";
  }
  // Rungs are Hyperband's r_i = R / eta^k; Ray Tune's ASHA counts up from its
  // grace period instead, so a budget.min off this ladder is worth a word.
  const bool laddered = sweep.search.method == SearchMethod::kHyperband ||
                        sweep.search.method == SearchMethod::kSha || sweep.search.method == SearchMethod::kAsha;
  double smallest = std::numeric_limits<double>::infinity();
  for (const auto& b : plan.brackets) {
    if (!b.rungs.empty()) smallest = std::min(smallest, b.rungs.front().r);
  }
  if (laddered && std::isfinite(smallest) && std::abs(smallest - sweep.budget.min) > 1e-9 * smallest) {
    const double min = static_cast<double>(sweep.budget.min), eta = static_cast<double>(sweep.search.eta);
    // (At least one step up: a budget.max of budget.min has one rung, no halving.)
    const double steps =
        std::max(1.0, std::round(std::log(static_cast<double>(sweep.budget.max) / smallest) / std::log(eta)));
    out << "note: rungs are budget.max / " << sweep.search.eta << "^k, so the smallest is " << budget_text(smallest, unit)
        << ", not budget.min " << sweep.budget.min << " (for rungs from " << sweep.budget.min << ", make budget.max "
        << sweep.budget.min << " x " << sweep.search.eta << "^k: " << std::llround(min * std::pow(eta, steps)) << " or "
        << std::llround(min * std::pow(eta, steps + 1)) << ")\n";
  }
  // A quantized range whose max is off its grid ends at the grid's last point below it.
  const search::SearchSpace space = make_search_space(sweep);  // (held: parameters() refers into it)
  for (const auto& p : space.parameters()) {
    if (p.distribution != search::Distribution::kQuantized) continue;
    const double last = p.min + search::quantized_steps(p) * p.q;
    if ((p.max - p.min) / p.q - search::quantized_steps(p) > 1e-9) {  // (in steps: eps of 1e-9 by 4e-9 too)
      out << "note: " << parameter_path(p) << ": max " << search::to_string(p.max) << " is not on the grid "
          << search::to_string(p.min) << " + k x " << search::to_string(p.q) << ", so its largest value is "
          << search::to_string(search::quantize(last, p)) << "\n";
    }
  }
  const bool rounds_of_new_trials =
      sweep.search.method == SearchMethod::kHyperband && (sweep.search.align_brackets || sweep.search.iterations > 1);
  const std::int64_t waves = trial_waves(sweep).among(sweep.search.trials);
  const bool warm_enough = warm_results_suffice(sweep);
  const bool gp = sweep.search.searcher == Searcher::kGp;
  const std::string learner = gp ? "the Gaussian process" : "TPE";
  // What its first proposals come of: the earlier sweeps' results, or none (random search's draws).
  auto first_proposals = [&](const std::string& first) {
    std::ostringstream o;
    if (warm_enough) {
      o << " and the earlier results of search.warm_start (" << first << " from those alone)";
    } else {
      o << " (" << first << ", and any before " << (gp ? "some budget has " : "") << model_min_points(sweep)
        << (gp ? " results" : " trials have results") << ", as random search would)";
    }
    return o.str();
  };
  if (sweep.search.searcher == Searcher::kCmaEs) {
    const auto space = make_search_space(sweep);
    std::string names;
    for (const auto* p : search::CmaEsSearcher::dimensions(space)) names += (names.empty() ? "" : ", ") + p->name;
    out << "note: CMA-ES draws each generation of " << sweep.search.population
        << " new trials from a Gaussian over " << names
        << " that the generations before it moved, ranked by their first results"
        << (sweep.search.points.empty() ? "" : "; it starts at the best point to evaluate")
        << (sweep.search.warm_results.empty() ? ""
            : sweep.search.points.empty()   ? "; it starts at the best earlier result of search.warm_start"
                                            : " or earlier result of search.warm_start")
        << "; other parameters are drawn as random search draws them\n";
    const auto drawn = sweep.search.trials - static_cast<std::int64_t>(sweep.search.points.size());
    if (drawn <= 0) {
      out << "note: every trial is a point to evaluate, so CMA-ES draws none\n";
    } else if (drawn <= sweep.search.population) {
      out << "note: the " << drawn << " trials CMA-ES draws are at most one generation of " << sweep.search.population
          << ", so its Gaussian never moves: raise search.trials or lower search.population\n";
    }
    std::string unfused;
    for (const auto* p : search::CmaEsSearcher::dimensions(space)) {
      if (!p->fuse) unfused += (unfused.empty() ? "" : ", ") + p->name;
    }
    if (!unfused.empty()) {
      out << "note: CMA-ES searches " << unfused
          << " (fuse: false), so a generation's trials differ in it and train in arrays of their own values\n";
    }
  } else if (models_results(sweep.search.searcher) && waves > 1) {
    out << "note: " << learner << " proposes each wave of new trials from the results of the waves before"
        << first_proposals("the first wave")
        << (gp ? "; each trial of a wave is the best of its candidates under its own draw of the posterior"
               : "; each trial counts the wave's trials before it as bad results (Optuna's constant liar)")
        << "\n";
    if (const auto first = trial_waves(sweep).end(sweep.search.trials, 0);
        !warm_enough && first < static_cast<std::int64_t>(model_min_points(sweep))) {
      out << "note: the first wave's " << first << " results are fewer than the " << model_min_points(sweep)
          << " the model needs, so the next wave is random search's too: fewer, larger waves learn sooner\n";
    }
  } else if (models_results(sweep.search.searcher) && !rounds_of_new_trials && warm_enough) {
    out << "note: every trial starts in the first round, so " << learner
        << " proposes them all from the earlier results of search.warm_start alone\n";
  } else if (models_results(sweep.search.searcher) && !rounds_of_new_trials) {
    const std::string across = sweep.search.method == SearchMethod::kHyperband
                                   ? "align_brackets: true"
                                   : "search.waves above 1, with a first wave of at least " +
                                         std::to_string(model_min_points(sweep)) + " trials";
    out << "note: every trial starts in the first round, before any result, so " << learner
        << " proposes what random search would (it learns across rounds: " << across << ")\n";
  } else if (models_results(sweep.search.searcher)) {  // Hyperband's later rounds
    out << "note: " << learner << " proposes the trials a round starts from the results of the rounds before"
        << first_proposals("those of round 0") << "\n";
  }
  if (sweep.search.method == SearchMethod::kAsha && waves > 1) {
    out << "note: ASHA promotes the top 1/" << sweep.search.eta
        << " of a rung's results as they come in, so as the waves arrive it can promote more trials than the "
           "counts above, which are those of every trial at once\n";
  }
  if (sweep.search.stopping != Stopping::kNone) {
    const auto& b = sweep.budget;
    const std::int64_t first = std::min((sweep.search.grace_period + b.min - 1) / b.min * b.min, b.max);
    out << "note: " << to_string(sweep.search.stopping) << " stopping trains in steps of " << b.min << " " << unit
        << " and first compares the trials at " << first << " " << unit
        << "; each step's trial counts above are the most it can hold"
        << (waves > 1 ? ", and the waves train one after another, each in these steps" : "") << "\n";
  }
  if (pbt) {
    const auto& s = sweep.search;
    const std::int64_t q = search::pbt_quantile(s.population, s.quantile_fraction);
    std::string names;
    for (const auto& n : pbt_mutable(sweep)) names += (names.empty() ? "" : ", ") + n;
    out << "note: population based training trains its " << s.population << " members together, "
        << budget_text(static_cast<double>(sweep.budget.min), unit) << " a generation; after each, the worst " << q
        << " (those that stopped or diverged counted worst, and all of them replaced) take the state of one of the best "
        << q << " as new trials, with " << names
        << " explored"
        << (s.burn_in_period > 0 ? " (from the first generation ending at " + std::to_string(s.burn_in_period) +
                                       " " + unit + " or later)"
                                 : std::string())
        << ": about " << pbt_planned_trials(sweep)
        << " trials in all\n";
  }
  if (!sweep.objectives.empty()) {
    std::string names;
    for (const auto& o : sweep.objectives) names += (names.empty() ? "" : ", ") + o.name;
    const bool promotes = sweep.search.method != SearchMethod::kRandom && sweep.search.method != SearchMethod::kGrid;
    out << "note: " << sweep.objectives.size() << " objectives (" << names << ")" << (promotes ? ": rungs promote by Pareto front (then crowding distance)" : "")
        << (sweep.search.searcher == Searcher::kTpe ? (promotes ? ", and TPE's good group is" : ": TPE's good group is") +
                                                          std::string(" the first by Pareto front")
                                                    : std::string())
        << "; results.json lists the Pareto front of the trials that finish training\n";
  }
  if (!sweep.constraints.empty()) {
    out << "note: results outside the constraints rank after every result within them (then by the least "
           "violation), and are never best\n";
  }
  for (const auto& note : plan_notes(sweep)) out << note << "\n";
  return out.str();
}

}  // namespace hfta::core
