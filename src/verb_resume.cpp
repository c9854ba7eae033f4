// hfta-tune resume: an interrupted sweep continued where it stopped, or a sweep grown by its file.
#include "verbs.h"

#include <sys/stat.h>

#include <filesystem>
#include <sstream>

#include "hfta/core/duration.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/warm_start.h"

namespace hfta::core::verbs {
namespace {

// The temporary files a process killed mid-write left (write_atomically's
// `*.tmp`, never read): removed by the next holder of the lock, so they do
// not pile up. Only regular files: a link is no file of hfta-tune's.
void remove_temporary_files(const std::string& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& path = it->path();
    if (path.extension() == ".tmp" && std::filesystem::is_regular_file(it->symlink_status())) {
      std::filesystem::remove(path, ec);
    }
  }
}

// Whether the directory's sweep.yaml grows its sweep's growth key (sweep_growth
// takes it, or says why not). A finished sweep whose file does anything else
// (or does not load) is finished, as ever.
bool growing(const std::string& dir) {
  std::ostringstream quiet;
  auto recorded = recorded_sweep(dir, "resume", quiet);
  const auto options = run_options_of(dir);
  if (!recorded || !options) return false;
  const auto edited = edited_sweep(dir, *recorded, *options, quiet);
  if (!edited || !edited->given) return false;
  std::string why;
  return sweep_growth(*recorded, *edited->given, edited->edits, why).has_value() || !why.empty();
}

}  // namespace

int resume(const Args& a, std::ostream& out, std::ostream& err) {
  catch_interrupts();
  stop_after(duration_seconds(a.time_limit).value_or(0));
  if (int code = 0; !is_experiment(a.dir, "resume", err, &code)) return code;
  if (const std::string too_long = too_long_for_inside(a.dir); !too_long.empty()) {
    err << "hfta-tune resume: " << too_long << "; resume it by a shorter path (a relative one from a directory near "
        << "it counts as written)\n";
    return kExitUsage;
  }
  std::string damaged;
  const bool finished = results_or_damage(a.dir, damaged).has_value();
  if (finished && !growing(a.dir)) {
    out << a.dir << " is finished; see hfta-tune status " << shell_word(a.dir) << "\n";
    return kExitOk;
  }
  // Every rung's result is in trials/: the replay writes results.json again.
  struct stat results {};
  if (!damaged.empty() && ::lstat((a.dir + "/results.json").c_str(), &results) == 0 && !S_ISREG(results.st_mode)) {
    err << "hfta-tune resume: " << damaged << "; remove it, and resume writes it again from the trials' files\n";
    return kExitFailure;
  }
  auto recorded = recorded_sweep(a.dir, "resume", err);
  if (!recorded) return kExitFailure;
  if (const std::string gone = read_tables_from(*recorded, a.dir); !gone.empty()) {
    err << "hfta-tune resume: " << gone << "\n";
    return kExitFailure;
  }
  std::string corpus_note;
  if (const std::string gone = read_corpus_from(*recorded, a.dir, &corpus_note); !gone.empty()) {
    err << "hfta-tune resume: " << gone << "\n";
    return kExitFailure;
  }
  if (!corpus_note.empty()) out << corpus_note << "\n";
  if (const std::string gone = read_kept_warm_start(*recorded, a.dir); !gone.empty()) {
    err << "hfta-tune resume: " << gone << "\n";
    return kExitFailure;
  }
  auto options = run_options_of(a.dir);
  if (!options) {
    err << "hfta-tune resume: " << run_json_damage(a.dir) << "\n";
    return kExitFailure;  // (a damaged file of the run's, as a damaged sweep.json: not bad usage)
  }
  nlohmann::json& run_options = *options;
  // The sweep file in the directory may have been edited since: refuse changes
  // to the trials, but for more of them (a finished sweep goes on then too).
  // (edited_sweep reads a TPE sweep from before search.waves with one wave.)
  const auto edited = edited_sweep(a.dir, *recorded, run_options, err);
  if (!edited) return kExitUsage;
  std::string not_grown;
  const auto growth = edited->given ? sweep_growth(*recorded, *edited->given, edited->edits, not_grown) : std::nullopt;
  if (!not_grown.empty()) {
    err << "hfta-tune resume: " << a.dir << "/sweep.yaml changes " << not_grown << "\n";
    return kExitUsage;
  }
  if (!growth && !edited->edits.changed.empty()) {
    err << "hfta-tune resume: " << a.dir << "/sweep.yaml and the sweep the run started (sweep.json) differ in "
        << "what would change its trials: " << joined(edited->edits.changed_values) << "\n";
    return kExitUsage;
  }
  if (growth) {
    if (const auto reached = target_reached_on_disk(a.dir, *recorded)) {
      err << "hfta-tune resume: " << a.dir << "/sweep.yaml grows " << growth->key << ", but trial " << reached->id
          << " reached the sweep's metric.target " << *recorded->metric.target << " (" << reached->metric
          << "), which ends it: no new trial would train; start another sweep\n";
      return kExitUsage;
    }
  }
  if (!damaged.empty()) out << damaged << "; writing it again from the trials' files\n";
  if (const auto mixed = trials_of_another_sweep(a.dir, *recorded); !mixed.empty()) {
    err << "hfta-tune resume: " << mixed << "\n";
    return kExitUsage;
  }
  const std::string repacked = joined(edited->edits.packing);  // the fusion keys edited, if any
  const bool renamed = edited->edits.renamed;
  if (!repacked.empty()) recorded->fusion = edited->given->fusion;
  if (renamed) recorded->name = edited->given->name;
  if (growth) {
    auto& s = recorded->search;
    (growth->key == "search.trials" ? s.trials : growth->key == "search.repeats" ? s.repeats : s.iterations) = growth->to;
  }
  const bool fuse = run_options.value("fusion", "auto") == "auto";
  // --device, --workers, --threads, --keep-checkpoints and --checkpoint-every as the run was given them,
  // unless given now (and then kept for later resumes). Directories from
  // before run.json recorded the device and workers trained on the CPU with
  // the default workers.
  Args as_run = a;
  bool given_now = false;
  auto reuse = [&](auto& value, bool unset, const char* key, const auto& before) {
    using T = std::decay_t<decltype(value)>;
    if (unset) {
      value = run_options.value(key, T(before));
    } else if (run_options.value(key, T(before)) != value) {
      run_options[key] = value;
      given_now = true;
    }
  };
  reuse(as_run.device, a.device.empty(), "device", "cpu");
  reuse(as_run.workers, a.workers == 0, "workers", 0);
  reuse(as_run.threads, a.threads == 0, "threads", 0);  // (0, before run.json had them: this machine's share)
  reuse(as_run.keep_checkpoints, a.keep_checkpoints.empty(), "keep_checkpoints", "all");
  reuse(as_run.checkpoint_every, a.checkpoint_every < 0, "checkpoint_every", kDefaultCheckpointSeconds);
  try {  // refused before anything is written, saying where the list came from
    devices_of(as_run);
  } catch (const std::invalid_argument& e) {
    err << "hfta-tune resume: " << (a.device.empty() ? "the run's --device (run.json): " : "--device: ") << e.what()
        << "\n";
    return kExitUsage;
  }
  int refused = kExitUsage;
  const auto lock = lock_or_refuse(a.dir, "resume", err, refused);
  if (!lock) return refused;
  // What train() refuses with exit code 2, refused before anything is written.
  if ((!repacked.empty() || renamed || given_now || growth) &&
      !precision_fits(*recorded, a.dir + "/sweep.json", devices_of(as_run), "resume", err)) {
    return kExitUsage;
  }
  if (growth) {
    // The old results first: a crash before sweep.json records the growth
    // leaves an unfinished sweep that the edited file grows again.
    if (finished) std::filesystem::remove(a.dir + "/results.json");
    const std::int64_t more = growth->to - growth->from;
    out << "sweep.yaml's " << growth->key << " grows from " << growth->from << " to " << growth->to
        << ": the trials so far are kept, "
        << (growth->key == "search.iterations" ? "and Hyperband runs its brackets " + std::to_string(more) +
                                                     (more == 1 ? " more time" : " more times") + ", with new trials"
            : growth->key == "search.repeats"  ? "and each grid point runs " + std::to_string(more) + " more " +
                                                     (more == 1 ? "time" : "times") + ", with new seeds"
                                               : std::to_string(more) + (more == 1 ? " more trial trains" : " more trials train"))
        << "\n";
  }
  if (!repacked.empty() || renamed || growth) {
    write_atomically(a.dir + "/sweep.json", to_json(*recorded).dump(2) + "\n");
    if (!repacked.empty()) {
      out << "sweep.yaml's " << repacked << " changed: how trials are packed, not their numbers; packing by it now\n";
    }
    if (renamed) out << "sweep.yaml's name changed: the results are named '" << recorded->name << "' now\n";
  }
  remove_temporary_files(a.dir);
  if (given_now) write_atomically(a.dir + "/run.json", run_options.dump() + "\n");
  return train(*recorded, a.dir, fuse, as_run, a, out, err, "resume", *lock);
}

}  // namespace hfta::core::verbs
