#include "hfta/core/warm_start.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hfta/core/config_error.h"
#include "hfta/core/data_notes.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_tables.h"
#include "hfta/core/trial_settings.h"
#include "hfta/core/trial_store.h"
#include "hfta/trainers/catalog.h"
#include "option_values.h"

namespace hfta::core {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Source = SearchOptions::WarmSource;

ConfigError refusal(const SweepConfig& sweep, const Source& source, const std::string& written,
                    const std::string& message) {
  return ConfigError({Diagnostic{sweep.search.warm_start_file, source.at, source.line, source.column,
                                 written + ": " + message}});
}

// Where a relative path missed because it was written from the working
// directory (runs/x, beside the default --out) rather than the sweep file's.
std::string working_directory_hint(const SweepConfig& sweep, const std::string& written) {
  std::error_code ec;
  const fs::path path(written);
  if (path.is_absolute() || written.rfind("~/", 0) == 0 || !fs::is_directory(path, ec)) return "";
  const fs::path from = fs::absolute(fs::path(sweep.search.warm_start_file).parent_path(), ec);
  const fs::path relative = fs::absolute(path, ec).lexically_normal().lexically_relative(from.lexically_normal());
  return "; a relative path is read from the sweep file's directory, and " + written +
         " is a directory from the working directory: from the sweep file's it is " + relative.string();
}

// The earlier sweep in `dir` (its sweep.json), refused where there is none or
// where its results measure another problem than this sweep's.
SweepConfig earlier_sweep(const SweepConfig& sweep, const Source& source, const std::string& written) {
  struct stat info {};
  if (::stat(source.dir.c_str(), &info) != 0) {
    throw refusal(sweep, source, written,
                  "no such directory" + (source.dir == written ? "" : " (" + source.dir + ")") +
                      working_directory_hint(sweep, written));
  }
  if (!S_ISDIR(info.st_mode)) {
    throw refusal(sweep, source, written, "not a directory; name an earlier sweep's experiment directory");
  }
  const std::string file = source.dir + "/sweep.json";
  if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw refusal(sweep, source, written,
                  "holds no sweep (no sweep.json): name the experiment directory an earlier hfta-tune run wrote (its --out)");
  }
  SweepConfig earlier;
  try {
    earlier = load_sweep_file(file, nullptr, 16 * kMaxSweepBytes);
  } catch (const ConfigError& e) {
    throw refusal(sweep, source, written, "its sweep.json is damaged (" + e.diagnostics().front().message + ")");
  }
  auto differs = [&](const std::string& what, const std::string& there, const std::string& here) {
    if (there != here) {
      throw refusal(sweep, source, written,
                    what + " " + there + " there, " + here + " here: its results measure another problem, "
                    "and would mislead the searcher");
    }
  };
  differs("model", earlier.task.model, sweep.task.model);
  differs("dataset", earlier.task.dataset, sweep.task.dataset);
  differs("budgets in", to_string(earlier.budget.unit), to_string(sweep.budget.unit));
  if (const auto* model = trainers::find_model(sweep.task.model)) {
    for (const auto& o : model->options) {  // (points, seq_len, mask_prob: the dataset itself)
      if (!o.shapes_data) continue;
      const auto a = earlier.task.options.find(o.name);
      const auto b = sweep.task.options.find(o.name);
      const std::string there = a == earlier.task.options.end() ? o.default_value : search::to_string(a->second);
      const std::string here = b == sweep.task.options.end() ? o.default_value : search::to_string(b->second);
      differs("task.options." + o.name, there, here);
    }
  }
  if (sweep.task.dataset == "csv") {  // the same table: the rows run kept there, the label column read here
    std::ifstream in(source.dir + "/data/table.json");
    const auto table = json::parse(in, nullptr, /*allow_exceptions=*/false);
    std::ifstream train(sweep.task.table.train_file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(train)), std::istreambuf_iterator<char>());
    const bool same = table.is_object() && table.value("label", json()) == json(sweep.task.table.label_column) &&
                      table.contains("files") && table["files"].value("train.csv", json()) == table_digest(bytes);
    if (!same) {
      throw refusal(sweep, source, written,
                    "its trials trained on another table (its data/train.csv and label column are not " +
                        sweep.task.table.train + " and " + sweep.task.table.label_column +
                        "): its results measure another problem, and would mislead the searcher");
    }
  }
  return earlier;
}

// The task keys besides the model's shape and batch (checked trial by trial)
// that the earlier sweep set otherwise: noted, not refused.
std::string task_differences(const SweepConfig& earlier, const std::string& earlier_dir, const SweepConfig& sweep) {
  json there = to_json(earlier).at("task"), here = to_json(sweep).at("task");
  // The validation examples each held out, written or by default (Fashion-MNIST's
  // 10,000, 2,000 point clouds; a table's as run counted them), so a default
  // written out is no difference.
  auto held_out = [&](json& task, const SweepConfig& s, const std::string& dir) {
    if (task.contains("validation_size")) return;
    if (s.task.dataset == "fashion_mnist") task["validation_size"] = 10000;
    if (s.task.dataset == "point_clouds") task["validation_size"] = 2000;
    if (s.task.dataset == "csv" && !dir.empty()) {
      std::ifstream in(dir + "/data/table.json");
      const auto table = json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (table.is_object() && table.contains("rows")) task["validation_size"] = table["rows"].value("validation", json());
    } else if (s.task.dataset == "csv" && s.task.table.validation_rows > 0) {
      task["validation_size"] = s.task.table.validation_rows;
    }
  };
  held_out(there, earlier, earlier_dir);
  held_out(here, sweep, "");
  std::string out;
  for (const char* key : {"loss", "precision", "validation_size", "eval_steps"}) {
    const json a = there.value(key, json()), b = here.value(key, json());
    if (a == b) continue;
    out += std::string(out.empty() ? "" : ", ") + key + " " + (a.is_null() ? std::string("the default") : a.dump()) +
           " there, " + (b.is_null() ? std::string("the default") : b.dump()) + " here";
  }
  return out;
}

// What a sweep trains every trial with where no parameter says otherwise:
// the batch size, a model option, a training hyperparameter's default.
std::optional<search::ParamValue> fixed_value(const SweepConfig& sweep, const std::string& name) {
  if (name == "batch_size") return search::ParamValue{sweep.task.batch_size};
  if (const auto it = sweep.task.options.find(name); it != sweep.task.options.end()) return it->second;
  if (const auto* h = trainers::find_training_hyperparameter(name)) return default_value(*h);
  return std::nullopt;
}

// What the trainer makes of trial `c` of `sweep` (trial_settings.h): each
// hyperparameter as it trains (eps by optimizer where unset, as PyTorch's),
// the schedule in steps (scaled to budget.max where it is measured by it),
// the model's options; none the trial's optimizer does not read.
json resolved(const SweepConfig& sweep, const search::Config& c, std::int64_t train_examples) {
  const TrialSettings settings(sweep, train_examples);
  const trainers::SlotTrial t = settings.slot_of(0, c, 0);
  const std::string optimizer = settings.array_options(c).optimizer;
  json out = {{"lr", t.lr}, {"momentum", t.momentum}, {"weight_decay", t.weight_decay}, {"dropout", t.dropout},
              {"beta1", t.beta1}, {"beta2", t.beta2}, {"eps", t.eps}, {"dampening", t.dampening},
              {"nesterov", t.nesterov != 0}, {"amsgrad", t.amsgrad != 0}, {"alpha", t.alpha},
              {"centered", t.centered != 0}, {"rho", t.rho}, {"lr_decay", t.lr_decay},
              {"label_smoothing", t.label_smoothing}, {"class_weight", t.balanced_class_weight != 0 ? "balanced" : "none"},
              {"grad_clip", t.grad_clip}, {"optimizer", optimizer}, {"batch_size", settings.batch_size(c)}};
  for (const auto& h : trainers::training_hyperparameters()) {
    if (h.read_with == "optimizer" && out.contains(h.name) &&
        std::find(h.read_with_values.begin(), h.read_with_values.end(), optimizer) == h.read_with_values.end()) {
      out.erase(h.name);  // (momentum under Adam: whatever a trial drew, it trained without it)
    }
  }
  // The schedule's fields its kind reads (the others hold lengths of budget.max it never uses).
  using fusion::ScheduleKind;
  const fusion::ScheduleOptions& k = t.schedule;
  static const char* const kinds[] = {"constant", "step",           "multistep", "exponential", "linear",
                                      "cosine",   "cosine_restarts", "one_cycle", "plateau"};
  json schedule = {{"kind", kinds[static_cast<int>(k.kind)]}, {"warmup", k.warmup},
                   {"warmup_start_factor", k.warmup_start_factor}};
  switch (k.kind) {
    case ScheduleKind::kConstant: break;
    case ScheduleKind::kStep: schedule.update({{"step_size", k.step_size}, {"gamma", k.gamma}}); break;
    case ScheduleKind::kMultiStep: schedule.update({{"milestones", k.milestones}, {"gamma", k.gamma}}); break;
    case ScheduleKind::kExponential: schedule["gamma"] = k.gamma; break;
    case ScheduleKind::kLinear:
    case ScheduleKind::kCosine: schedule.update({{"t_max", k.t_max}, {"eta_min", k.eta_min}}); break;
    case ScheduleKind::kCosineRestarts:
      schedule.update({{"t_0", k.t_0}, {"t_mult", k.t_mult}, {"eta_min", k.eta_min}});
      break;
    case ScheduleKind::kOneCycle:
      schedule.update({{"max_lr", k.max_lr}, {"total_steps", k.total_steps}, {"pct_start", k.pct_start},
                       {"div_factor", k.div_factor}, {"final_div_factor", k.final_div_factor}});
      break;
    case ScheduleKind::kPlateau:
      schedule.update({{"factor", k.factor}, {"patience", k.patience}, {"cooldown", k.cooldown},
                       {"threshold", k.threshold}, {"min_lr", k.min_lr}, {"eps", k.eps}});
      break;
  }
  out["learning-rate schedule, in steps"] = schedule;
  for (const auto& [name, value] : model_options(sweep, c)) out["option " + name] = value;
  return out;
}

// Trial `config` of the `earlier` sweep as this sweep's space draws it
// (conditions judged on its values), or nullopt with `why` saying what lies
// outside: a value this sweep could not draw, or a setting the trial trained
// with that this sweep's trial of those values would not (a constant, an
// option, a default, a schedule scaled to another budget.max).
std::optional<search::Config> in_space(const search::SearchSpace& space, const SweepConfig& sweep,
                                       const SweepConfig& earlier, const search::Config& config,
                                       std::int64_t train_examples, std::string& why) {
  // (A trial.json edited from outside may hold values the trainer cannot resolve: that trial is left out.)
  auto settings = [&](const SweepConfig& of, const search::Config& c, const char* where) -> std::optional<json> {
    try {
      return resolved(of, c, train_examples);
    } catch (const std::exception& e) {
      why = std::string("settings that do not resolve ") + where + " (" + e.what() + ")";
      return std::nullopt;
    }
  };
  const auto earlier_settings = settings(earlier, config, "there");
  if (!earlier_settings) return std::nullopt;
  const json& there = *earlier_settings;
  auto trained_with = [&](const std::string& name) -> std::optional<search::ParamValue> {
    if (const auto it = config.find(name); it != config.end()) return it->second;
    if (there.contains(name)) return param_value_of(there[name]);
    return fixed_value(earlier, name);
  };
  search::Config chosen;
  for (const auto& p : space.parameters()) {
    if (!search::SearchSpace::active(p, chosen)) continue;
    const auto value = trained_with(p.name);
    if (!value) {
      why = p.name + ": none there";
      return std::nullopt;
    }
    std::string not_drawn;
    const auto drawn = search::as_drawn(p, *value, not_drawn);
    if (!drawn) {
      why = p.name + ": " + not_drawn + (config.count(p.name) ? "" : " (what the earlier sweep trained it with)");
      return std::nullopt;
    }
    chosen[p.name] = *drawn;
  }
  // What this sweep's trial of those values trains with, the earlier one must have.
  const auto settings_here = settings(sweep, chosen, "here");
  if (!settings_here) return std::nullopt;
  const json& here = *settings_here;
  auto shown = [](const json& v) { return v.is_null() ? std::string("unread") : v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const auto& [key, value] : here.items()) {
    const json other = there.value(key, json());
    if (other == value) continue;
    if (value.is_object() && other.is_object()) {  // the schedule: name the field that differs
      for (const auto& [field, v] : value.items()) {
        if (other.value(field, json()) != v) {
          why = key + ": " + field + " " + shown(other.value(field, json())) + " there, " + shown(v) + " here";
          return std::nullopt;
        }
      }
    }
    why = (key.rfind("option ", 0) == 0 ? key.substr(7) : key) + ": " + shown(other) + " there, " + shown(value) + " here";
    return std::nullopt;
  }
  return chosen;
}

// The value of `name` at the end of a rung: the earlier sweep's own metric as
// it ranked it, else the history's evaluation at the rung's last step (every
// rung end is evaluated), `params` from the model's size; NaN where unknown.
double measured_at(const std::string& name, const RungResult& rung, const StoredTrial& trial, const SweepConfig& earlier) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (name == "params") return rung.model_params > 0 ? static_cast<double>(rung.model_params) : nan;
  if (name == earlier.metric.name) return rung.metric;
  for (const auto& point : trial.record.history) {
    if (!point.is_object() || !point.contains("step") || !point["step"].is_number_integer() ||
        point["step"].get<std::int64_t>() != rung.steps || !point.contains(name)) {
      continue;
    }
    return point[name].is_number() ? point[name].get<double>() : nan;
  }
  return nan;
}

// Whether the earlier trials measured `name` at all (a metric named later, as val_auc, may be absent).
bool measures(const std::string& name, const std::map<std::int64_t, StoredTrial>& trials, const SweepConfig& earlier) {
  if (name == "params" || name == earlier.metric.name) return true;
  for (const auto& [id, t] : trials) {
    for (const auto& point : t.record.history) {
      if (point.is_object() && point.contains(name)) return true;
    }
  }
  return false;
}

const std::vector<std::string>& status_names() {
  static const std::vector<std::string> names = {"completed", "stopped", "diverged"};
  return names;
}

search::TrialStatus status_of(const std::string& status) {
  return status == "completed" ? search::TrialStatus::kCompleted
         : status == "stopped" ? search::TrialStatus::kStopped
                               : search::TrialStatus::kDiverged;
}

const char* status_name(search::TrialStatus s) {
  return s == search::TrialStatus::kCompleted ? "completed" : s == search::TrialStatus::kStopped ? "stopped" : "diverged";
}

// What reading one directory left out, as counts with an example each.
struct LeftOut {
  std::map<std::string, std::pair<std::int64_t, std::string>> reasons;  ///< reason -> (trials, first example)
  void add(const std::string& reason, const std::string& example) {
    auto& [n, first] = reasons[reason];
    if (n++ == 0) first = example;
  }
  std::string str() const {
    std::string out;
    for (const auto& [reason, counted] : reasons) {
      out += (out.empty() ? "" : "; ") + std::to_string(counted.first) + " " + reason +
             (counted.second.empty() ? "" : " (" + counted.second + ")");
    }
    return out;
  }
};

std::string plural(std::int64_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string kept_problem(const search::SearchSpace& space, const SweepConfig& sweep, const WarmResult& w);

// One directory's results, a list per earlier trial in its id order (ids are given once all are read).
std::vector<std::vector<WarmResult>> read_source(SweepConfig& sweep, const Source& source, const std::string& written) {
  const SweepConfig earlier = earlier_sweep(sweep, source, written);
  std::vector<std::vector<WarmResult>> out;
  LeftOut left;
  std::int64_t damaged = 0;
  const auto trials = TrialStore(source.dir).load_all([&](const std::string&) { ++damaged; });
  // Metrics this sweep ranks by that the earlier one never measured: none of its results can be told.
  std::vector<std::string> names;
  for (const auto& o : sweep.objectives.empty() ? std::vector<MetricOptions>{sweep.metric} : sweep.objectives) {
    names.push_back(o.name);
  }
  for (const auto& c : sweep.constraints) names.push_back(c.name);
  for (const auto& name : names) {
    if (!measures(name, trials, earlier)) {
      sweep.search.warm_notes.push_back("note: search.warm_start: " + written + ": its trials never measured " + name +
                                        " (name it in that sweep's metric, objectives or constraints), so none of "
                                        "its results can start this sweep's searcher");
      return out;
    }
  }
  const auto space = make_search_space(sweep);
  // (The same data, so one size for both: the text corpus's is known once read.)
  const std::int64_t train_examples = known_train_examples(sweep).value_or(std::int64_t{1} << 20);
  std::int64_t results = 0, past_max = 0;
  for (const auto& [id, trial] : trials) {
    const std::string named = "trial " + std::to_string(id);
    if (trial.record.parent) {  // its weights came of its parent's training, under the parent's values
      left.add("cloned by population based training", named);
      continue;
    }
    std::vector<const RungResult*> rungs;
    bool readable = true;
    for (const auto& r : trial.rungs) {
      readable &= r.status == "failed" ||
                  std::find(status_names().begin(), status_names().end(), r.status) != status_names().end();
      if (r.status != "failed") rungs.push_back(&r);
    }
    if (!readable) {
      left.add("with a damaged trial.json", named + "'s rung status");
      continue;
    }
    if (rungs.empty()) {
      left.add(trial.record.status == "failed" ? "failed" : "with no finished rung", named);
      continue;
    }
    std::string why;
    const auto config = in_space(space, sweep, earlier, trial.record.params, train_examples, why);
    if (!config) {
      left.add("outside this sweep's space", named + "'s " + why);
      continue;
    }
    std::vector<WarmResult> told;
    for (const RungResult* r : rungs) {
      if (r->budget > static_cast<double>(sweep.budget.max)) {
        ++past_max;  // ranked as further than any result of this sweep's, it would outweigh them all
        continue;
      }
      search::TrialResult result{0, r->budget, measured_at(sweep.metric.name, *r, trial, earlier), status_of(r->status)};
      for (const auto& o : sweep.objectives) result.objectives.push_back(measured_at(o.name, *r, trial, earlier));
      for (const auto& c : sweep.constraints) result.violation += c.violation(measured_at(c.name, *r, trial, earlier));
      if (std::isnan(result.metric) && result.status != search::TrialStatus::kDiverged) continue;  // not evaluated there
      WarmResult w{*config, result, written, id};
      if (!kept_problem(space, sweep, w).empty()) continue;  // (a budget of 0: resume would refuse what run kept)
      told.push_back(std::move(w));
    }
    if (told.empty()) continue;  // (its results all past budget.max: counted there)
    results += static_cast<std::int64_t>(told.size());
    out.push_back(std::move(told));
  }
  for (std::int64_t k = 0; k < damaged; ++k) left.add("with a damaged trial.json", "");
  const std::string what = left.str();
  const bool unfinished = !fs::exists(source.dir + "/results.json");
  std::ostringstream note;
  note << "note: search.warm_start: " << written << ": " << plural(results, "result") << " of "
       << out.size() << " of its " << plural(static_cast<std::int64_t>(trials.size()) + damaged, "trial")
       << (unfinished ? " so far (unfinished: no results.json)" : "") << " start the searcher";
  const auto holder = ExperimentLock::holder(source.dir);
  if (holder) {  // what it finishes later, this sweep does not see
    note << " (it is running, pid " << (holder->empty() ? "unknown" : *holder)
         << ": only the rungs it had finished are read)";
  }
  if (!what.empty()) note << "; left out: " << what;
  if (past_max > 0) note << "; " << plural(past_max, "result") << " past this sweep's budget.max " << sweep.budget.max;
  const std::string differences = task_differences(earlier, source.dir, sweep);
  if (!differences.empty()) note << "; its task differs (" << differences << "): its results are taken as they are";
  if (!what.empty() || past_max > 0 || !differences.empty() || out.empty() || unfinished || holder) {
    sweep.search.warm_notes.push_back(note.str());
  }
  return out;
}

// Why a kept result is not one run could have written for this sweep ("" where it is).
std::string kept_problem(const search::SearchSpace& space, const SweepConfig& sweep, const WarmResult& w) {
  if (!(w.result.budget > 0 && w.result.budget <= static_cast<double>(sweep.budget.max))) {
    return "budget " + search::to_string(w.result.budget) + " outside (0, budget.max]";
  }
  if (w.result.status != search::TrialStatus::kDiverged && !std::isfinite(w.result.metric)) {
    return std::string("a ") + status_name(w.result.status) + " result without a metric";
  }
  search::Config chosen;
  for (const auto& p : space.parameters()) {
    if (!search::SearchSpace::active(p, w.params)) continue;
    const auto it = w.params.find(p.name);
    std::string why;
    const auto drawn = it == w.params.end() ? std::nullopt : search::as_drawn(p, it->second, why);
    if (!drawn) return p.name + ": " + (it == w.params.end() ? std::string("none") : why);
    chosen[p.name] = *drawn;
  }
  return chosen.size() == w.params.size() ? "" : "a value of a parameter this sweep does not have";
}

// Whether DIR/sweep.json is `sweep` (its sweep.yaml unedited, as the kept results were read for it).
bool records(const std::string& dir, const SweepConfig& sweep) {
  try {
    return load_sweep_file(dir + "/sweep.json", nullptr, 16 * kMaxSweepBytes) == sweep;
  } catch (const ConfigError&) {
    return false;
  }
}

json kept_sources(const std::string& dir) {
  std::ifstream in(dir + "/warm_start.json");
  const auto kept = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return kept.is_object() && kept.contains("sources") ? kept["sources"] : json();
}

// Whether the kept results are numbered as read_warm_start numbers them: one
// id per earlier trial, -T .. -1 in the order read, each from a source named.
bool ids_in_order(const std::vector<WarmResult>& results, const std::vector<std::string>& sources) {
  std::set<std::pair<std::string, std::int64_t>> trials;
  std::int64_t id = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const WarmResult& w = results[i];
    if (std::find(sources.begin(), sources.end(), w.source) == sources.end()) return false;
    const bool next = i == 0 || w.source != results[i - 1].source || w.trial != results[i - 1].trial;
    if (next && !trials.insert({w.source, w.trial}).second) return false;
    if (i == 0) id = w.result.trial_id;
    else if (next) ++id;
    if (w.result.trial_id != id) return false;
  }
  return results.empty() || id == -1;
}

double number_or_nan(const json& j) { return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN(); }

}  // namespace

void read_warm_start(SweepConfig& sweep) {
  auto& s = sweep.search;
  s.warm_results.clear();
  s.warm_notes.clear();
  if (s.warm_start.empty()) return;
  // The sweep file of an experiment directory (its sweep.yaml, sweep.json)
  // reads the results run kept there, as resume does: its relative paths
  // were written from elsewhere, and the earlier directories may have changed.
  const fs::path parent = fs::path(s.warm_start_file).parent_path();
  const fs::path here = parent.empty() ? fs::path(".") : parent;
  std::error_code ec;
  if (fs::is_regular_file(here / "warm_start.json", ec) && fs::is_regular_file(here / "sweep.json", ec) &&
      kept_sources(here.string()) == json(s.warm_start) && records(here.string(), sweep)) {
    if (const std::string problem = read_kept_warm_start(sweep, here.string()); !problem.empty()) {
      const auto& first = s.warm_sources.front();
      throw ConfigError({Diagnostic{s.warm_start_file, "search.warm_start", first.line, first.column, problem}});
    }
    return;
  }
  std::vector<Diagnostic> problems;
  std::vector<std::vector<WarmResult>> trials;
  std::map<std::pair<dev_t, ino_t>, std::size_t> seen;  // one directory written two ways counts once
  for (std::size_t k = 0; k < s.warm_sources.size(); ++k) {
    const Source& source = s.warm_sources[k];
    struct stat info {};
    if (::stat(source.dir.c_str(), &info) == 0) {
      const auto [it, fresh] = seen.insert({{info.st_dev, info.st_ino}, k});
      if (!fresh) {
        problems.push_back(refusal(sweep, source, s.warm_start[k],
                                   "the directory " + s.warm_start[it->second] + " names too; its results would count twice")
                               .diagnostics()
                               .front());
        continue;
      }
    }
    try {
      for (auto& t : read_source(sweep, source, s.warm_start[k])) trials.push_back(std::move(t));
    } catch (const ConfigError& e) {
      problems.insert(problems.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  if (!problems.empty()) throw ConfigError(problems);
  // Ids -T .. -1 in the order read, so the last read is the newest, as
  // Optuna's add_trials keeps their order (TPE weighs older results less).
  const auto count = static_cast<std::int64_t>(trials.size());
  for (std::int64_t k = 0; k < count; ++k) {
    for (auto& w : trials[static_cast<std::size_t>(k)]) {
      w.result.trial_id = k - count;
      s.warm_results.push_back(std::move(w));
    }
  }
}

void keep_warm_start(const std::string& dir, const SweepConfig& sweep) {
  json results = json::array();
  for (const auto& w : sweep.search.warm_results) {
    json params = json::object();
    for (const auto& [name, value] : w.params) params[name] = to_json(value);
    json r = {{"id", w.result.trial_id}, {"source", w.source}, {"trial", w.trial}, {"params", params},
              {"budget", w.result.budget}, {"metric", w.result.metric}, {"status", status_name(w.result.status)}};
    if (!w.result.objectives.empty()) r["objectives"] = w.result.objectives;  // (NaN is written null)
    if (w.result.violation != 0) r["violation"] = w.result.violation;          // (infinity too: read back as NaN)
    results.push_back(r);
  }
  // The CRC-32 of the results finds an edit from outside: one that keeps the
  // file valid (a result dropped, a metric changed) would change the trials.
  write_atomically(dir + "/warm_start.json", json({{"format", 1},
                                                   {"sources", sweep.search.warm_start},
                                                   {"results", results},
                                                   {"crc32", crc32_of(results.dump())}})
                                                     .dump(1) +
                                                 "\n");
}

std::string read_kept_warm_start(SweepConfig& sweep, const std::string& dir) {
  auto& s = sweep.search;
  if (s.warm_start.empty()) return "";
  const std::string file = dir + "/warm_start.json";
  std::ifstream in(file);
  const auto kept = json::parse(in, nullptr, /*allow_exceptions=*/false);
  const std::string damaged = file + " is gone or damaged (run wrote it whole: changed from outside); it holds the "
                                     "earlier results search.warm_start started the searcher from";
  if (!kept.is_object() || kept.value("format", 0) != 1 || !kept.contains("results") || !kept["results"].is_array()) {
    return damaged;
  }
  if (kept.value("sources", json()) != json(s.warm_start)) {
    return file + " holds the results of " + kept.value("sources", json()).dump() + ", not of search.warm_start's " +
           json(s.warm_start).dump() + " (changed from outside)";
  }
  s.warm_results.clear();
  const auto space = make_search_space(sweep);
  try {
    for (const auto& r : kept["results"]) {
      WarmResult w;
      for (const auto& [name, value] : r.at("params").items()) w.params[name] = param_value_of(value);
      w.result.trial_id = r.at("id");
      w.result.budget = r.at("budget");
      w.result.metric = number_or_nan(r.at("metric"));
      const std::string status = r.at("status");
      w.result.status = status_of(status);
      if (r.contains("objectives")) {
        for (const auto& v : r["objectives"]) w.result.objectives.push_back(number_or_nan(v));
      }
      if (r.contains("violation")) {  // (infinity, for a constrained value not measured, is written null)
        w.result.violation = r["violation"].is_number() ? r["violation"].get<double>()
                                                        : std::numeric_limits<double>::infinity();
      }
      w.source = r.at("source");
      w.trial = r.at("trial");
      const std::string problem = std::find(status_names().begin(), status_names().end(), status) == status_names().end()
                                      ? "status " + status
                                  : w.result.trial_id >= 0 ? "id " + std::to_string(w.result.trial_id) + " not below 0"
                                                           : kept_problem(space, sweep, w);
      if (!problem.empty()) {
        const std::size_t index = s.warm_results.size();
        s.warm_results.clear();
        return damaged + " (result " + std::to_string(index) + ": " + problem + ")";
      }
      s.warm_results.push_back(std::move(w));
    }
  } catch (const json::exception& e) {
    s.warm_results.clear();
    return damaged + " (" + e.what() + ")";
  }
  const json crc = kept.value("crc32", json());
  if (!crc.is_number_unsigned() || crc.get<std::uint32_t>() != crc32_of(kept["results"].dump()) ||
      !ids_in_order(s.warm_results, s.warm_start)) {
    s.warm_results.clear();
    return damaged + " (its results are not those it was written with)";
  }
  return "";
}

void warm_searcher(search::Searcher& searcher, const SweepConfig& sweep) {
  for (const auto& w : sweep.search.warm_results) {
    search::TrialResult told = w.result;
    if (told.status == search::TrialStatus::kDiverged) {  // as the tuner tells a diverged result: the worst
      told.metric = std::numeric_limits<double>::quiet_NaN();
      for (double& v : told.objectives) v = told.metric;
    }
    searcher.observe(told.trial_id, w.params, told);
  }
}

}  // namespace hfta::core
