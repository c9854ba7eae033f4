// What the verbs read: durations and devices given as flags, sweep files,
// experiment directories; each saying what is wrong where it is.
#include "verbs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <limits>
#include <sstream>
#include <thread>

#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/trial_store.h"
#include "hfta/core/warm_start.h"
#include "hfta/fusion/device_list.h"
#include "hfta/fusion/device_memory.h"

namespace hfta::core::verbs {

// The devices --device names (cpu where it is not given); throws
// std::invalid_argument where the list is malformed or names no visible GPU.
std::vector<c10::Device> devices_of(const Args& a) { return fusion::parse_device_list(a.device.empty() ? "cpu" : a.device); }

// Loads the sweep, printing every problem; nullopt means exit 2.
// The trainer's refusals too, so that validate and plan agree with run.
// `text`, when given, receives the file as read.
std::optional<SweepConfig> load(const std::string& path, std::ostream& err, std::string* text,
                                std::size_t max_bytes) {
  return load_sweep(path, err, text, max_bytes, nullptr);
}

// A sweep file given to validate, plan or run: as load(), and its table
// (task.dataset csv) read, so that a bad row is refused as the file's own
// problems are, before anything is written; `tables` receives its files as read.
std::optional<SweepConfig> load_given(const std::string& path, std::ostream& err, std::string* text,
                                      TableBytes* tables) {
  TableBytes read;
  return load_sweep(path, err, text, kMaxSweepBytes, tables ? tables : &read);
}

// load(), and where `tables` is given, load_given().
std::optional<SweepConfig> load_sweep(const std::string& path, std::ostream& err, std::string* text,
                                      std::size_t max_bytes, TableBytes* tables) {
  try {
    SweepConfig sweep = load_sweep_file(path, text, max_bytes);
    if (const auto problems = not_trainable_yet(sweep); !problems.empty()) {
      for (const auto& p : problems) err << path << ": " << p << "\n";
      err << path << ": invalid sweep (" << problems.size() << " problem" << (problems.size() == 1 ? "" : "s")
          << ")\n";
      return std::nullopt;
    }
    if (tables && sweep.task.dataset == "csv") read_sweep_table(sweep, tables);
    if (tables) read_warm_start(sweep);  // (the earlier sweeps' results, checked as its tables are)
    return sweep;
  } catch (const ConfigError& e) {
    err << e.what() << "\n";
    const size_t n = e.diagnostics().size();
    // (A file that cannot be read is no invalid sweep: its one line says it all.)
    const bool unread = n == 1 && e.diagnostics()[0].message.rfind("cannot read", 0) == 0;
    if (!unread) err << path << ": invalid sweep (" << n << " problem" << (n == 1 ? "" : "s") << ")\n";
    return std::nullopt;
  }
}

// DIR/sweep.json, or nullopt once err says what is wrong with it: run writes
// it whole, so one that does not load was changed from outside (exit code 1,
// as a damaged results.json).
std::optional<SweepConfig> recorded_sweep(const std::string& dir, const char* verb, std::ostream& err) {
  std::ostringstream problems;
  struct stat info {};
  if (::stat((dir + "/sweep.json").c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    problems << dir << "/sweep.json: not a regular file\n";  // a FIFO would block the read for ever
  }
  auto sweep = problems.str().empty() ? load(dir + "/sweep.json", problems, nullptr, 16 * kMaxSweepBytes) : std::nullopt;
  if (!sweep) {
    err << problems.str() << "hfta-tune " << verb << ": " << dir
        << "/sweep.json is damaged (it was written whole: changed from outside); resume cannot continue the sweep\n";
  }
  return sweep;
}

namespace {

// One worker per core, up to 4: on small CPUs one array's ops do not keep
// every core busy (its small kernels split poorly), arrays side by side do;
// beyond a few, each array's share of memory and cores gets thin.
int default_workers() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4); }

}  // namespace

// --workers, or its default on these devices (GPUs: one each).
int workers_for(const Args& a, const std::vector<c10::Device>& devices) {
  if (a.workers > 0) return a.workers;
  return devices.front().is_cpu() ? default_workers() : static_cast<int>(devices.size());
}

// The memory one worker's arrays are sized to: its device's, shared with the
// other workers on that device.
double memory_per_worker(const std::vector<c10::Device>& devices, int workers) {
  return fusion::available_memory_bytes(devices.front()) * static_cast<double>(devices.size()) / workers;
}

// (Workers that do not divide evenly over the devices are planned within
// memory_per_worker's average share: said plainly, not as a fraction of one.)
int workers_sharing(const std::vector<c10::Device>& devices, int workers) {
  const int n = static_cast<int>(devices.size());
  return workers % n == 0 ? workers / n : 1;
}

// LibTorch's CPU autocast computes in bfloat16 only: fp16 needs a GPU. Said at
// the line of `file` (the sweep as loaded) that asks for it, as loading errors are.
bool precision_fits(const SweepConfig& sweep, const std::string& file, const std::vector<c10::Device>& devices,
                    const char* verb, std::ostream& err) {
  if (sweep.task.precision != "fp16" || !devices.front().is_cpu()) return true;
  const Diagnostic d{file, "task.precision", sweep.task.precision_line, sweep.task.precision_column,
                     "fp16 needs a CUDA device (--device cuda); on the CPU use bf16 or fp32"};
  err << d.str() << "\n" << "hfta-tune " << verb << ": " << file << ": not trainable on "
      << c10::Device(devices.front()) << "\n";
  return false;
}

// DIR's results.json, or nullopt with `damaged` set to why it cannot be read.
std::optional<nlohmann::json> results_or_damage(const std::string& dir, std::string& damaged) {
  try {
    return read_results(dir);
  } catch (const DamagedResults& e) {
    damaged = e.what();
    return std::nullopt;
  }
}

// What a run killed before its sweep.json leaves (its lock, sweep.yaml, run.json,
// a sweep.json.tmp, each maybe as a .tmp): a later run takes the directory over.
bool left_before_the_sweep(const std::string& name) {
  return name.rfind("lock", 0) == 0 || name.rfind("sweep.yaml", 0) == 0 || name.rfind("run.json", 0) == 0 ||
         name == "sweep.json.tmp";
}

std::string folder_problem(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return errno == ENOENT ? "does not exist" : std::string("cannot be read: ") + std::strerror(errno);
  }
  if (S_ISREG(info.st_mode)) return "is a file, not a folder";
  if (!S_ISDIR(info.st_mode)) return "is not a folder";
  if (::access(path.c_str(), X_OK) != 0) return std::string("cannot be entered: ") + std::strerror(errno);
  return "";
}

namespace {

// Whether DIR/trials holds a trial's trial.json (a folder of the user's that
// happens to be named trials does not).
bool holds_trials(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/trials", ec)) {
    if (std::filesystem::exists(entry.path() / "trial.json", ec)) return true;
  }
  return false;
}

bool looks_like_sweep_file(const std::string& path) {
  const auto extension = std::filesystem::path(path).extension();
  return extension == ".yaml" || extension == ".yml";
}

}  // namespace

// Whether `dir` holds a sweep, after saying what it is instead.
bool is_experiment(const std::string& dir, const char* verb, std::ostream& err, int* code) {
  if (code) *code = kExitUsage;
  struct stat info {};
  if (::stat((dir + "/sweep.json").c_str(), &info) == 0) return true;
  err << "hfta-tune " << verb << ": " << (dir.empty() ? "''" : dir);
  // A run that holds the lock and is still writing its first files (copying a large table, say).
  if (const auto holder = ExperimentLock::holder(dir)) {
    err << " is in use by another hfta-tune (pid " << (holder->empty() ? "unknown" : *holder)
        << "), which is starting its sweep (no sweep.json yet); try again in a moment\n";
    return false;
  }
  std::error_code ec;
  bool started = false;  // by a run killed before its sweep.json, however early
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    started = started || left_before_the_sweep(entry.path().filename().string());
  }
  const std::string problem = folder_problem(dir);
  if (!problem.empty()) {
    err << " " << problem;
    // A sweep file given where the directory goes: say what takes it.
    if (problem.rfind("is a file", 0) == 0 && looks_like_sweep_file(dir)) {
      err << "; to start the sweep it holds: hfta-tune run " << shell_word(dir) << " --out DIR";
    }
    err << "\n";
  } else if (::stat((dir + "/state.json").c_str(), &info) == 0 || holds_trials(dir)) {
    // Its sweep began (sweep.json is written before anything of the sweep's): removed since, from outside.
    err << " has lost its sweep.json (removed from outside: it holds the trials of a sweep that began), which every "
        << "verb reads the sweep from; restore it from a backup\n";
    if (code) *code = kExitFailure;
  } else if (started) {
    // What a run stopped while writing its first files leaves (run accepts the directory again).
    err << " holds no sweep.json: the run that made it stopped before its sweep started; start it again with "
        << "hfta-tune run SWEEP.yaml --out " << shell_word(dir) << "\n";
  } else {
    err << " is not an experiment directory (no sweep.json)\n";
  }
  return false;
}

std::optional<EditedSweep> edited_sweep(const std::string& dir, SweepConfig& recorded,
                                        const nlohmann::json& run_options, std::ostream& err) {
  const bool before_waves = recorded.search.searcher == Searcher::kTpe && !recorded_names_waves(dir);
  if (before_waves) recorded.search.waves = 1;
  EditedSweep out;
  struct stat info {};
  if (::stat((dir + "/sweep.yaml").c_str(), &info) != 0) return out;
  if (!S_ISREG(info.st_mode)) {  // a FIFO would block the read for ever
    err << dir << "/sweep.yaml: not a regular file (changed from outside): remove it, or put the sweep file back\n";
    return std::nullopt;
  }
  out.given = load(dir + "/sweep.yaml", err);
  if (!out.given) return std::nullopt;
  // A --seed given to run is part of the recorded sweep (directories from
  // before run.json said so are taken as if it was).
  out.edits = sweep_edits(recorded, *out.given, run_options.value("seed_given", true), before_waves);
  return out;
}

// What status and export say of a trial.json they cannot read (resume says
// it trains again): the trial is missing from what they show.
std::function<void(const std::string&)> left_out(std::ostream& err, const std::string& verb) {
  return [&err, verb](const std::string& damage) {
    err << "hfta-tune " << verb << ": " << damage << " on resume; left out here\n";
  };
}

std::optional<TargetReached> target_reached_on_disk(const std::string& dir, const SweepConfig& sweep) {
  if (!sweep.metric.target) return std::nullopt;
  std::vector<TargetReached> measured;
  for (const auto& [id, t] : TrialStore(dir).load_all()) {
    for (const auto& r : t.rungs) {
      if ((r.status == "completed" || r.status == "stopped") && r.violation == 0) measured.push_back({id, r.metric, r.budget});
    }
  }
  return reaching_target(measured, *sweep.metric.target, sweep.metric.goal);
}

// An unfinished sweep's trials, each at the budget it reached, and the best of
// them; `rungs`, when given, counts their finished rungs.
SweepResult trials_so_far(const std::string& dir, const SweepConfig& sweep, std::size_t* rungs,
                          const std::function<void(const std::string&)>& damaged) {
  SweepResult so_far;
  so_far.finished = false;
  for (const auto& [id, t] : TrialStore(dir).load_all(damaged)) {
    const std::size_t own = own_rungs(t);
    if (rungs) *rungs += own;
    so_far.trials.push_back(t.record);
    // Each at the budget it reached: its history to its last finished rung's
    // end; evaluations past it, made inside a rung not finished yet, apart
    // (a long rung, a random search's only one, shows its progress there).
    std::int64_t reached = 0;
    for (const auto& rung : t.rungs) {
      if (rung.status != "failed") reached = std::max(reached, rung.steps);
    }
    TrialRecord& record = so_far.trials.back();
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& e : record.history) (e.at("step") > reached ? record.in_rung : kept).push_back(e);
    record.history = std::move(kept);
    if (own == 0) {  // inside its first rung: nothing measured yet (of its own configuration)
      so_far.trials.back().status = "running";
      so_far.trials.back().metric = std::numeric_limits<double>::quiet_NaN();
      so_far.trials.back().objectives.clear();
    }
  }
  so_far.best = best_trial(so_far.trials, sweep.metric.goal);
  so_far.pareto = pareto_front(so_far.trials, sweep);
  return so_far;
}

}  // namespace hfta::core::verbs
