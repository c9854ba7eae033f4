#include "hfta/core/warm_start.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hfta/core/config_error.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/trial_store.h"

namespace hfta::core {
namespace {

using nlohmann::json;
using Source = SearchOptions::WarmSource;

[[noreturn]] void refuse(const SweepConfig& sweep, const Source& source, const std::string& written,
                         const std::string& message) {
  throw ConfigError({Diagnostic{sweep.search.warm_start_file, source.at, source.line, source.column,
                                written + ": " + message}});
}

// The earlier sweep in `dir` (its sweep.json), refused where there is none or
// where its results measure another problem than this sweep's.
SweepConfig earlier_sweep(const SweepConfig& sweep, const Source& source, const std::string& written) {
  struct stat info {};
  if (::stat(source.dir.c_str(), &info) != 0) {
    refuse(sweep, source, written, "no such directory" + (source.dir == written ? "" : " (" + source.dir + ")"));
  }
  if (!S_ISDIR(info.st_mode)) refuse(sweep, source, written, "not a directory; name an earlier sweep's experiment directory");
  const std::string file = source.dir + "/sweep.json";
  if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    refuse(sweep, source, written,
           "holds no sweep (no sweep.json): name the experiment directory an earlier hfta-tune run wrote (its --out)");
  }
  SweepConfig earlier;
  try {
    earlier = load_sweep_file(file, nullptr, 16 * kMaxSweepBytes);
  } catch (const ConfigError& e) {
    refuse(sweep, source, written, "its sweep.json is damaged (" + e.diagnostics().front().message + ")");
  }
  auto differs = [&](const std::string& what, const std::string& there, const std::string& here) {
    if (there == here) return;
    refuse(sweep, source, written,
           "its trials trained " + what + " " + there + ", this sweep's " + here +
               ": their results measure another problem, and would mislead the searcher");
  };
  differs("model", earlier.task.model, sweep.task.model);
  differs("on dataset", earlier.task.dataset, sweep.task.dataset);
  differs("budgets in", to_string(earlier.budget.unit), to_string(sweep.budget.unit));
  return earlier;
}

// The task keys the earlier sweep set otherwise ("batch_size 128 there, 64 here"): noted, not refused.
std::string task_differences(const SweepConfig& earlier, const SweepConfig& sweep) {
  const json there = to_json(earlier).at("task"), here = to_json(sweep).at("task");
  std::string out;
  for (const auto& [key, value] : here.items()) {
    const json other = there.contains(key) ? there.at(key) : json();
    if (other == value) continue;
    if (!out.empty()) out += ", ";
    out += key + " " + (other.is_null() ? std::string("unset") : other.dump()) + " there, " + value.dump() + " here";
  }
  return out;
}

// Trial `config`'s values as this sweep's space draws them (conditions judged
// on them), or nullopt with `why` saying what lies outside it.
std::optional<search::Config> in_space(const search::SearchSpace& space, const search::Config& config, std::string& why) {
  search::Config chosen;
  for (const auto& p : space.parameters()) {
    if (!search::SearchSpace::active(p, chosen)) continue;
    const auto it = config.find(p.name);
    if (it == config.end()) {
      why = p.name + ": none there (this sweep tunes it)";
      return std::nullopt;
    }
    std::string not_drawn;
    const auto drawn = search::as_drawn(p, it->second, not_drawn);
    if (!drawn) {
      why = p.name + ": " + not_drawn;
      return std::nullopt;
    }
    chosen[p.name] = *drawn;
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
    if (point.value("step", std::int64_t{-1}) != rung.steps || !point.contains(name)) continue;
    return point.at(name).is_number() ? point.at(name).get<double>() : nan;
  }
  return nan;
}

// Whether the earlier trials measured `name` at all (a metric named later, as val_auc, may be absent).
bool measures(const std::string& name, const std::map<std::int64_t, StoredTrial>& trials, const SweepConfig& earlier) {
  if (name == "params" || name == earlier.metric.name) return true;
  for (const auto& [id, t] : trials) {
    for (const auto& point : t.record.history) {
      if (point.contains(name)) return true;
    }
  }
  return false;
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

// Reads one directory's results onto sweep.search.warm_results, with ids from `next_id` down.
void read_source(SweepConfig& sweep, const Source& source, const std::string& written, std::int64_t& next_id) {
  const SweepConfig earlier = earlier_sweep(sweep, source, written);
  const std::string differences = task_differences(earlier, sweep);
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
      return;
    }
  }
  const auto space = make_search_space(sweep);
  std::set<std::string> also_tuned;  // there, and not a parameter here: its results mix their values
  std::int64_t used = 0, results = 0, past_max = 0;
  for (const auto& [id, trial] : trials) {
    const double inherited = trial.record.parent ? trial.record.parent->budget : 0;  // a PBT clone's: its parent's
    std::vector<const RungResult*> rungs;
    for (const auto& r : trial.rungs) {
      if (r.budget > inherited && r.status != "failed") rungs.push_back(&r);
    }
    const std::string named = "trial " + std::to_string(id);
    if (rungs.empty()) {
      left.add(trial.record.status == "failed" ? "failed" : "finished no rung", named);
      continue;
    }
    std::string why;
    const auto config = in_space(space, trial.record.params, why);
    if (!config) {
      left.add("outside this sweep's space", named + "'s " + why);
      continue;
    }
    bool any = false, past = false;
    for (const RungResult* r : rungs) {
      if (r->budget > static_cast<double>(sweep.budget.max)) {
        ++past_max;  // ranked as further than any result of this sweep's, it would outweigh them all
        past = true;
        continue;
      }
      search::TrialResult result{next_id, r->budget, measured_at(sweep.metric.name, *r, trial, earlier),
                                 status_of(r->status)};
      for (const auto& o : sweep.objectives) result.objectives.push_back(measured_at(o.name, *r, trial, earlier));
      for (const auto& c : sweep.constraints) result.violation += c.violation(measured_at(c.name, *r, trial, earlier));
      if (std::isnan(result.metric) && result.status != search::TrialStatus::kDiverged) continue;  // not evaluated there
      sweep.search.warm_results.push_back({*config, result, written, id});
      any = true;
      ++results;
    }
    if (!any) {
      left.add(past ? "with results only past budget.max" : "with no result of " + sweep.metric.name, named);
      continue;
    }
    --next_id;
    ++used;
    for (const auto& [name, value] : trial.record.params) {
      const auto* p = earlier.find_parameter(name);
      if (!sweep.find_parameter(name) && p && p->distribution != search::Distribution::kConst) also_tuned.insert(name);
    }
  }
  if (damaged > 0) left.add("with a damaged trial.json", "");
  const std::string what = left.str();
  std::ostringstream note;
  note << "note: search.warm_start: " << written << ": " << results << " result" << (results == 1 ? "" : "s") << " of "
       << used << " of its " << trials.size() << " trials start the searcher";
  if (!what.empty()) note << "; left out: " << what;
  if (past_max > 0) note << "; " << past_max << " result" << (past_max == 1 ? "" : "s") << " past this sweep's budget.max left out";
  if (!also_tuned.empty()) {
    std::string list;
    for (const auto& n : also_tuned) list += (list.empty() ? "" : ", ") + n;
    note << "; it also tuned " << list << ", which this sweep does not: its results mix their values";
  }
  if (!differences.empty()) note << "; its task differs (" << differences << "): its results are taken as they are";
  if (!what.empty() || past_max > 0 || !also_tuned.empty() || !differences.empty() || used == 0) {
    sweep.search.warm_notes.push_back(note.str());
  }
}

double number_or_nan(const json& j) { return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN(); }

}  // namespace

void read_warm_start(SweepConfig& sweep) {
  auto& s = sweep.search;
  s.warm_results.clear();
  s.warm_notes.clear();
  std::int64_t next_id = -1;
  for (std::size_t k = 0; k < s.warm_sources.size(); ++k) read_source(sweep, s.warm_sources[k], s.warm_start[k], next_id);
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
  write_atomically(dir + "/warm_start.json",
                   json({{"format", 1}, {"sources", sweep.search.warm_start}, {"results", results}}).dump(1) + "\n");
}

std::string read_kept_warm_start(SweepConfig& sweep, const std::string& dir) {
  auto& s = sweep.search;
  if (s.warm_start.empty()) return "";
  const std::string file = dir + "/warm_start.json";
  std::ifstream in(file);
  const auto kept = json::parse(in, nullptr, /*allow_exceptions=*/false);
  const std::string damaged = file + " is gone or damaged (run wrote it whole: changed from outside); it holds the "
                                     "earlier results search.warm_start started the searcher from";
  if (!kept.is_object() || kept.value("format", 0) != 1 || !kept.contains("results") || !kept["results"].is_array() ||
      kept.value("sources", json()) != json(s.warm_start)) {
    return damaged;
  }
  s.warm_results.clear();
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
      if (r.contains("violation")) w.result.violation = r["violation"].is_number() ? r["violation"].get<double>() : NAN;
      w.source = r.at("source");
      w.trial = r.at("trial");
      s.warm_results.push_back(std::move(w));
    }
  } catch (const json::exception&) {
    s.warm_results.clear();
    return damaged;
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
