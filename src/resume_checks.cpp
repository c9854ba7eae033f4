#include "hfta/core/resume_checks.h"

#include <cerrno>
#include <fstream>
#include <map>
#include <set>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/trial_store.h"

namespace hfta::core {
namespace {

// The paths of a JSON document's leaves ("search.eta"), with their values.
void flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, path.empty() ? k : path + "." + k, out);
  } else {
    out[path] = j.dump();
  }
}

}  // namespace

std::optional<nlohmann::json> run_options_of(const std::string& dir) {
  std::ifstream run_file = open_regular(dir + "/run.json");
  if (!run_file && errno == EINVAL) return std::nullopt;  // there, but no regular file: damaged
  if (!run_file) return nlohmann::json::object();
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
                     (!options.contains("threads") ||
                      (options["threads"].is_number_integer() && options["threads"] >= 1 && options["threads"] <= 9999));
  if (!typed) return std::nullopt;
  return options;
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
  std::map<std::string, std::string> was, now;
  flatten(to_json(recorded), "", was);
  flatten(to_json(given), "", now);
  auto differs = [&](const std::string& k) {
    if (k == "name") {
      edits.renamed = true;
    } else {
      (k.rfind("fusion.", 0) == 0 ? edits.packing : edits.changed).push_back(k);
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
