#include "hfta/core/suspect_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "hfta/core/did_you_mean.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_tables.h"
#include "hfta/search/brackets.h"
#include "hfta/search/param_value.h"
#include "hfta/trainers/catalog.h"
#include "hfta/trainers/footprint.h"

namespace hfta::core {
namespace {

// The smallest and largest value a numeric parameter can take, or nullopt.
std::optional<std::pair<double, double>> numeric_range(const search::ParameterSpec& p) {
  if (p.values.empty()) return std::make_pair(p.min, p.max);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : p.values) {
    if (!search::is_numeric(v)) return std::nullopt;
    lo = std::min(lo, search::as_double(v));
    hi = std::max(hi, search::as_double(v));
  }
  return std::make_pair(lo, hi);
}

// The range of a training hyperparameter: its parameter's, and its default's
// where some trials lack the parameter (its `when`) or there is none.
std::optional<std::pair<double, double>> range_of(const SweepConfig& sweep, const std::string& name) {
  const double d = std::stod(trainers::find_training_hyperparameter(name)->default_value);
  const auto branches = sweep.parameter_branches(name);
  if (branches.empty()) return std::make_pair(d, d);
  std::optional<std::pair<double, double>> range;
  for (const auto* p : branches) {
    const auto r = numeric_range(*p);
    if (!r) return std::nullopt;
    range = range ? std::make_pair(std::min(range->first, r->first), std::max(range->second, r->second)) : *r;
  }
  if (!search::always_present(branches, sweep.parameters)) range = std::make_pair(std::min(range->first, d), std::max(range->second, d));
  return range;
}

// The values a text parameter can take: its parameter's (and its default,
// where some trials lack it), else its default.
std::vector<std::string> values_of(const SweepConfig& sweep, const std::string& name) {
  const std::string d = trainers::find_training_hyperparameter(name)->default_value;
  const auto branches = sweep.parameter_branches(name);
  if (branches.empty()) return {d};
  std::vector<std::string> out;
  for (const auto* p : branches) {
    for (const auto& v : p->values) out.push_back(search::to_string(v));
  }
  if (!search::always_present(branches, sweep.parameters)) out.push_back(d);
  return out;
}

bool can_be(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

std::vector<std::string> decay_notes(const SweepConfig& sweep, std::int64_t fewest_steps) {
  std::vector<std::string> out;
  const auto schedules = values_of(sweep, "schedule");
  const auto gamma = range_of(sweep, "gamma");
  if (!gamma || fewest_steps < 1) return out;
  // The trial that decays least: the largest gamma, the longest step, the
  // fewest steps; its last step trains at the rate after `last` decays.
  const std::int64_t last = fewest_steps - 1;
  struct Decay {
    const char* schedule;
    double factor;
    std::string how;
  };
  std::vector<Decay> decays;
  if (can_be(schedules, "exponential")) {
    decays.push_back({"exponential", std::pow(gamma->second, static_cast<double>(last)),
                      "multiplies lr by gamma (at most " + search::to_string(gamma->second) + ") every step"});
  }
  const auto step_size = range_of(sweep, "step_size");
  if (can_be(schedules, "step") && step_size && step_size->second >= 1) {
    const double periods = std::floor(static_cast<double>(last) / step_size->second);
    decays.push_back({"step", std::pow(gamma->second, periods),
                      "multiplies lr by gamma (at most " + search::to_string(gamma->second) + ") every step_size (at most " +
                          search::to_string(step_size->second) + ") steps"});
  }
  // A thousandth of lr trains no further: PyTorch tutorials step these per
  // epoch, and the same numbers per step end a trial's learning early.
  constexpr double kDead = 1e-3;
  for (const auto& d : decays) {
    if (d.factor >= kDead) continue;
    std::ostringstream factor;
    factor << std::setprecision(2) << d.factor;
    out.push_back("note: schedule " + std::string(d.schedule) + " " + d.how + ": by budget.max (" +
                  std::to_string(fewest_steps) + " steps) the learning rate of every trial with schedule " +
                  d.schedule + " has fallen to " + factor.str() +
                  " of its lr or below (schedule lengths count training steps, not epochs)");
  }
  return out;
}

namespace {

// The parameter counts of the space's shapes, one per choice of its shape
// parameters (footprint.h counts them exactly, checked against the modules,
// for every model but the language models, whose vocabulary comes from their
// corpus); nullopt where a shape parameter is drawn from a range, or the
// shapes number over 4096.
std::optional<std::vector<double>> shape_sizes(const SweepConfig& sweep) {
  const trainers::ModelSpec* model = trainers::find_model(sweep.task.model);
  if (!model || model->kind == trainers::TaskKind::kLanguageModel || model->kind == trainers::TaskKind::kMaskedLanguageModel) {
    return std::nullopt;
  }
  // Each shape parameter's values (a branched one's, all its branches').
  std::map<std::string, std::vector<search::ParamValue>> shapes;
  for (const auto& p : sweep.parameters) {
    const auto option = std::find_if(model->options.begin(), model->options.end(),
                                     [&](const trainers::OptionSpec& o) { return o.name == p.name; });
    if (option == model->options.end() || !option->structural || option->augments) continue;
    const bool listed = p.distribution == search::Distribution::kChoice || p.distribution == search::Distribution::kGrid ||
                        p.distribution == search::Distribution::kConst;
    if (!listed) return std::nullopt;
    auto& values = shapes[p.name];
    values.insert(values.end(), p.values.begin(), p.values.end());
  }
  std::vector<search::Config> combos{{}};
  for (const auto& [name, values] : shapes) {
    std::vector<search::Config> more;
    for (const auto& c : combos) {
      for (const auto& v : values) {
        more.push_back(c);
        more.back()[name] = v;
      }
    }
    combos = std::move(more);
    if (combos.size() > 4096) return std::nullopt;
  }
  std::vector<double> sizes;
  for (const auto& combo : combos) {
    std::map<std::string, double> numeric;
    std::map<std::string, std::string> texts;
    for (const auto* options : {&sweep.task.options, &combo}) {
      for (const auto& [name, value] : *options) {
        if (search::is_numeric(value)) numeric[name] = search::as_double(value);
        if (const bool* b = std::get_if<bool>(&value)) numeric[name] = *b ? 1 : 0;
        if (const std::string* t = std::get_if<std::string>(&value)) texts[name] = *t;
      }
    }
    add_table_shape(sweep.task.table, numeric);
    const auto f = trainers::estimate_footprint(sweep.task.model, numeric, texts);
    if (!f) return std::nullopt;
    sizes.push_back(f->parameters);
  }
  return sizes;
}

// params as an objective that no parameter changes, and params bounds that
// some or all of the space's shapes break (they train, and rank last).
std::vector<std::string> size_notes(const SweepConfig& sweep, const std::vector<MetricOptions>& metrics) {
  std::vector<std::string> out;
  const bool sized = std::any_of(metrics.begin(), metrics.end(), [](const MetricOptions& m) { return m.name == "params"; });
  const auto bounded = std::find_if(sweep.constraints.begin(), sweep.constraints.end(),
                                    [](const ConstraintOptions& c) { return c.name == "params"; });
  if (!sized && bounded == sweep.constraints.end()) return out;
  const auto sizes = shape_sizes(sweep);
  if (!sizes) return out;
  const auto count = [](double v) {
    std::ostringstream text;
    text << std::setprecision(12) << v;
    return text.str();
  };
  const auto [least, most] = std::minmax_element(sizes->begin(), sizes->end());
  if (sized && *least == *most) {
    out.push_back("note: params, an objective, is " + count(*least) +
                  " in every trial: no parameter changes the model's size (tune a shape option, such as width, for a "
                  "trade-off of size)");
  }
  if (bounded != sweep.constraints.end()) {
    const auto outside = std::count_if(sizes->begin(), sizes->end(), [&](double v) { return bounded->violation(v) > 0; });
    const std::string which = "constraints[" + std::to_string(bounded - sweep.constraints.begin()) + "] (" +
                              (bounded->min ? count(*bounded->min) + " <= " : std::string()) + "params" +
                              (bounded->max ? " <= " + count(*bounded->max) : std::string()) + "; the shapes have " +
                              count(*least) + (*least == *most ? "" : " to " + count(*most)) + " parameters)";
    if (outside == static_cast<std::ptrdiff_t>(sizes->size())) {
      out.push_back("note: no shape of the space meets " + which + ": every trial ranks by its violation, and none is best");
    } else if (outside > 0) {
      out.push_back("note: " + std::to_string(outside) + " of the space's " + std::to_string(sizes->size()) +
                    (outside == 1 ? " shapes breaks " : " shapes break ") + which + ": their trials train and rank after every trial within it (restrict "
                    "the space to skip them)");
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> suspect_settings(const SweepConfig& sweep) {
  std::vector<std::string> out;
  // Accuracy is better higher; losses, perplexity, FID and size lower. (A GAN's
  // g_loss and d_loss are each other's opponents: either goal may be meant.)
  const std::vector<MetricOptions> metrics = sweep.objectives.empty() ? std::vector<MetricOptions>{sweep.metric}
                                                                       : sweep.objectives;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string& metric = metrics[i].name;
    const std::string goal = sweep.objectives.empty() ? "metric.goal" : "metric[" + std::to_string(i) + "].goal";
    const bool higher_is_better = metric == "val_accuracy" || metric == "val_r2" || metric == "val_f1" ||
                                  metric == "val_balanced_accuracy" || metric == "val_auc" ||
                                  metric == "val_average_precision";
    const bool lower_is_better = metric == "val_loss" || metric == "train_loss" || metric == "val_perplexity" ||
                                 metric == "val_fid" || metric == "params" || metric == "val_rmse" || metric == "val_mae";
    if ((higher_is_better && metrics[i].goal == Goal::kMinimize) ||
        (lower_is_better && metrics[i].goal == Goal::kMaximize)) {
      out.push_back("note: " + metric + " is better " + (higher_is_better ? "higher" : "lower") + ", and " + goal + " " +
                    to_string(metrics[i].goal) + " makes the best trial the worst model " +
                    "(did you mean goal: " + (higher_is_better ? "maximize" : "minimize") + "?)");
    }
  }
  for (auto& note : size_notes(sweep, metrics)) out.push_back(std::move(note));
  // A table's integer label of many classes may be a measurement; a
  // regression's R2 on one validation row is 0 for every trial.
  const TableOptions& table = sweep.task.table;
  if (table.integer_classes && table.classes > trainers::kManyIntegerClasses) {
    out.push_back("note: label " + table.label_column + " holds " + std::to_string(table.classes) +
                  " different integers, trained as that many classes (task.loss " + sweep.task.loss +
                  "); if they are a measurement, set task.loss: mse to predict the number");
  }
  const bool class_measured = sweep.names_metric("val_f1") || sweep.names_metric("val_balanced_accuracy") ||
                              sweep.names_metric("val_auc") || sweep.names_metric("val_average_precision");
  if (!table.validation_lacks.empty() && class_measured) {
    const auto& lacks = table.validation_lacks;
    std::string named = "'" + lacks.front() + "'";
    if (lacks.size() > 1) named += " and " + std::to_string(lacks.size() - 1) + " more";
    out.push_back("note: the validation rows hold no row of class " + named + " of label " + table.label_column +
                  ": val_balanced_accuracy, val_auc and val_average_precision average over the other classes, and "
                  "val_f1 counts " +
                  (lacks.size() == 1 ? "it" : "them") + " only where a trial predicts " +
                  (lacks.size() == 1 ? "it" : "them") + "; hold out more rows with task.validation_size (each class "
                  "holds out its share)");
  }
  if (!table.test.empty() && table.test_classes == 1 && (sweep.names_metric("val_auc") || sweep.names_metric("val_average_precision"))) {
    out.push_back("note: the test table's rows (" + table.test + ") hold one class of label " + table.label_column +
                  ": the best trial's test AUC and average precision cannot be measured there (shown as none)");
  }
  if (table.regression && table.validation_rows == 1) {
    out.push_back("note: one validation row: val_r2 is 0 for every trial that misses it (R2 needs two rows to "
                  "measure a spread; scikit-learn leaves it undefined), and val_rmse is one row's error; hold out more "
                  "rows with task.validation_size");
  }
  // Accuracy in steps of 1/N: on a handful of examples most trials tie, and
  // the best is whichever the tie-break names. (A regression's errors do not
  // come in steps.)
  constexpr std::int64_t kFewest = 100;
  if (sweep.task.validation_size > 0 && sweep.task.validation_size < kFewest &&
      !trainers::is_regression_loss(sweep.task.loss)) {
    out.push_back("note: task.validation_size " + std::to_string(sweep.task.validation_size) +
                  ": every validation metric is measured on that many examples, so trials tie often (at least " +
                  std::to_string(kFewest) + " tell them apart)");
  }
  // Other methods cycle their trials through the grid's combinations (as Ray
  // Tune's grid_search under any scheduler): worth a word where they fall short
  // of it, or cover it unevenly.
  std::string grids;
  for (const auto& p : sweep.parameters) {
    if (p.distribution == search::Distribution::kGrid) grids += (grids.empty() ? "" : ", ") + p.name;
  }
  if (!grids.empty() && sweep.search.method != SearchMethod::kGrid) {
    const std::int64_t combinations = make_search_space(sweep).grid_combinations();
    const bool hyperband = sweep.search.method == SearchMethod::kHyperband;
    const std::int64_t trials =
        hyperband ? search::started_trials(search::hyperband_brackets(sweep.budget.max, sweep.budget.min, sweep.search.eta)) *
                        sweep.search.iterations
                  : sweep.search.trials;
    // (Trials of points_to_evaluate keep the grid values a point gives.)
    const std::string cycle = "the grid's " + std::to_string(combinations) + " combinations of " + grids +
                              " cycle through the trials (trial t takes combination t mod " +
                              std::to_string(combinations) +
                              (sweep.search.points.empty() ? "" : ", but where a point to evaluate sets them") + ")";
    if (trials < combinations) {
      out.push_back("note: " + cycle + ", but the sweep starts " + std::to_string(trials) + " trials: " +
                    std::to_string(combinations - trials) +
                    (combinations - trials == 1 ? " combination is" : " combinations are") + " never tried (" +
                    (hyperband ? "raise search.iterations" : "raise search.trials") + ", or use method grid)");
    } else if (!hyperband && trials % combinations != 0) {
      out.push_back("note: " + cycle + ", and " + std::to_string(trials) + " trials are not a multiple of " +
                    std::to_string(combinations) + ": " +
                    (trials % combinations == 1 ? std::string("the first combination gets")
                                                : "the first " + std::to_string(trials % combinations) + " combinations get") +
                    " one trial more");
    }
  }
  // A stopping rule that needs as many others as there are trials never stops one.
  const bool random = sweep.search.method == SearchMethod::kRandom;
  if (random && sweep.search.stopping != Stopping::kNone && sweep.search.min_samples >= sweep.search.trials) {
    out.push_back("note: search.min_samples " + std::to_string(sweep.search.min_samples) + " is not below search.trials " +
                  std::to_string(sweep.search.trials) + ": a trial is compared with the others, so the " +
                  to_string(sweep.search.stopping) + " rule never stops one");
  }
  // Random search without a stopping rule, and a grid, train to budget.max
  // alone. (A ladder with one rung is sweep_plan's note.)
  if ((random || sweep.search.method == SearchMethod::kGrid) && rung_budgets(sweep).size() == 1 &&
      sweep.budget.min != 1 && sweep.budget.min != sweep.budget.max) {
    out.push_back("note: budget.min " + std::to_string(sweep.budget.min) + " plays no part: method " +
                  to_string(sweep.search.method) + " trains every trial to budget.max " +
                  std::to_string(sweep.budget.max) + (random ? " (stopping: median or percentile uses it)" : ""));
  }
  // A range whose ends meet is a constant that searchers and importance count
  // as a parameter: said, with the key that says it.
  for (const auto& p : sweep.parameters) {
    const bool ranged = p.distribution == search::Distribution::kUniform ||
                        p.distribution == search::Distribution::kLogUniform ||
                        p.distribution == search::Distribution::kIntUniform ||
                        p.distribution == search::Distribution::kIntLogUniform;
    if (ranged && p.min == p.max) {
      const bool whole = p.distribution == search::Distribution::kIntUniform ||
                         p.distribution == search::Distribution::kIntLogUniform;
      const std::string v = whole ? std::to_string(static_cast<std::int64_t>(p.min)) : search::to_string(p.min);
      out.push_back("note: " + parameter_path(p) + ": min equals max (" + v + "), so every trial takes " + v +
                    ": write value: " + v + ", or widen the range");
    }
  }
  // An lr left at the default here, 0.01, is ten times Adam's in PyTorch.
  // (one_cycle reads max_lr instead.)
  const auto optimizers = values_of(sweep, "optimizer");
  const auto schedules = values_of(sweep, "schedule");
  const bool reads_lr = std::any_of(schedules.begin(), schedules.end(), [](const auto& s) { return s != "one_cycle"; });
  if (!sweep.find_parameter("lr") && reads_lr && (can_be(optimizers, "adam") || can_be(optimizers, "adamw"))) {
    out.push_back("note: lr is not a parameter, so every trial trains at lr " +
                  trainers::find_training_hyperparameter("lr")->default_value +
                  ", this sweep format's default (PyTorch's Adam and AdamW default to 0.001): tune it, or set it "
                  "with value:");
  }
  // The same where lr's conditions on optimizer (its branches') leave Adam out.
  const auto lrs = sweep.parameter_branches("lr");
  const auto* optimizer = sweep.find_parameter("optimizer");
  const bool on_optimizer = !lrs.empty() && std::all_of(lrs.begin(), lrs.end(), [](const search::ParameterSpec* p) {
    return p->when.size() == 1 && p->when.front().parameter == "optimizer";
  });
  if (on_optimizer && reads_lr && optimizer && optimizer->when.empty() && optimizer->branch < 0) {
    std::vector<std::string> left;  // Adam-like optimizers no lr condition holds for
    for (const auto& v : optimizer->values) {
      const std::string name = search::to_string(v);
      const bool covered = std::any_of(lrs.begin(), lrs.end(), [&](const search::ParameterSpec* p) {
        const auto& values = p->when.front().values;
        return std::find(values.begin(), values.end(), v) != values.end();
      });
      if (!covered && (name == "adam" || name == "adamw")) left.push_back(name);
    }
    if (!left.empty()) {
      out.push_back("note: lr's conditions leave it out where optimizer is " + join_alternatives(left) +
                    ", so those trials train at lr " + trainers::find_training_hyperparameter("lr")->default_value +
                    ", this sweep format's default (PyTorch's Adam and AdamW default to 0.001): give lr a branch or a "
                    "condition value for " + join_alternatives(left));
    }
  }
  // eta_min is a cosine or linear schedule's floor; above lr it is the ceiling the rate climbs to.
  if (sweep.find_parameter("eta_min")) {
    const auto eta_min = range_of(sweep, "eta_min");
    const auto lr = range_of(sweep, "lr");
    if (eta_min && lr && eta_min->second > lr->first) {
      out.push_back("note: parameters.eta_min reaches " + search::to_string(eta_min->second) + ", above the smallest lr " +
                    search::to_string(lr->first) + ": a cosine or linear schedule then raises such a trial's learning rate "
                    "to eta_min instead of lowering it");
    }
  }
  return out;
}

}  // namespace hfta::core
