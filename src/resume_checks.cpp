#include "hfta/core/resume_checks.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>

#include <sys/stat.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/trial_store.h"

namespace hfta::core {
namespace {

// The paths of a JSON document's leaves ("search.eta"), with their values; a
// list of mappings by item ("metric[1].goal").
// `sections`: the mappings and lists of them on the way, by path, with their text.
void flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out,
             std::map<std::string, std::string>& sections) {
  const bool of_mappings =
      j.is_array() && !j.empty() && std::all_of(j.begin(), j.end(), [](const nlohmann::json& v) { return v.is_object(); });
  if (j.is_object()) {
    if (!path.empty()) sections[path] = j.dump();
    for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out, sections);
  } else if (of_mappings) {
    sections[path] = j.dump();
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], path + "[" + std::to_string(i) + "]", out, sections);
  } else {
    out[path] = j.dump();
  }
}

// The shortest path on the way to `key` ("early_stopping" of
// "early_stopping.patience") that `side` lacks: a section added or removed
// whole is named once, as written, not as each key its defaults fill in.
std::string first_missing(const std::string& key, const std::map<std::string, std::string>& side) {
  for (std::size_t at = key.find_first_of(".["); at != std::string::npos; at = key.find_first_of(".[", at + 1)) {
    if (!side.count(key.substr(0, at))) return key.substr(0, at);
  }
  return key;
}

// One metric as the first of a list, so that going from one to several
// objectives names the objectives added, not the one that stays.
nlohmann::json as_objectives(nlohmann::json sweep) {
  if (sweep.contains("metric") && sweep["metric"].is_object() && !sweep["metric"].contains("target")) {
    sweep["metric"] = nlohmann::json::array({sweep["metric"]});
  }
  return sweep;
}

}  // namespace

std::optional<nlohmann::json> run_options_of(const std::string& dir) {
  std::ifstream run_file = open_regular(dir + "/run.json");
  if (!run_file && errno == EINVAL) return std::nullopt;  // there, but no regular file: damaged
  if (!run_file) return std::nullopt;  // lost: run writes it before sweep.json, and nothing removes it
  auto options = nlohmann::json::parse(run_file, nullptr, /*allow_exceptions=*/false);
  if (!options.is_object()) return std::nullopt;
  auto one_of = [&](const char* key, const std::set<std::string>& values) {
    return !options.contains(key) || (options[key].is_string() && values.count(options[key].get<std::string>()));
  };
  const bool typed = (!options.contains("seed_given") || options["seed_given"].is_boolean()) &&
                     one_of("fusion", {"auto", "off"}) && one_of("keep_checkpoints", {"all", "live"}) &&
                     (!options.contains("device") ||
                      (options["device"].is_string() && !options["device"].get<std::string>().empty())) &&
                     (!options.contains("workers") ||
                      (options["workers"].is_number_integer() && options["workers"] >= 0 && options["workers"] <= 9999)) &&
                     (!options.contains("checkpoint_every") ||
                      (options["checkpoint_every"].is_number() && options["checkpoint_every"] >= 0)) &&
                     (!options.contains("threads") ||
                      (options["threads"].is_number_integer() && options["threads"] >= 1 && options["threads"] <= 9999));
  if (!typed) return std::nullopt;
  return options;
}

std::string run_json_damage(const std::string& dir) {
  struct stat info {};
  if (::lstat((dir + "/run.json").c_str(), &info) != 0) {
    // (A run writes it before sweep.json: a sweep without it lost it since.)
    return dir + "/run.json is missing (removed from outside): it holds the options the run was given (--threads, "
                 "which decides its numbers, --device, --fusion, ...), which resume trains with; restore it from a "
                 "backup, or write {} into it to resume with the defaults (and --threads, --device, ... given to resume)";
  }
  return dir + "/run.json is damaged (not a JSON object of run options as run writes them)";
}

bool recorded_names_waves(const std::string& dir) {
  std::ifstream in = open_regular(dir + "/sweep.json");
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("search") && j["search"].is_object() && j["search"].contains("waves");
}

SweepEdits sweep_edits(const SweepConfig& recorded, SweepConfig given, bool seed_given, bool before_waves) {
  SweepEdits edits;
  if (seed_given) given.seed = recorded.seed;
  if (before_waves) given.search.waves = 1;
  std::map<std::string, std::string> was, now, was_sections, now_sections;
  flatten(as_objectives(to_json(recorded)), "", was, was_sections);
  flatten(as_objectives(to_json(given)), "", now, now_sections);
  auto shown = [](const std::map<std::string, std::string>& values, const std::map<std::string, std::string>& sections,
                  const std::string& k) {
    const auto value = values.find(k);
    const auto section = sections.find(k);
    const std::string* text = value != values.end() ? &value->second : section != sections.end() ? &section->second : nullptr;
    if (!text) return std::string("none");
    return text->size() > 40 ? text->substr(0, 37) + "..." : *text;
  };
  std::set<std::string> named;
  auto differs = [&](std::string k) {
    if (k.rfind("fusion.", 0) != 0) {  // (packing keys are taken one by one)
      if (!was.count(k)) k = first_missing(k, was_sections);
      if (!now.count(k)) k = first_missing(k, now_sections);
    }
    if (!named.insert(k).second) return;
    if (k == "name") {
      edits.renamed = true;
    } else if (k.rfind("fusion.", 0) == 0) {
      edits.packing.push_back(k);
    } else {
      edits.changed.push_back(k);
      edits.changed_values.push_back(k + " (" + shown(was, was_sections, k) + " -> " + shown(now, now_sections, k) + ")");
    }
  };
  for (const auto& [k, v] : now) {
    if (!was.count(k) || was[k] != v) differs(k);
  }
  for (const auto& [k, v] : was) {
    if (!now.count(k)) differs(k);
  }
  return edits;
}

std::optional<SweepGrowth> sweep_growth(const SweepConfig& recorded, const SweepConfig& given, const SweepEdits& edits,
                                        std::string& why) {
  why.clear();
  const auto& was = recorded.search;
  const auto& changed = edits.changed;
  auto edited = [&](const std::string& key) { return std::find(changed.begin(), changed.end(), key) != changed.end(); };
  SweepGrowth g;
  switch (was.method) {
    case SearchMethod::kRandom: g = {"search.trials", was.trials, given.search.trials}; break;
    case SearchMethod::kGrid: g = {"search.repeats", was.repeats, given.search.repeats}; break;
    case SearchMethod::kHyperband: g = {"search.iterations", was.iterations, given.search.iterations}; break;
    case SearchMethod::kSha:
      if (edited("search.trials")) why = "search.trials: successive halving sizes every rung by it, so the rungs so far would have kept other trials; start another sweep";
      return std::nullopt;
    case SearchMethod::kAsha:
      // Its promotions are made as results arrive: a first rung packed from
      // fewer trials (a user's 20 grown to 30) promoted others than the
      // larger run's, and a finished sweep's last promotions were made with
      // no more trials to come (CMA-ES's 4 grown to 8, by another user).
      if (edited("search.trials")) why = "search.trials: ASHA promotes trials in the order their results arrive, which a larger count would change (its arrays, and the promotions made once no more trials were to come), so the rungs so far would not be a run of the grown sweep's; start another sweep";
      return std::nullopt;
    case SearchMethod::kPbt:
      if (edited("search.population")) why = "search.population: population based training's generations replace members by their ranks in it; start another sweep";
      return std::nullopt;
  }
  if (!edited(g.key)) return std::nullopt;
  const std::string what = g.key + " from " + std::to_string(g.from) + " to " + std::to_string(g.to);
  if (g.to < g.from) {
    why = what + ": a sweep can grow, not shrink (sweep.json records " + std::to_string(g.from) +
          ": the sweep as run, or as a resume grew it)";
  } else if (was.method != SearchMethod::kHyperband && models_results(was.searcher)) {
    // (Before the other keys: the default waves follow the count, and change with it.)
    const std::string searcher = was.searcher == Searcher::kGp ? "the Gaussian process" : "TPE";
    why = what + ": " + searcher + " started the trials so far in waves sized by their count, which the larger count "
          "would size otherwise; grow a " + to_string(was.searcher) +
          " sweep by search.iterations of Hyperband, or start another sweep";
  } else if (was.stopping != Stopping::kNone) {
    why = what + ": search.stopping " + to_string(was.stopping) + " trains the trials together, step by step; start "
                 "another sweep";
  } else if (changed.size() > 1) {
    std::string others;
    for (const auto& k : changed) {
      if (k != g.key) others += (others.empty() ? "" : ", ") + k;
    }
    why = g.key + " along with " + others + ": resume grows a sweep by " + g.key + " alone, all else as the run "
          "started (sweep.json)";
  } else {
    return g;
  }
  return std::nullopt;
}

// Two sweeps' files mixed, or sweep.json's seed edited along with
// sweep.yaml's: resuming would train one sweep's trials under the other's
// batch order. (Not the configurations: how values are drawn may change
// between versions, and the trials keep theirs.)
std::string trials_of_another_sweep(const std::string& dir, const SweepConfig& recorded) {
  for (const auto& [id, t] : TrialStore(dir).load_all()) {
    if (t.record.seed != search::trial_seed(recorded.seed, id)) {
      return dir + "/trials/" + std::to_string(id) + "/trial.json holds seed " + std::to_string(t.record.seed) +
             ", which the sweep of sweep.json does not give trial " + std::to_string(id) +
             ": the trials are of another sweep, or sweep.json was edited";
    }
  }
  return "";
}

}  // namespace hfta::core
