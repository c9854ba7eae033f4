// hfta-tune status: the progress of a running, stopped or finished sweep.
#include "verbs.h"

#include "hfta/core/sweep_importance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <sys/stat.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_importance.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/core/trial_store.h"
#include "hfta/fusion/device_list.h"
#include "hfta/search/scheduler.h"

namespace hfta::core::verbs {
namespace {

// "search.warm_start: ..." where the searcher started from earlier sweeps' results (DIR/warm_start.json); "" elsewhere.
std::string warm_start_summary(const std::string& dir) {
  std::ifstream in(dir + "/warm_start.json");
  if (!in) return "";
  const auto kept = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!kept.is_object() || !kept.contains("results") || !kept["results"].is_array() || !kept.contains("sources")) return "";
  std::set<std::int64_t> trials;
  std::string sources;
  try {  // (one damaged from outside: resume says so; status shows the rest)
    for (const auto& r : kept["results"]) trials.insert(r.at("id").get<std::int64_t>());
    for (const auto& source : kept["sources"]) sources += (sources.empty() ? "" : ", ") + source.get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return "";
  }
  const auto n = kept["results"].size();
  return "search.warm_start: the searcher started from " + std::to_string(n) + (n == 1 ? " result" : " results") +
         " of " + std::to_string(trials.size()) + (trials.size() == 1 ? " earlier trial" : " earlier trials") + " (" +
         sources + ")\n";
}

// Evaluations inside rungs not finished yet: how many, and the best of the
// sweep's metric among them, as Ray Tune shows a trial's last reported result.
std::string in_rung_summary(const SweepConfig& sweep, const std::vector<TrialRecord>& trials) {
  std::size_t count = 0;
  std::optional<std::pair<double, const nlohmann::json*>> best;
  std::int64_t best_id = -1;
  for (const auto& t : trials) {
    for (const auto& e : t.in_rung) {
      ++count;
      const auto it = e.find(sweep.metric.name);
      if (it == e.end() || !it->is_number() || !std::isfinite(it->get<double>())) continue;
      const double v = it->get<double>();
      if (!best || search::better(v, best->first, sweep.metric.goal)) {
        best = std::make_pair(v, &e);
        best_id = t.id;
      }
    }
  }
  if (count == 0) return "";
  std::ostringstream out;
  out << "; inside rungs, " << count << (count == 1 ? " evaluation" : " evaluations") << " so far";
  if (best) {
    out << ", the best " << sweep.metric.name << " " << best->first << " (trial " << best_id << " at step "
        << best->second->at("step") << ")";
  }
  return out.str();
}

}  // namespace

namespace {

// What status says of a stopped sweep: to resume it, or, where resume would
// refuse the directory's sweep.yaml as edited, what to mend first.
std::string how_to_continue(const std::string& dir, SweepConfig recorded) {
  const std::string resume = "continue with hfta-tune resume " + shell_word(dir);
  if (const std::string lock = ExperimentLock::foreign(dir); !lock.empty()) return lock + ", then " + resume;
  const auto run_options = run_options_of(dir);
  if (!run_options) return run_json_damage(dir) + ", and resume reads it";
  std::ostringstream problems;
  const auto edited = edited_sweep(dir, recorded, *run_options, problems);
  if (!edited) {
    return dir + "/sweep.yaml does not load (hfta-tune validate " + dir +
           "/sweep.yaml says why), and resume reads it: mend it, then " + resume;
  }
  std::string not_grown;
  const auto growth = edited->given ? sweep_growth(recorded, *edited->given, edited->edits, not_grown) : std::nullopt;
  if (!not_grown.empty()) return dir + "/sweep.yaml changes " + not_grown + ", which resume refuses: mend it, then " + resume;
  if (growth) {
    return dir + "/sweep.yaml grows " + growth->key + " from " + std::to_string(growth->from) + " to " +
           std::to_string(growth->to) + ": " + resume + ", which grows it";
  }
  if (!edited->edits.changed.empty()) {
    return dir + "/sweep.yaml was edited in what would change its trials (" + joined(edited->edits.changed) +
           "), which resume refuses: restore " + (edited->edits.changed.size() == 1 ? "it" : "them") + ", then " + resume;
  }
  if (const auto mixed = trials_of_another_sweep(dir, recorded); !mixed.empty()) return mixed + ", which resume refuses";
  if (const std::string table = read_tables_from(recorded, dir); !table.empty()) return table + ", then " + resume;
  if (const std::string corpus = read_corpus_from(recorded, dir); !corpus.empty()) return corpus + ", then " + resume;
  const std::string device = run_options->value("device", "cpu");
  try {
    fusion::parse_device_list(device);
  } catch (const std::invalid_argument& e) {
    return "the run's --device " + device + " is not here (" + e.what() + "): " + resume + " --device cpu";
  }
  return resume;
}

}  // namespace

int status(const Args& a, std::ostream& out, std::ostream& err) {
  const auto holder = ExperimentLock::holder(a.dir);
  struct stat info {};
  if (holder && ::stat((a.dir + "/sweep.json").c_str(), &info) != 0) {  // a run writing its first files
    out << a.dir << ": starting (pid " << (holder->empty() ? "unknown" : *holder)
        << "), writing its first files; no trial has begun\n";
    return kExitOk;
  }
  if (int code = 0; !is_experiment(a.dir, "status", err, &code)) return code;
  const bool running = holder.has_value();
  std::string damaged;
  const auto results = results_or_damage(a.dir, damaged);
  if (!damaged.empty() && !running) {  // (a resume running writes it again: its progress is shown)
    // Resume writes it again, unless it refuses the directory first (an edited sweep.yaml, say).
    std::ostringstream quiet;
    const auto sweep = recorded_sweep(a.dir, "status", quiet);
    const std::string how = sweep ? how_to_continue(a.dir, *sweep) : "";
    const std::string plain = "continue with hfta-tune resume " + shell_word(a.dir);
    struct stat results {};  // (no file: resume refuses it until it is removed)
    const bool no_file = ::lstat((a.dir + "/results.json").c_str(), &results) == 0 && !S_ISREG(results.st_mode);
    err << "hfta-tune status: " << damaged << "; " << (no_file ? "remove it, then " : "")
        << (how.empty() || how == plain ? "hfta-tune resume " + shell_word(a.dir) + " writes it again"
                                        : how + ", which writes it again")
        << "\n";
    return kExitFailure;
  }
  if (!results) {
    // Not running: stopped by a signal, a kill or a time limit; which, the directory does not say.
    const auto trials = TrialStore(a.dir).load_all(left_out(err, "status"));
    std::size_t rungs = 0, partial = 0;
    for (const auto& [id, t] : trials) rungs += own_rungs(t), partial += t.partial.has_value();
    out << a.dir << ": " << (running ? "running (pid " + (holder->empty() ? "unknown" : *holder) + ")" : "not running") << ", " << trials.size()
        << " trial(s) with " << rungs << " finished rung(s)";
    // Out of the plan's rung results (as the progress line counts them), and the best so far.
    std::ostringstream problems;
    const auto sweep = recorded_sweep(a.dir, "status", problems);
    if (!sweep && !running) {  // resume would refuse it: say so, not "continue with resume"
      out << "\n";
      err << problems.str();
      return kExitFailure;
    }
    SweepResult so_far;
    if (sweep) {
      std::size_t planned = 0;
      for (const auto& bracket : make_plan(*sweep, true, "cpu", 1e18).brackets) {
        for (const auto& rung : bracket.rungs) planned += static_cast<std::size_t>(rung.n);
      }
      out << " of " << planned << " planned";
      // Ranked as run ranks them at the end: each trial at the budget it reached.
      so_far = trials_so_far(a.dir, *sweep);
      if (so_far.best >= 0) {
        const TrialRecord& best = so_far.trials[static_cast<std::size_t>(so_far.best)];
        out << ", best " << sweep->metric.name << " so far " << best.metric << " (trial " << best.id << " at "
            << budget_text(best.budget, to_string(sweep->budget.unit)) << ")";
      }
      if (!sweep->objectives.empty()) out << ", " << so_far.pareto.size() << " on the Pareto front so far";
      out << in_rung_summary(*sweep, so_far.trials);
      // Killed after the round that reached metric.target, before results.json.
      if (sweep->metric.target) {
        if (const auto reached = target_reached_on_disk(a.dir, *sweep)) {
          out << ", trial " << reached->id << " reached the target " << sweep->metric.name << " "
              << *sweep->metric.target << " (" << reached->metric << " at "
              << budget_text(reached->budget, to_string(sweep->budget.unit)) << "): resume ends the sweep after that round";
        }
      }
    }
    if (partial > 0) out << ", " << partial << " checkpointed mid-rung";
    if (!running) out << "; " << how_to_continue(a.dir, *sweep);
    out << "\n";
    if (sweep) out << importance_summary({{"importance", importance_json(*sweep, so_far.trials)}});
    out << warm_start_summary(a.dir);
    return kExitOk;
  }
  std::map<std::string, int> by_status;
  for (const auto& t : results->at("trials")) by_status[t.at("status").get<std::string>()]++;
  const std::size_t trials = results->at("trials").size();
  out << a.dir << ": finished, " << trials << (trials == 1 ? " trial (" : " trials (");
  bool first = true;
  for (const auto& [st, n] : by_status) {
    out << (first ? "" : ", ") << n << " " << st;
    first = false;
  }
  out << ")\n";
  out << target_summary(*results);
  if (!results->at("best").is_null()) {
    const auto& best = results->at("best");
    out << "best: trial " << best.at("id") << ", " << results->at("metric").at("name").get<std::string>() << " "
        << number(best.at("metric"));
    if (best.contains("test")) out << "; on the test split: " << test_summary(best.at("test"));
    out << "\n";
  }
  if (results->contains("constraints")) {
    const auto& all = results->at("trials");
    const auto outside = std::count_if(all.begin(), all.end(), [](const nlohmann::json& t) {
      return t.value("feasible", true) == false;
    });
    if (outside == 0) {
      out << "every trial with a result ended within the constraints\n";
    } else {
      out << outside << " of " << all.size() << " trials ended outside the constraints (never best)"
          << (results->at("best").is_null() ? ": no trial is best" : "") << "\n";
    }
  }
  out << pareto_summary(*results);
  out << importance_summary(*results);
  out << warm_start_summary(a.dir);
  // Its sweep.yaml edited to grow it since: resume would.
  std::ostringstream quiet;
  auto recorded = recorded_sweep(a.dir, "status", quiet);
  const auto run_options = run_options_of(a.dir);
  const auto edited = recorded && run_options ? edited_sweep(a.dir, *recorded, *run_options, quiet) : std::nullopt;
  std::string why;
  if (const auto growth = edited && edited->given ? sweep_growth(*recorded, *edited->given, edited->edits, why) : std::nullopt) {
    out << a.dir << "/sweep.yaml grows " << growth->key << " from " << growth->from << " to " << growth->to
        << ": hfta-tune resume " << shell_word(a.dir) << " grows the sweep\n";
  }
  return kExitOk;
}

}  // namespace hfta::core::verbs
