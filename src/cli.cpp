#include "hfta/core/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <ostream>
#include <string>
#include <thread>
#include <utility>

#include <CLI/CLI.hpp>

#include "hfta/core/did_you_mean.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/core/trial_store.h"
#include "hfta/core/tuner.h"
#include "hfta/core/version.h"
#include "hfta/fusion/device_list.h"
#include "hfta/fusion/device_memory.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::core {
namespace {

// Flags of every verb, filled by CLI11.
struct Args {
  std::string sweep;
  std::string dir;
  std::string out_dir;
  std::string fusion = "auto";
  std::string device;              // "" (not given): cpu; resume: run.json's
  double checkpoint_every = 300;  // seconds between mid-rung checkpoints
  std::string time_limit;         // --time-limit as given ("" or "0": none)
  int workers = 0;                // arrays trained at the same time; 0: default_workers()
  int threads = 0;                // LibTorch's intra-op threads of each array; 0: array_threads(); resume: run.json's
  std::string prefetch = "auto";  // training batches prepared ahead by a background thread
  std::string keep_checkpoints;   // all or live; resume: "" takes run.json's
  std::int64_t seed = -1;
  bool json = false;
  std::string format;  ///< export: json or csv; unset, FILE's extension chooses (.csv), else json
  std::string output;
};

// Seconds in "90", "90s", "1.5m", "2h" or "1h30m" (units in that order, each
// once), or nullopt. "" is 0: no limit.
std::optional<double> duration_seconds(const std::string& text) {
  if (text.empty()) return 0.0;
  static const std::pair<char, double> units[] = {{'h', 3600}, {'m', 60}, {'s', 1}};
  double total = 0;
  std::size_t next_unit = 0, at = 0;
  while (at < text.size()) {
    // A plain decimal number: digits and at most one point (no sign, exponent or hex).
    const std::size_t start = at;
    while (at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) || text[at] == '.')) ++at;
    const std::string number = text.substr(start, at - start);
    if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
    errno = 0;
    const double n = std::strtod(number.c_str(), nullptr);  // no throw, as stod's out_of_range
    if (errno == ERANGE) return std::nullopt;  // past a double, or a nonzero so small it would read as 0: no limit
    if (at == text.size()) {  // a bare number: seconds, alone
      if (next_unit > 0) return std::nullopt;
      total += n;
      break;
    }
    while (next_unit < std::size(units) && units[next_unit].first != text[at]) ++next_unit;
    if (next_unit == std::size(units)) return std::nullopt;
    total += n * units[next_unit++].second;
    ++at;
  }
  if (!std::isfinite(total) || total < 0) return std::nullopt;
  return total;
}

// The devices --device names (cpu where it is not given); throws
// std::invalid_argument where the list is malformed or names no visible GPU.
std::vector<c10::Device> devices_of(const Args& a) { return fusion::parse_device_list(a.device.empty() ? "cpu" : a.device); }

// Loads the sweep, printing every problem; nullopt means exit 2.
// The trainer's refusals too, so that validate and plan agree with run.
// `text`, when given, receives the file as read.
std::optional<SweepConfig> load(const std::string& path, std::ostream& err, std::string* text = nullptr,
                                std::size_t max_bytes = kMaxSweepBytes) {
  try {
    SweepConfig sweep = load_sweep_file(path, text, max_bytes);
    if (const auto problems = not_trainable_yet(sweep); !problems.empty()) {
      for (const auto& p : problems) err << path << ": " << p << "\n";
      err << path << ": invalid sweep (" << problems.size() << " problem" << (problems.size() == 1 ? "" : "s")
          << ")\n";
      return std::nullopt;
    }
    return sweep;
  } catch (const ConfigError& e) {
    err << e.what() << "\n";
    const size_t n = e.diagnostics().size();
    err << path << ": invalid sweep (" << n << " problem" << (n == 1 ? "" : "s") << ")\n";
    return std::nullopt;
  }
}

// DIR/sweep.json, or nullopt once err says what is wrong with it: run writes
// it whole, so one that does not load was changed from outside (exit code 1,
// as a damaged results.json).
std::optional<SweepConfig> recorded_sweep(const std::string& dir, const char* verb, std::ostream& err) {
  std::ostringstream problems;
  auto sweep = load(dir + "/sweep.json", problems, nullptr, 16 * kMaxSweepBytes);
  if (!sweep) {
    err << problems.str() << "hfta-tune " << verb << ": " << dir
        << "/sweep.json is damaged (it was written whole: changed from outside); resume cannot continue the sweep\n";
  }
  return sweep;
}

int validate(const Args& a, std::ostream& out, std::ostream& err) {
  auto sweep = load(a.sweep, err);
  if (!sweep) return kExitUsage;
  if (a.json) {
    out << to_json(*sweep).dump(2) << "\n";
  } else {
    out << a.sweep << ": valid sweep '" << sweep->name << "'\n" << summarize(*sweep);
  }
  return kExitOk;
}

// Trains a validated sweep in `dir` (new or being resumed), under its lock.
// One worker per core, up to 4: on small CPUs one array's ops do not keep
// every core busy (its small kernels split poorly), arrays side by side do;
// beyond a few, each array's share of memory and cores gets thin.
int default_workers() { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4); }

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

// DIR's lock, or nullopt after saying who holds it (or that DIR cannot be written in).
std::optional<ExperimentLock> lock_or_refuse(const std::string& dir, const char* verb, std::ostream& err, int& code) {
  std::string holder;
  code = kExitUsage;
  try {
    auto lock = ExperimentLock::take(dir, &holder);
    if (!lock) {
      err << "hfta-tune " << verb << ": " << dir << " is in use by another hfta-tune (pid "
          << (holder.empty() ? "unknown" : holder) << ")\n";
    }
    return lock;
  } catch (const StorageError& e) {  // read-only, not ours: nothing was written
    err << "hfta-tune " << verb << ": cannot write in " << dir << ": " << e.what() << "\n";
    return std::nullopt;
  } catch (const std::runtime_error& e) {  // a full disk, an I/O error
    err << "hfta-tune " << verb << ": " << e.what() << "; nothing was written: run this again once there is room\n";
    code = kExitFailure;
    return std::nullopt;
  }
}

// A number of results.json to six significant digits, as run prints them (the file keeps every one).
std::string number(const nlohmann::json& v) {
  std::ostringstream text;
  if (v.is_number()) text << v.get<double>(); else text << v.dump();
  return text.str();
}

// results.json's best.test as run and status print it: a GAN's FID first (its
// loss and accuracy are its discriminator's), a language model's perplexity too.
std::string test_summary(const nlohmann::json& test) {
  std::string text = "loss " + number(test.at("loss")) + ", accuracy " + number(test.at("accuracy"));
  if (test.contains("perplexity")) text += ", perplexity " + number(test.at("perplexity"));
  if (test.contains("fid")) text = "FID " + number(test.at("fid")) + " (the discriminator's " + text + ")";
  return text;
}

// The five best trials, best first, as `run` ends: of those that may be best
// (best_trial's), so the first is results.json's best.
void print_best(const SweepConfig& sweep, const std::vector<TrialRecord>& trials, bool finished, std::ostream& out) {
  std::vector<const TrialRecord*> ranked;
  for (const auto& t : trials) {
    if (may_be_best(t)) ranked.push_back(&t);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto* x, const auto* y) { return ranks_before(*x, *y, sweep.metric.goal); });
  out << "\nbest trials (" << sweep.metric.name << ", " << to_string(sweep.metric.goal) << "):\n";
  // Columns as wide as their widest cell, so that the rows line up.
  const std::size_t shown = std::min<std::size_t>(ranked.size(), 5);
  std::vector<std::array<std::string, 4>> rows;
  std::array<std::size_t, 4> width{};
  for (std::size_t i = 0; i < shown; ++i) {
    std::ostringstream metric, budget;
    metric << ranked[i]->metric;
    budget << ranked[i]->budget;
    rows.push_back({std::to_string(ranked[i]->id), metric.str(), budget.str(), ranked[i]->status});
    for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], rows.back()[c].size());
  }
  auto padded = [](const std::string& cell, std::size_t w) { return cell + std::string(w - cell.size(), ' '); };
  for (std::size_t i = 0; i < shown; ++i) {
    out << "  trial " << padded(rows[i][0], width[0]) << "  " << sweep.metric.name << " " << padded(rows[i][1], width[1])
        << "  budget " << padded(rows[i][2], width[2]) << "  " << padded(rows[i][3], width[3]) << "  {";
    bool first = true;
    for (const auto& [k, v] : ranked[i]->params) {
      out << (first ? "" : ", ") << k << ": " << search::display(v);
      first = false;
    }
    out << "}\n";
  }
  if (ranked.empty()) out << "  none" << (finished ? "" : " yet") << " (failed and diverged trials do not count)\n";
}

// What status and export say of a trial.json they cannot read (resume says
// it trains again): the trial is missing from what they show.
std::function<void(const std::string&)> left_out(std::ostream& err, const std::string& verb) {
  return [&err, verb](const std::string& damage) {
    err << "hfta-tune " << verb << ": " << damage << " on resume; left out here\n";
  };
}

// An unfinished sweep's trials, each at the budget it reached, and the best of
// them; `rungs`, when given, counts their finished rungs.
SweepResult trials_so_far(const std::string& dir, const SweepConfig& sweep, std::size_t* rungs = nullptr,
                          const std::function<void(const std::string&)>& damaged = nullptr) {
  SweepResult so_far;
  so_far.finished = false;
  for (const auto& [id, t] : TrialStore(dir).load_all(damaged)) {
    if (rungs) *rungs += t.rungs.size();
    so_far.trials.push_back(t.record);
    // Each at the budget it reached: its history to its last finished rung's
    // end (evaluations past it were made inside a rung not finished yet).
    std::int64_t reached = 0;
    for (const auto& rung : t.rungs) {
      if (rung.status != "failed") reached = std::max(reached, rung.steps);
    }
    auto& history = so_far.trials.back().history;
    history.erase(std::remove_if(history.begin(), history.end(), [&](const nlohmann::json& e) { return e.at("step") > reached; }),
                  history.end());
    if (t.rungs.empty()) {  // inside its first rung: nothing measured yet
      so_far.trials.back().status = "running";
      so_far.trials.back().metric = std::numeric_limits<double>::quiet_NaN();
    }
  }
  so_far.best = best_trial(so_far.trials, sweep.metric.goal);
  return so_far;
}

// The plan's arrays are each round's as one worker trains them; several cut
// them further, by measured throughput (search/worker_balance.h), each within
// its share of the memory. More workers than CPU cores only take turns on
// them, in smaller arrays.
std::string workers_note(int workers, const std::vector<c10::Device>& devices) {
  if (workers <= 1) return "";
  const int sharing = static_cast<int>(std::ceil(static_cast<double>(workers) / static_cast<double>(devices.size())));
  std::string note = "note: with " + std::to_string(workers) + " workers, a round's arrays may be cut further, so that "
                     "no worker waits while another trains its last one";
  if (sharing > 1) {
    note += "; the memory figure above is one worker's, 1/" + std::to_string(sharing) + " of what it names";
  }
  note += "\n";
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  if (devices.front().is_cpu() && cores > 0 && workers > cores) {
    note += "note: " + std::to_string(workers) + " workers on " + std::to_string(cores) +
            " CPU cores take turns on them, in smaller arrays: fewer workers fuse more\n";
  }
  return note;
}

// LibTorch's threads for this machine: process_threads(), unless
// OMP_NUM_THREADS asks for more than 4 a core (100000 made 28,000 threads
// that never trained a step): then one a core.
int default_threads() {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return process_threads() > 4 * cores ? cores : process_threads();
}

// What each array's thread count means for the results and the speed:
// resumed with the run's count (`recorded`), they equal an uninterrupted
// run's; more threads than cores (OMP_NUM_THREADS=64 on 2) take turns, slowly.
std::string threads_note(int threads, int workers, const std::vector<c10::Device>& devices, bool recorded) {
  if (!devices.front().is_cpu()) return "";
  std::string note;
  const int here = array_threads(default_threads(), workers, devices);
  if (default_threads() != process_threads()) {
    note += "note: OMP_NUM_THREADS asks for " + std::to_string(process_threads()) +
            " threads, more than 4 a core: " + std::to_string(default_threads()) + " here (--threads sets them)\n";
  }
  if (recorded && threads != here) {
    note += "note: " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
            " per array, as the run that began the sweep had (" +
            std::to_string(here) + " here), so that the results equal an uninterrupted run's (--threads " +
            std::to_string(here) + " trains with this machine's, and they then part)\n";
  }
  const auto cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > 0 && threads > 1 && threads * workers > cores) {  // (more workers than cores: workers_note's)
    note += "note: " + std::to_string(workers) + (workers == 1 ? " worker" : " workers") + " of " +
            std::to_string(threads) + " threads each on " + std::to_string(cores) +
            " CPU cores: the threads beyond the cores wait on each other (--threads sets them)\n";
  }
  return note;
}

// Says that the directory moved away while the sweep ran, and where it went.
void moved(const char* verb, const DirectoryMoved& e, std::ostream& err) {
  err << "hfta-tune " << verb << ": " << e.what()
      << (e.now.empty() ? "\n" : "; its finished rungs are kept there: hfta-tune resume " + e.now + "\n");
}

// Whether `dir` moved away from the lock `held` (after saying so): a write
// that failed because it did (no such file) is reported as the move.
bool moved_away(const ExperimentLock& held, const std::string& dir, const char* verb, std::ostream& err) {
  try {
    held.check_still_at(dir);
    return false;
  } catch (const DirectoryMoved& e) {
    moved(verb, e, err);
    return true;
  }
}

// Trains the sweep in `dir`, whose lock the caller holds.
// `a`: the options it trains with (resume's: run.json's where not given now, `given`).
int train(const SweepConfig& sweep, const std::string& dir, bool fuse, const Args& a, const Args& given,
          std::ostream& out, std::ostream& err, const char* verb, const ExperimentLock& held) {
  std::vector<c10::Device> devices;
  try {
    devices = devices_of(a);
  } catch (const std::invalid_argument& e) {
    err << "hfta-tune " << verb << ": --device: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!precision_fits(sweep, dir + "/sweep.json", devices, verb, err)) return kExitUsage;
  const int workers = workers_for(a, devices);
  const int threads = a.threads > 0 ? a.threads : array_threads(default_threads(), workers, devices);
  out << verb << " " << sweep.name << " (" << to_string(sweep.search.method) << ") in " << dir
      << ", fusion " << (fuse && sweep.fusion.enabled == FusionMode::kAuto ? "auto" : "off") << ", " << workers << (workers == 1 ? " worker" : " workers")
      << " on " << fusion::to_string(devices) << "\n";
  const SweepPlan plan = make_plan(sweep, fuse, fusion::to_string(devices), memory_per_worker(devices, workers));
  const bool recorded_threads = verb == std::string("resume") && given.threads == 0;
  out << to_text(plan, sweep) << workers_note(workers, devices)
      << threads_note(threads, workers, devices, recorded_threads) << std::flush;
  TunerOptions options;
  options.fuse = fuse;
  options.checkpoint_seconds = a.checkpoint_every;
  options.keep_checkpoints = a.keep_checkpoints != "live";
  options.workers = workers;
  options.threads = threads;
  options.prefetch = a.prefetch == "auto" ? -1 : std::stoll(a.prefetch);
  options.devices = devices;
  options.log = &out;
  options.dir = dir;
  options.lock = &held;
  // A live line only on a terminal; pipes and files get one line per array.
  // (Not on a terminal that cannot clear a line: TERM=dumb, as Emacs's shell.)
  const char* term = std::getenv("TERM");
  options.live = &out == &std::cout && ::isatty(STDOUT_FILENO) && !(term && std::string(term) == "dumb");
  options.totals.work = plan.trained_budget;
  for (const auto& bracket : plan.brackets) {
    for (const auto& rung : bracket.rungs) options.totals.results += rung.n;
    if (!bracket.rungs.empty()) options.totals.trials += bracket.rungs.front().n;
  }
  SweepResult result;
  try {
    result = run_sweep(sweep, options);
  } catch (const Interrupted&) {
    if (time_limit_reached()) {  // as asked: the trials so far, and how to go on
      std::size_t rungs = 0;
      const SweepResult so_far = trials_so_far(dir, sweep, &rungs);
      const bool seconds = a.time_limit.find_first_of("hms") == std::string::npos;  // a bare number
      out << "\ntime limit" << (a.time_limit.empty() ? "" : " of " + a.time_limit + (seconds ? " s" : "")) << " reached: stopped after a checkpoint, with " << rungs << " of "
          << options.totals.results << " rung results";
      print_best(sweep, so_far.trials, /*finished=*/false, out);
      out << "continue with hfta-tune resume " << dir << "; hfta-tune export " << dir
          << " writes the trials so far\n";
      return kExitOk;
    }
    err << "hfta-tune " << verb << ": stopped by " << interrupt_name()
        << "; finished rungs and the checkpoints of the trials in training are kept: hfta-tune resume " << dir
        << "\n";
    return kExitFailure;
  } catch (const DirectoryMoved& e) {
    moved(verb, e, err);
    return kExitFailure;
  } catch (const std::exception& e) {
    if (moved_away(held, dir, verb, err)) return kExitFailure;  // a write that failed as the directory moved
    // (std::bad_alloc's own message names no memory.)
    err << "hfta-tune " << verb << ": "
        << (dynamic_cast<const std::bad_alloc*>(&e) ? std::string("out of host memory (std::bad_alloc)") : e.what())
        << " (finished rungs are kept: hfta-tune resume " << dir << ")\n";
    return kExitFailure;
  }
  const nlohmann::json results = results_json(sweep, result, dir);
  try {
    held.check_still_at(dir);
    write_atomically(dir + "/results.json", results.dump(2) + "\n");
  } catch (const DirectoryMoved& e) {
    moved(verb, e, err);
    return kExitFailure;
  } catch (const StorageError& e) {  // every rung is on disk: resume writes it
    if (moved_away(held, dir, verb, err)) return kExitFailure;
    err << "hfta-tune " << verb << ": " << e.what() << " (every trial is done and kept: hfta-tune resume " << dir
        << " writes the results)\n";
    return kExitFailure;
  }
  print_best(sweep, result.trials, /*finished=*/true, out);
  if (results.at("best").contains("test")) {
    out << "best trial " << results.at("best").at("id") << " on the test split: "
        << test_summary(results.at("best").at("test")) << "\n";
  }
  out << "results: " << dir << "/results.json\n";
  return kExitOk;
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

int run(const Args& a, std::ostream& out, std::ostream& err) {
  catch_interrupts();  // from the start: a signal before training stops it at the first check
  stop_after(duration_seconds(a.time_limit).value_or(0));  // the limit counts from the start too
  std::string given;  // the sweep file as read, once: it may be a pipe
  auto sweep = load(a.sweep, err, &given);
  if (!sweep) return kExitUsage;
  if (a.seed >= 0) sweep->seed = static_cast<std::uint64_t>(a.seed);
  try {
    if (!precision_fits(*sweep, a.sweep, devices_of(a), "run", err)) return kExitUsage;  // before anything is written
  } catch (const std::invalid_argument& e) {
    err << "hfta-tune run: --device: " << e.what() << "\n";
    return kExitUsage;
  }
  // A dataset not installed: said before anything is written, so that once
  // it is, the same command runs.
  if (const auto missing = trainers::dataset_missing(sweep->task.model); !missing.empty()) {
    err << "hfta-tune run: " << missing << "; nothing was written\n";
    return kExitFailure;
  }
  const std::string dir = a.out_dir.empty() ? "runs/" + sweep->name : a.out_dir;
  auto holds_a_sweep = [&] {
    struct stat info {};
    if (::stat((dir + "/sweep.json").c_str(), &info) != 0) return false;
    if (const auto holder = ExperimentLock::holder(dir)) {  // resume would be refused too: say who trains it
      err << "hfta-tune run: " << dir << " is in use by another hfta-tune (pid "
          << (holder->empty() ? "unknown" : *holder) << "); choose another --out\n";
      return true;
    }
    std::string damaged;
    if (results_or_damage(dir, damaged)) {
      err << "hfta-tune run: " << dir << " already holds a finished sweep (see hfta-tune status " << dir
          << "); choose another --out\n";
    } else {
      err << "hfta-tune run: " << dir << " already holds a sweep; continue it with hfta-tune resume " << dir
          << ", or choose another --out\n";
    }
    return true;
  };
  if (holds_a_sweep()) return kExitUsage;
  // Nor into a directory of other files (a project's, `--out .`): the
  // experiment's would mix with them. What a run killed before its sweep.json
  // leaves (its lock, sweep.yaml, run.json, a sweep.json.tmp) does not count.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (left_before_the_sweep(name)) continue;
    err << "hfta-tune run: " << dir << " holds other files (" << name
        << "); give --out a new or empty directory\n";
    return kExitUsage;
  }
  // Through links to a directory not made yet: the directory they name.
  std::filesystem::path made = dir;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(made, ec)) &&
                     !std::filesystem::exists(made, ec);
       ++hops) {
    const auto to = std::filesystem::read_symlink(made, ec);
    if (ec) break;
    made = to.is_absolute() ? to : made.parent_path() / to;
  }
  // What create_directories makes, deepest first: where it fails part way, or
  // the lock cannot be taken in it, they go again (nothing half-made is left).
  std::vector<std::filesystem::path> new_directories;
  for (auto p = made; !p.empty() && !std::filesystem::exists(std::filesystem::symlink_status(p, ec)); p = p.parent_path()) {
    new_directories.push_back(p);
  }
  auto unmake = [&new_directories] {
    std::error_code ignored;
    for (const auto& p : new_directories) std::filesystem::remove(p, ignored);  // only where empty
  };
  // A umask that takes the owner's permissions away makes directories that
  // cannot be written in or entered: say so, where the error alone does not.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const std::string umask_note =
      mask & S_IRWXU ? " (the umask, " + std::to_string(mask >> 6) + std::to_string((mask >> 3) & 7) +
                           std::to_string(mask & 7) + ", takes the owner's permissions away)"
                     : "";
  std::filesystem::create_directories(made, ec);
  if (ec && out_of_room(ec.value())) {  // a full disk: a failure, not the user's --out
    unmake();
    err << "hfta-tune run: cannot create --out " << dir << ": " << ec.message()
        << "; nothing was written: run this again once there is room\n";
    return kExitFailure;
  }
  if (ec) {  // before anything is written: the --out given is unusable
    std::error_code there;
    const bool file = std::filesystem::exists(made, there) && !std::filesystem::is_directory(made, there);
    unmake();
    err << "hfta-tune run: cannot create --out " << dir << ": "
        << (file ? std::string("it is a file, not a directory") : ec.message() + umask_note) << "\n";
    return kExitUsage;
  }
  // Locked before anything is written: of two runs given one --out, one writes and trains.
  int refused = kExitUsage;
  std::ostringstream why;
  const auto lock = lock_or_refuse(dir, "run", why, refused);
  if (!lock) {
    unmake();
    const std::string said = why.str();
    err << (new_directories.empty() || said.empty() ? said : said.substr(0, said.size() - 1) + umask_note + "\n");
    return refused;
  }
  if (holds_a_sweep()) return kExitUsage;  // the other run got there first and finished
  // The sweep as given; the options resume reuses (a --seed replaces
  // sweep.yaml's seed in sweep.json: resume then accepts the seed the two
  // disagree on); and last, marking a sweep begun, the sweep as run (every
  // default filled in), which resume compares with sweep.yaml. A kill before
  // sweep.json leaves what a new run takes over.
  try {
    write_atomically(dir + "/sweep.yaml", given);
    write_atomically(dir + "/run.json",
                     nlohmann::json({{"fusion", a.fusion == "auto" ? "auto" : "off"},
                                     {"seed_given", a.seed >= 0},
                                     {"keep_checkpoints", a.keep_checkpoints.empty() ? "all" : a.keep_checkpoints},
                                     {"device", a.device.empty() ? "cpu" : a.device},
                                     {"workers", a.workers},
                                     {"threads", a.threads > 0 ? a.threads
                                                                : array_threads(default_threads(),
                                                                                workers_for(a, devices_of(a)), devices_of(a))}})
                             .dump() +
                         "\n");
    write_atomically(dir + "/sweep.json", to_json(*sweep).dump(2) + "\n");
  } catch (const StorageError& e) {
    if (!new_directories.empty() && !umask_note.empty()) {  // made unusable by the umask: it goes, lock and all
      for (const auto& p : new_directories) {  // (ours: readable again, so that remove_all can list them)
        std::filesystem::permissions(p, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
      }
      std::filesystem::remove_all(new_directories.back(), ec);
      err << "hfta-tune run: " << e.what() << umask_note << "; nothing is left of it\n";
      return kExitUsage;
    }
    // (What it wrote, a new run takes over.)
    err << "hfta-tune run: " << e.what() << "; nothing was trained: once it can be written, run the same command again\n";
    return kExitFailure;
  }
  return train(*sweep, dir, a.fusion == "auto", a, a, out, err, "run", *lock);
}

// "a", "a and b", "a, b and c".
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

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

// Whether `dir` holds a sweep, after saying what it is instead.
bool is_experiment(const std::string& dir, const char* verb, std::ostream& err) {
  struct stat info {};
  if (::stat((dir + "/sweep.json").c_str(), &info) == 0) return true;
  err << "hfta-tune " << verb << ": " << (dir.empty() ? "''" : dir);
  std::error_code ec;
  bool started = false;  // by a run killed before its sweep.json, however early
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    started = started || left_before_the_sweep(entry.path().filename().string());
  }
  if (::stat(dir.c_str(), &info) != 0) {
    err << " does not exist\n";
  } else if (started) {
    // What a run stopped while writing its first files leaves (run accepts the directory again).
    err << " holds no sweep.json: the run that made it stopped before its sweep started; start it again with "
        << "hfta-tune run SWEEP.yaml --out " << dir << "\n";
  } else {
    err << " is not an experiment directory (no sweep.json)\n";
  }
  return false;
}

// DIR/sweep.yaml as edited since the run began, with what it changes
// (nothing where there is no sweep.yaml); nullopt once err says why it does not load.
struct EditedSweep {
  std::optional<SweepConfig> given;  ///< sweep.yaml as read (none: there is none)
  SweepEdits edits;
};

std::optional<EditedSweep> edited_sweep(const std::string& dir, const SweepConfig& recorded,
                                        const nlohmann::json& run_options, bool before_waves, std::ostream& err) {
  EditedSweep out;
  struct stat info {};
  if (::stat((dir + "/sweep.yaml").c_str(), &info) != 0) return out;
  out.given = load(dir + "/sweep.yaml", err);
  if (!out.given) return std::nullopt;
  // A --seed given to run is part of the recorded sweep (directories from
  // before run.json said so are taken as if it was).
  out.edits = sweep_edits(recorded, *out.given, run_options.value("seed_given", true), before_waves);
  return out;
}

int resume(const Args& a, std::ostream& out, std::ostream& err) {
  catch_interrupts();
  stop_after(duration_seconds(a.time_limit).value_or(0));
  if (!is_experiment(a.dir, "resume", err)) return kExitUsage;
  std::string damaged;
  if (results_or_damage(a.dir, damaged)) {
    out << a.dir << " is finished; see hfta-tune status " << a.dir << "\n";
    return kExitOk;
  }
  // Every rung's result is in trials/: the replay writes results.json again.
  struct stat results {};
  if (!damaged.empty() && ::lstat((a.dir + "/results.json").c_str(), &results) == 0 && !S_ISREG(results.st_mode)) {
    err << "hfta-tune resume: " << damaged << "; remove it, and resume writes it again from the trials' files\n";
    return kExitFailure;
  }
  if (!damaged.empty()) out << damaged << "; writing it again from the trials' files\n";
  auto recorded = recorded_sweep(a.dir, "resume", err);
  if (!recorded) return kExitFailure;
  // A sweep recorded before search.waves existed started every trial at once:
  // it goes on so (and its sweep.yaml, which cannot name waves, is read so).
  const bool before_waves = recorded->search.searcher == Searcher::kTpe && !recorded_names_waves(a.dir);
  if (before_waves) recorded->search.waves = 1;
  auto options = run_options_of(a.dir);
  if (!options) {
    err << "hfta-tune resume: " << a.dir << "/run.json is damaged (not a JSON object of run options as run writes them)\n";
    return kExitUsage;
  }
  nlohmann::json& run_options = *options;
  // The sweep file in the directory may have been edited since: refuse changes to the trials.
  const auto edited = edited_sweep(a.dir, *recorded, run_options, before_waves, err);
  if (!edited) return kExitUsage;
  if (!edited->edits.changed.empty()) {
    err << "hfta-tune resume: " << a.dir << "/sweep.yaml and the sweep the run started (sweep.json) differ in "
        << "what would change its trials: " << joined(edited->edits.changed) << "\n";
    return kExitUsage;
  }
  if (const auto mixed = trials_of_another_sweep(a.dir, *recorded); !mixed.empty()) {
    err << "hfta-tune resume: " << mixed << "\n";
    return kExitUsage;
  }
  const std::string repacked = joined(edited->edits.packing);  // the fusion keys edited, if any
  const bool renamed = edited->edits.renamed;
  if (!repacked.empty()) recorded->fusion = edited->given->fusion;
  if (renamed) recorded->name = edited->given->name;
  const bool fuse = run_options.value("fusion", "auto") == "auto";
  // --device, --workers and --keep-checkpoints as the run was given them,
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
  if ((!repacked.empty() || renamed || given_now) &&
      !precision_fits(*recorded, a.dir + "/sweep.json", devices_of(as_run), "resume", err)) {
    return kExitUsage;
  }
  if (!repacked.empty() || renamed) {
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

// What status says of a stopped sweep: to resume it, or, where resume would
// refuse the directory's sweep.yaml as edited, what to mend first.
std::string how_to_continue(const std::string& dir, SweepConfig recorded) {
  const std::string resume = "continue with hfta-tune resume " + dir;
  const auto run_options = run_options_of(dir);
  if (!run_options) return dir + "/run.json is damaged (not a JSON object of run options as run writes them), and resume reads it";
  const bool before_waves = recorded.search.searcher == Searcher::kTpe && !recorded_names_waves(dir);
  if (before_waves) recorded.search.waves = 1;
  std::ostringstream problems;
  const auto edited = edited_sweep(dir, recorded, *run_options, before_waves, problems);
  if (!edited) {
    return dir + "/sweep.yaml does not load (hfta-tune validate " + dir +
           "/sweep.yaml says why), and resume reads it: mend it, then " + resume;
  }
  if (!edited->edits.changed.empty()) {
    return dir + "/sweep.yaml was edited in what would change its trials (" + joined(edited->edits.changed) +
           "), which resume refuses: restore them, then " + resume;
  }
  if (const auto mixed = trials_of_another_sweep(dir, recorded); !mixed.empty()) return mixed + ", which resume refuses";
  const std::string device = run_options->value("device", "cpu");
  try {
    fusion::parse_device_list(device);
  } catch (const std::invalid_argument& e) {
    return "the run's --device " + device + " is not here (" + e.what() + "): " + resume + " --device cpu";
  }
  return resume;
}

int status(const Args& a, std::ostream& out, std::ostream& err) {
  if (!is_experiment(a.dir, "status", err)) return kExitUsage;
  const auto holder = ExperimentLock::holder(a.dir);
  const bool running = holder.has_value();
  std::string damaged;
  const auto results = results_or_damage(a.dir, damaged);
  if (!damaged.empty() && !running) {  // (a resume running writes it again: its progress is shown)
    err << "hfta-tune status: " << damaged << "; hfta-tune resume " << a.dir << " writes it again\n";
    return kExitFailure;
  }
  if (!results) {
    // Not running: stopped by a signal, a kill or a time limit; which, the directory does not say.
    const auto trials = TrialStore(a.dir).load_all(left_out(err, "status"));
    std::size_t rungs = 0, partial = 0;
    for (const auto& [id, t] : trials) rungs += t.rungs.size(), partial += t.partial.has_value();
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
    if (sweep) {
      std::size_t planned = 0;
      for (const auto& bracket : make_plan(*sweep, true, "cpu", 1e18).brackets) {
        for (const auto& rung : bracket.rungs) planned += static_cast<std::size_t>(rung.n);
      }
      out << " of " << planned << " planned";
      // Ranked as run ranks them at the end: each trial at the budget it reached.
      const SweepResult so_far = trials_so_far(a.dir, *sweep);
      if (so_far.best >= 0) {
        const TrialRecord& best = so_far.trials[static_cast<std::size_t>(so_far.best)];
        out << ", best " << sweep->metric.name << " so far " << best.metric << " (trial " << best.id << " at "
            << best.budget << " " << to_string(sweep->budget.unit) << ")";
      }
    }
    if (partial > 0) out << ", " << partial << " checkpointed mid-rung";
    if (!running) out << "; " << how_to_continue(a.dir, *sweep);
    out << "\n";
    return kExitOk;
  }
  std::map<std::string, int> by_status;
  for (const auto& t : results->at("trials")) by_status[t.at("status").get<std::string>()]++;
  out << a.dir << ": finished, " << results->at("trials").size() << " trials (";
  bool first = true;
  for (const auto& [st, n] : by_status) {
    out << (first ? "" : ", ") << n << " " << st;
    first = false;
  }
  out << ")\n";
  if (!results->at("best").is_null()) {
    const auto& best = results->at("best");
    out << "best: trial " << best.at("id") << ", " << results->at("metric").at("name").get<std::string>() << " "
        << number(best.at("metric"));
    if (best.contains("test")) out << "; on the test split: " << test_summary(best.at("test"));
    out << "\n";
  }
  return kExitOk;
}

// The experiment's own file (or folder) that `path` would replace, if any:
// exporting over results.json would leave a CSV where status, export and
// resume read JSON. Other names in the directory are the user's.
// The file an export to `path` writes: through a link to the file it names
// (not over the link), which may not exist yet.
std::string export_target(const std::string& path) {
  std::error_code ec;
  std::filesystem::path named = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(named, ec))) {
    const auto to = std::filesystem::read_symlink(named, ec);
    if (!ec) named = to.is_absolute() ? to : named.parent_path() / to;
  }
  const auto target = std::filesystem::weakly_canonical(named, ec);
  return ec ? path : target.string();
}

std::optional<std::string> experiment_file(const std::string& dir, const std::string& path) {
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return std::nullopt;
  const std::filesystem::path target = export_target(path);
  const auto inside = target.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..") return std::nullopt;
  const std::string first = inside.begin()->string();
  static const std::set<std::string> owned = {"results.json", "sweep.json", "sweep.yaml", "state.json", "run.json",
                                              "lock", "strategies.json", "throughput.json", "trials"};
  if (owned.count(first) || first.size() > 4 && first.compare(first.size() - 4, 4, ".tmp") == 0) return inside.string();
  return std::nullopt;
}

// --format, or without it what --output's name says (`best.csv`: CSV), else JSON.
std::string export_format(const Args& a) {
  if (!a.format.empty()) return a.format;
  std::string extension = std::filesystem::path(a.output).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension == ".csv" ? "csv" : "json";
}

int export_results(const Args& a, std::ostream& out, std::ostream& err) {
  if (!is_experiment(a.dir, "export", err)) return kExitUsage;
  if (!a.output.empty() && a.output != "-") {
    if (auto own = experiment_file(a.dir, a.output)) {
      err << "hfta-tune export: --output " << a.output << " is " << a.dir << "'s own " << *own
          << ", which hfta-tune reads; name another file\n";
      return kExitUsage;
    }
    const auto folder = std::filesystem::path(a.output).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
      err << "hfta-tune export: --output " << a.output << ": the folder " << folder.string() << " does not exist\n";
      return kExitUsage;
    }
  }
  std::string damaged;
  auto results = results_or_damage(a.dir, damaged);
  if (!damaged.empty()) {
    err << "hfta-tune export: " << damaged << "; hfta-tune resume " << a.dir << " writes it again\n";
    return kExitFailure;
  }
  if (!results) {  // running or interrupted: the trials so far
    const auto sweep = recorded_sweep(a.dir, "export", err);
    if (!sweep) return kExitFailure;
    const SweepResult so_far = trials_so_far(a.dir, *sweep, nullptr, left_out(err, "export"));
    results = results_json(*sweep, so_far, a.dir);
    err << "hfta-tune export: " << a.dir << " has not finished; its " << so_far.trials.size()
        << " trial(s) so far, at the budgets they reached (\"finished\": false)\n";
  }
  const std::string text = export_format(a) == "csv" ? results_csv(*results) : results->dump(2) + "\n";
  struct stat info {};
  if (a.output.empty() || a.output == "-") {
    out << text;
  } else if (::stat(a.output.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    err << "hfta-tune export: --output " << a.output << " is a directory; name a file in it\n";
    return kExitUsage;
  } else if (::stat(a.output.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    // A device or a pipe (/dev/stdout, a FIFO): written to, never replaced.
    std::ofstream file(a.output, std::ios::binary);
    if (!(file << text) || !file.flush()) {
      err << "hfta-tune export: cannot write " << a.output << ": " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
  } else {
    try {
      write_atomically(export_target(a.output), text);  // atomically
    } catch (const StorageError& e) {
      err << "hfta-tune export: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}

int plan(const Args& a, std::ostream& out, std::ostream& err) {
  auto sweep = load(a.sweep, err);
  if (!sweep) return kExitUsage;
  if (a.seed >= 0) sweep->seed = static_cast<std::uint64_t>(a.seed);
  std::vector<c10::Device> devices;
  try {
    devices = devices_of(a);
  } catch (const std::invalid_argument& e) {
    err << "hfta-tune plan: --device: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!precision_fits(*sweep, a.sweep, devices, "plan", err)) return kExitUsage;
  const SweepPlan p = make_plan(*sweep, a.fusion == "auto", fusion::to_string(devices),
                                memory_per_worker(devices, workers_for(a, devices)));
  if (a.json) {
    out << to_json(p, *sweep).dump(2) << "\n";
  } else {
    out << to_text(p, *sweep) << workers_note(workers_for(a, devices), devices);
  }
  return kExitOk;
}

// A parse error as the verbs' own messages read: " run: unknown option
// '--wrokers' (did you mean '--workers'?) (hfta-tune run --help)", where
// CLI11 said "The following arguments were not expected: 1 --wrokers".
std::string parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, const char* const* argv) {
  const auto verbs = app.get_subcommands();
  const CLI::App* verb = verbs.empty() ? nullptr : verbs.front();
  const std::string name = verb ? " " + verb->get_name() : "";
  std::string what = e.what();
  if (verb && dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> options;
    for (const CLI::Option* o : verb->get_options()) {
      for (const auto& l : o->get_lnames()) options.push_back("--" + l);
    }
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      const std::string flag = arg.substr(0, arg.find('='));
      if (flag.rfind("--", 0) == 0 && flag.size() > 2 &&
          std::find(options.begin(), options.end(), flag) == options.end()) {
        what = "unknown option '" + flag + "'" + did_you_mean(flag, options);
        break;
      }
    }
  }
  // `validate -x.yaml`: CLI11 takes the path for an unknown option and says only that none was given.
  if (verb && dynamic_cast<const CLI::RequiredError*>(&e)) {
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      if (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && !verb->get_option_no_throw(arg.substr(0, 2))) {
        what += " ('" + arg + "' reads as an option: a path that starts with '-' is written ./" + arg + ")";
        break;
      }
    }
  }
  return name + ": " + what + " (hfta-tune" + name + " --help)";
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  process_threads();  // LibTorch's count as the process began, read before a tuner divides it
  CLI::App app{"hfta-tune: hyperparameter tuning with horizontally fused training", "hfta-tune"};
  app.set_version_flag("--version", std::string("hfta-tune ") + kVersion);
  app.require_subcommand(1);
  Args a;

  auto* validate_cmd = app.add_subcommand("validate", "Check a sweep file and print a summary");
  validate_cmd->add_option("sweep", a.sweep, "The sweep YAML file")->required();
  validate_cmd->add_flag("--json", a.json, "Print the sweep with every default filled in, as JSON");

  // Checks that name what they expect (CLI11's own print a double's whole range).
  const auto seconds = [](const std::string& v) -> std::string {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == 0 && std::isfinite(d) && d >= 0 ? "" : "expected seconds >= 0, got '" + v + "'";
  };
  const auto count = [](const std::string& v) -> std::string {
    const bool digits = !v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos;
    return digits && std::stoi(v) >= 1 ? "" : "expected a whole number from 1 to 9999, got '" + v + "'";
  };
  const auto batches = [](const std::string& v) -> std::string {
    const bool digits = !v.empty() && v.size() <= 2 && v.find_first_not_of("0123456789") == std::string::npos;
    return v == "auto" || (digits && std::stoi(v) <= 64) ? "" : "expected auto or a whole number from 0 to 64, got '" + v + "'";
  };
  const auto seed = [](const std::string& v) -> std::string {
    // The YAML seed's range: a decimal integer in [0, 2^63 - 1].
    const bool digits = !v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string::npos;
    return digits && (v.size() < 19 || v <= "9223372036854775807") ? ""
                                                                    : "expected an integer in [0, 2^63 - 1], got '" + v + "'";
  };

  // run and plan take the same sweep, fusion, device and seed.
  auto add_sweep_options = [&a, seed](CLI::App* cmd) {
    cmd->add_option("sweep", a.sweep, "The sweep YAML file")->required();
    cmd->add_option("--fusion", a.fusion, "Fuse same-shape trials into arrays, or train each alone")
        ->check(CLI::IsMember({"auto", "off"}));
    cmd->add_option("--device", a.device, "cpu, cuda (every GPU) or cuda:0,cuda:1,...");
    cmd->add_option("--seed", a.seed, "Override the sweep's seed")->check(seed);
  };

  auto* run_cmd = app.add_subcommand("run", "Run a sweep to the end");
  add_sweep_options(run_cmd);
  // A path, not a flag that lost its own value ("--out --workers"), nor empty.
  const auto path = [](const char* what, bool dash_is_stdout) {
    return [what, dash_is_stdout](const std::string& v) -> std::string {
      if (v.empty()) return std::string("expected ") + what + " path, got an empty one";
      if (v[0] == '-' && !(dash_is_stdout && v == "-")) return std::string("expected ") + what + " path, got '" + v + "' (a path that starts with '-': write ./" + v + ")";
      return "";
    };
  };
  run_cmd->add_option("--out", a.out_dir, "Experiment directory (default: runs/<name>)")->check(path("a directory", false));
  const std::string checkpoint_help =
      "Seconds between mid-rung checkpoints, taken every 50 steps and at evaluation points (0: at every one)";
  run_cmd->add_option("--checkpoint-every", a.checkpoint_every, checkpoint_help)->check(seconds);
  const std::string workers_help =
      "Arrays trained at the same time, each in a thread with a share of the cores and memory; same results at "
      "the same --threads (default: one per core, at most 4)";
  run_cmd->add_option("--workers", a.workers, workers_help)->check(count);
  const std::string threads_help =
      "LibTorch's intra-op threads of each array; results depend on them (default: OMP_NUM_THREADS, else the cores, "
      "shared out among the workers; resume: the run's)";
  run_cmd->add_option("--threads", a.threads, threads_help)->check(count);
  const std::string prefetch_help =
      "Training batches a background thread prepares ahead (0: each cut when needed); same results (default auto: "
      "none on the CPU or where the dataset fits on the GPU, else 2 from pinned host memory)";
  run_cmd->add_option("--prefetch", a.prefetch, prefetch_help)->check(batches);
  const std::string keep_help =
      "all: every trial keeps its last two rung checkpoints (weights and optimizer state); live: a trial's go once "
      "it will train no more, its weights.pt and state_dict.pt stay (default all; resume: as the run)";
  run_cmd->add_option("--keep-checkpoints", a.keep_checkpoints, keep_help)->check(CLI::IsMember({"all", "live"}));

  const auto duration = [](const std::string& v) -> std::string {
    // Given, it must say how long: "" (the unset option's value) is no duration.
    return !v.empty() && duration_seconds(v) ? "" : "expected a duration such as 90s, 30m, 2h or 1h30m, got '" + v + "'";
  };
  const std::string time_limit_help =
      "Stop after this long (90s, 30m, 2h, 1h30m, or seconds; from the command's start; 0: no limit) as Ctrl-C "
      "would, after a checkpoint, print the best trials so far and exit 0; resume continues";
  run_cmd->add_option("--time-limit", a.time_limit, time_limit_help)->check(duration);

  auto* resume_cmd = app.add_subcommand("resume", "Continue an interrupted sweep");
  resume_cmd->add_option("dir", a.dir, "The experiment directory")->required();
  resume_cmd->add_option("--checkpoint-every", a.checkpoint_every, checkpoint_help)->check(seconds);
  resume_cmd->add_option("--workers", a.workers, workers_help)->check(count);
  resume_cmd->add_option("--threads", a.threads, threads_help)->check(count);
  resume_cmd->add_option("--prefetch", a.prefetch, prefetch_help)->check(batches);
  resume_cmd->add_option("--keep-checkpoints", a.keep_checkpoints, keep_help)->check(CLI::IsMember({"all", "live"}));
  resume_cmd->add_option("--time-limit", a.time_limit, time_limit_help)->check(duration);
  resume_cmd->add_option("--device", a.device, "cpu, cuda (every GPU) or cuda:0,cuda:1,... (default: the run's)");

  auto* plan_cmd = app.add_subcommand("plan", "Print the brackets, rungs and arrays a sweep will run");
  add_sweep_options(plan_cmd);
  plan_cmd->add_flag("--json", a.json, "Print the plan as JSON");
  plan_cmd->add_option("--workers", a.workers, "The workers run will use: arrays are sized to their share of memory")
      ->check(count);

  auto* status_cmd = app.add_subcommand("status", "Show the progress of a sweep");
  status_cmd->add_option("dir", a.dir, "The experiment directory")->required();

  auto* export_cmd = app.add_subcommand("export", "Write every trial and the best one");
  export_cmd->add_option("dir", a.dir, "The experiment directory")->required();
  export_cmd->add_option("--format", a.format, "json or csv (default: csv for an --output named *.csv, else json)")->check(CLI::IsMember({"json", "csv"}));
  export_cmd->add_option("--output", a.output, "File to write (default: standard output)")->check(path("a file", true));

  // `hfta-tune help [VERB]`, as git and cargo take it: VERB --help.
  if (argc > 1 && std::string(argv[1]) == "help") {
    std::vector<const char*> asked = {argv[0]};
    if (argc > 2) asked.push_back(argv[2]);
    asked.push_back("--help");
    return run_cli(static_cast<int>(asked.size()), asked.data(), out, err);
  }
  // A first word that is no verb: CLI11 would say only that one is required.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> verbs;
    for (const auto* cmd : app.get_subcommands({})) verbs.push_back(cmd->get_name());
    if (std::find(verbs.begin(), verbs.end(), argv[1]) == verbs.end()) {
      err << "hfta-tune: unknown verb '" << argv[1] << "'" << did_you_mean(argv[1], verbs) << "; the verbs are "
          << join_alternatives(verbs) << " (hfta-tune --help)\n";
      return kExitUsage;
    }
  }
  // What these print is their product (run's and resume's is on disk): output
  // that could not be written (`export DIR > file` on a full disk) fails them,
  // as it fails --help and --version.
  const auto printed = [&out, &err](const std::string& verb, int code) -> int {
    if (out) errno = 0;  // (failed before, errno is most likely the write's)
    out.flush();
    if (code != kExitOk || out) return code;
    err << "hfta-tune" << (verb.empty() ? "" : " " + verb) << ": cannot write standard output"
        << (errno ? std::string(": ") + std::strerror(errno) : "") << "\n";
    return kExitFailure;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version are successes; every other parse error is bad usage.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e, out, err);
      return printed("", kExitOk);
    }
    err << "hfta-tune" << parse_error(app, e, argc, argv) << "\n";
    return kExitUsage;
  }

  // "runs/x/" names runs/x: messages then say runs/x/results.json, not runs/x//results.json.
  for (std::string* path : {&a.dir, &a.out_dir}) {
    while (path->size() > 1 && path->back() == '/') path->pop_back();
  }
  if (*run_cmd) return run(a, out, err);
  if (*resume_cmd) return resume(a, out, err);
  if (*validate_cmd) return printed("validate", validate(a, out, err));
  if (*plan_cmd) return printed("plan", plan(a, out, err));
  if (*status_cmd) return printed("status", status(a, out, err));
  if (*export_cmd) return printed("export", export_results(a, out, err));
  return kExitUsage;
}

}  // namespace hfta::core
