#include "hfta/core/sweep_summary.h"

#include <cmath>
#include <cstdint>
#include <iomanip>

#include <set>
#include <algorithm>
#include <sstream>

#include "hfta/core/search_setup.h"
#include "hfta/search/pbt_scheduler.h"

namespace hfta::core {
namespace {

std::string list(const std::vector<search::ParamValue>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + search::display(v);
  return "{" + out + "}";
}

std::string search_line(const SweepConfig& s) {
  std::ostringstream out;
  out << to_string(s.search.method);
  switch (s.search.method) {
    case SearchMethod::kGrid: out << ", " << s.search.repeats << " run(s) per grid point"; break;
    case SearchMethod::kRandom:
      out << ", " << s.search.trials << " trials, " << to_string(s.search.searcher)
          << " searcher, stopping " << to_string(s.search.stopping);
      if (s.search.stopping == Stopping::kPercentile) out << " " << s.search.percentile;
      if (s.search.stopping != Stopping::kNone) {
        out << " (grace_period " << s.search.grace_period << ", min_samples " << s.search.min_samples << ")";
      }
      break;
    case SearchMethod::kHyperband:
      out << ", eta " << s.search.eta << ", " << to_string(s.search.searcher) << " searcher"
          << (s.search.align_brackets ? "" : ", brackets not aligned")
          << (s.search.iterations > 1 ? ", " + std::to_string(s.search.iterations) + " iterations" : "");
      break;
    case SearchMethod::kSha:
    case SearchMethod::kAsha:
      out << ", eta " << s.search.eta << ", " << s.search.trials << " trials, "
          << to_string(s.search.searcher) << " searcher";
      if (s.search.method == SearchMethod::kAsha) {
        out << ", promotion wait " << s.search.promotion_wait << " s";
      }
      break;
    case SearchMethod::kPbt: {
      out << ", population " << s.search.population << ", " << to_string(s.search.searcher)
          << " searcher, every budget.min the worst " << search::pbt_quantile(s.search.population, s.search.quantile_fraction)
          << " take the state of the best " << search::pbt_quantile(s.search.population, s.search.quantile_fraction)
          << ", exploring";
      std::string names;
      for (const auto& n : pbt_mutable(s)) names += (names.empty() ? " " : ", ") + n;
      out << names << " (resample probability " << s.search.resample_probability << ", factors";
      for (double f : s.search.perturbation_factors) out << " " << f;
      out << ")";
      if (s.search.burn_in_period > 0) out << ", none before " << s.search.burn_in_period;
      break;
    }
  }
  if (s.search.searcher == Searcher::kTpe && s.search.multivariate) out << ", multivariate TPE";
  if (s.search.searcher == Searcher::kCmaEs) {
    out << ", CMA-ES generations of " << s.search.population;
  } else if (const auto waves = trial_waves(s).among(s.search.trials); waves > 1) {
    out << ", new trials in " << waves << " waves";
  }
  if (const auto n = s.search.points.size(); n > 0) {
    out << ", " << (n == 1 ? "trial 0" : "trials 0-" + std::to_string(n - 1)) << " from points_to_evaluate";
  }
  if (!s.search.warm_start.empty()) {
    std::set<std::int64_t> trials;
    for (const auto& w : s.search.warm_results) trials.insert(w.result.trial_id);
    out << ", starting from " << s.search.warm_results.size() << " result" << (s.search.warm_results.size() == 1 ? "" : "s")
        << " of " << trials.size() << " earlier trial" << (trials.size() == 1 ? "" : "s") << " (search.warm_start)";
  }
  return out.str();
}

}  // namespace

std::string describe(const search::ParameterSpec& p) {
  using search::Distribution;
  std::ostringstream out;
  out << search::distribution_name(p.distribution);
  switch (p.distribution) {
    case Distribution::kConst: out << " " << search::display(p.values.at(0)); break;
    case Distribution::kChoice:
    case Distribution::kGrid:
      out << " " << list(p.values);
      if (!p.probabilities.empty()) {
        std::vector<search::ParamValue> chances(p.probabilities.begin(), p.probabilities.end());
        out << " with probabilities " << list(chances);
      }
      break;
    default:
      out << " [" << search::to_string(p.min) << ", " << search::to_string(p.max) << "]";
      if (p.distribution == Distribution::kQuantized) {
        out << " step " << search::to_string(p.q) << (p.log ? " log-spaced" : "");
      }
  }
  for (const auto& c : p.when) out << ", when " << c.parameter << " in " << list(c.values);
  if (!p.fuse) out << ", fuse: false";
  return out.str();
}

// "configs/data/wine_train.csv, test configs/data/wine_test.csv: 114 rows to
// train on, ...", or before the table is read, the defaults it will take.
std::string describe_table(const TableOptions& t, std::int64_t validation_size) {
  std::string out = t.train_file + (t.test_file.empty() ? "" : ", test " + t.test_file);
  if (t.features > 0) return out + ": " + table_counts(t);
  return out + " (validation: " +
         (validation_size > 0 ? std::to_string(validation_size) + " rows" : std::string("a fifth of its rows")) +
         "; label " + (t.label.empty() ? std::string("the last column") : t.label) + ")";
}


std::string table_counts(const TableOptions& t) {
  std::string out = std::to_string(t.train_rows) + (t.train_rows == 1 ? " row" : " rows") + " to train on, " + std::to_string(t.validation_rows) +
                    " to validate" + (t.test_file.empty() ? "" : ", " + std::to_string(t.test_rows) + " to test") +
                    "; " + std::to_string(t.features) + (t.features == 1 ? " feature" : " features") + "; label " +
                    t.label_column + (t.regression ? ", a number to predict" : ", " + std::to_string(t.classes) + " classes");
  return out;
}

std::string summarize(const SweepConfig& s) {
  std::ostringstream out;
  out << "  task        " << s.task.model << " on " << s.task.dataset << ", batch "
      << s.task.batch_size << ", loss " << s.task.loss;
  if (s.task.precision != "fp32") out << ", " << s.task.precision << " autocast";
  if (s.task.validation_size > 0) {
    out << ", " << s.task.validation_size << (s.task.validation_size == 1 ? " validation example" : " validation examples");
  }
  if (s.task.eval_steps > 0) out << ", evaluated every " << s.task.eval_steps << " steps";
  std::string options;
  for (const auto& [name, value] : s.task.options) {
    // An option a parameter sets per trial is tuned, not this value; one a
    // constant parameter (value:) sets takes that value.
    const auto set = std::find_if(s.parameters.begin(), s.parameters.end(),
                                  [&](const search::ParameterSpec& p) { return p.name == name; });
    const bool constant = set != s.parameters.end() && set->distribution == search::Distribution::kConst &&
                          set->when.empty() && std::count_if(s.parameters.begin(), s.parameters.end(), [&](const auto& p) {
                            return p.name == name;
                          }) == 1 && !set->values.empty();
    const std::string shown = set == s.parameters.end() ? search::to_string(value)
                              : constant                 ? search::to_string(set->values.front())
                                                         : std::string("tuned");
    options += (options.empty() ? "" : ", ") + name + "=" + shown;
  }
  if (!options.empty()) out << " (" << options << ")";
  if (s.task.dataset == "csv") out << "\n  data        " << describe_table(s.task.table, s.task.validation_size);
  out << "\n  metric      " << s.metric.name << " (" << to_string(s.metric.goal) << ")";
  for (std::size_t i = 1; i < s.objectives.size(); ++i) {
    out << (i + 1 == s.objectives.size() ? " and " : ", ") << s.objectives[i].name << " ("
        << to_string(s.objectives[i].goal) << ")";
  }
  if (!s.objectives.empty()) out << ": " << s.objectives.size() << " objectives, trials ranked by Pareto front";
  if (s.metric.target) {
    out << ", the sweep ends after the round in which a trial reaches " << *s.metric.target;
  }
  const auto bound = [](double v) {  // 200000, not 2e+05
    std::ostringstream text;
    text << std::setprecision(12) << v;
    return text.str();
  };
  for (std::size_t i = 0; i < s.constraints.size(); ++i) {
    const auto& c = s.constraints[i];
    out << (i == 0 ? "\n  constraints " : ", ") << (c.min ? bound(*c.min) + " <= " : std::string()) << c.name
        << (c.max ? " <= " + bound(*c.max) : std::string());
  }
  out << "\n  budget      " << budget_range(s) << "\n"
      << "  search      " << search_line(s) << ", seed " << s.seed << "\n"
      << "  fusion      " << to_string(s.fusion.enabled);
  if (s.fusion.enabled != FusionMode::kOff) {
    out << ", at most " << s.fusion.max_array << (s.fusion.max_array == 1 ? " model per array, " : " models per array, ") << s.fusion.memory_fraction * 100
        << "% of device memory, " << s.fusion.min_gain * 100 << "% faster than one model or no fusion";
  }
  out << "\n";
  if (s.early_stopping.enabled) {
    out << "  early stop  patience " << s.early_stopping.patience << ", min_delta "
        << s.early_stopping.min_delta;
    if (s.early_stopping.divergence > 0) out << ", diverged above " << s.early_stopping.divergence;
    out << "\n";
  }
  std::set<std::string> names;
  for (const auto& p : s.parameters) names.insert(p.name);
  out << "  parameters  " << names.size() << "\n";
  // A branch is shown as written, lr[0]: parameter_path without "parameters.".
  auto shown = [](const search::ParameterSpec& p) { return parameter_path(p).substr(std::string("parameters.").size()); };
  size_t width = 0;
  for (const auto& p : s.parameters) width = std::max(width, shown(p).size());
  for (const auto& p : s.parameters) {
    out << "    " << std::left << std::setw(static_cast<int>(width) + 2) << shown(p) << describe(p)
        << "\n";
  }
  return out.str();
}

std::string budget_range(const SweepConfig& s) {
  const std::string unit = to_string(s.budget.unit);
  // Random search without median stopping and a grid train every trial to
  // budget.max alone: budget.min plays no part.
  if (rung_budgets(s).size() == 1) return budget_text(static_cast<double>(s.budget.max), unit);
  return std::to_string(s.budget.min) + " to " + std::to_string(s.budget.max) + " " + unit;
}

// "11.1111 steps", "1 epoch": six significant digits, as the progress line
// prints budgets (plan --json keeps every digit).
std::string budget_text(double budget, const std::string& unit) {
  std::ostringstream out;
  // (Whole budgets in full: a million trials' total read "5e+06 steps".)
  if (budget == std::floor(budget) && std::abs(budget) < 1e15) {
    out << static_cast<std::int64_t>(budget);
  } else if (std::abs(budget) >= 1e6 && std::abs(budget) < 1e15) {
    // (Large fractions to a tenth: six digits would read "8.43333e+07 samples".)
    out << std::fixed << std::setprecision(1) << budget;
  } else {
    out << budget;
  }
  out << " " << (budget == 1 ? unit.substr(0, unit.size() - 1) : unit);
  return out.str();
}

}  // namespace hfta::core
