// hfta-tune run: a new experiment directory, and the training run and resume share.
#include "verbs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <sstream>
#include <thread>

#include "hfta/core/duration.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/warm_start.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/core/trial_settings.h"
#include "hfta/core/trial_store.h"
#include "hfta/core/tuner.h"
#include "hfta/fusion/device_list.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::core::verbs {
namespace {

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
// (Removed by `rm -rf` while it ran, the lock can go before the directory
// does: by the time this is read, there may be nothing left to resume.)
void moved(const char* verb, const DirectoryMoved& e, std::ostream& err) {
  struct stat info {};
  const bool gone = !e.now.empty() && ::stat((e.now + "/sweep.json").c_str(), &info) != 0;
  err << "hfta-tune " << verb << ": " << e.what()
      << (e.now.empty() ? "\n"
          : gone        ? "; " + e.now + " has gone since, with its finished rungs\n"
                        : "; its finished rungs are kept there: hfta-tune resume " + shell_word(e.now) + "\n");
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

}  // namespace

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
  const bool modelled = sweep.search.searcher != Searcher::kRandom && sweep.search.searcher != Searcher::kGrid;
  out << verb << " " << sweep.name << " (" << to_string(sweep.search.method)
      << (modelled ? " with " + to_string(sweep.search.searcher) : std::string()) << ") in " << dir
      << ", fusion " << (fuse && sweep.fusion.enabled == FusionMode::kAuto ? "auto" : "off") << ", " << workers << (workers == 1 ? " worker" : " workers")
      << " on " << fusion::to_string(devices) << "\n";
  if (sweep.task.dataset == "csv") {
    const TableOptions& t = sweep.task.table;
    out << "table " << t.train << (t.test.empty() ? "" : " and " + t.test) << " as kept in " << dir
        << "/data: " << table_counts(t) << "\n";
  }
  const SweepPlan plan = make_plan(sweep, fuse, fusion::to_string(devices), memory_per_worker(devices, workers),
                                   workers_sharing(devices, workers));
  const bool recorded_threads = verb == std::string("resume") && given.threads == 0;
  out << to_text(plan, sweep) << workers_note(workers, devices)
      << threads_note(threads, workers, devices, recorded_threads) << std::flush;
  TunerOptions options;
  options.fuse = fuse;
  options.checkpoint_seconds = a.checkpoint_every < 0 ? kDefaultCheckpointSeconds : a.checkpoint_every;
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
  if (sweep.search.method == SearchMethod::kPbt) options.totals.trials = pbt_planned_trials(sweep);  // and its clones
  SweepResult result;
  try {
    result = run_sweep(sweep, options);
  } catch (const Interrupted&) {
    if (time_limit_reached()) {  // as asked: the trials so far, and how to go on
      std::size_t rungs = 0;
      const SweepResult so_far = trials_so_far(dir, sweep, &rungs);
      // (A limit shorter than start-up passes before any trial has a checkpoint.)
      const char* stopped = so_far.trials.empty() ? "before any trial began training" : "after a checkpoint";
      out << "\ntime limit" << (a.time_limit.empty() ? "" : " of " + duration_label(a.time_limit)) << " reached: stopped "
          << stopped << ", with " << rungs << " of " << options.totals.results << " rung results";
      print_best(sweep, so_far.trials, /*finished=*/false, out);
      const nlohmann::json results = results_json(sweep, so_far, dir);
      out << pareto_summary(results) << importance_summary(results);
      out << "continue with hfta-tune resume " << shell_word(dir) << "; hfta-tune export " << shell_word(dir)
          << " writes the trials so far\n";
      return kExitOk;
    }
    err << "hfta-tune " << verb << ": stopped by " << interrupt_name()
        << "; finished rungs and the checkpoints of the trials in training are kept: hfta-tune resume " << shell_word(dir)
        << "\n";
    return kExitFailure;
  } catch (const DirectoryMoved& e) {
    moved(verb, e, err);
    return kExitFailure;
  } catch (const std::exception& e) {
    if (moved_away(held, dir, verb, err)) return kExitFailure;  // a write that failed as the directory moved
    // (std::bad_alloc's own message names no memory.)
    // What is kept: finished rungs, or (a failure before any, such as data
    // that does not load) nothing yet, where "finished rungs are kept" misleads.
    std::size_t rungs = 0;
    try {
      trials_so_far(dir, sweep, &rungs);
    } catch (const std::exception&) {
      rungs = 1;  // unknown: say what resume keeps
    }
    err << "hfta-tune " << verb << ": "
        << (dynamic_cast<const std::bad_alloc*>(&e) ? std::string("out of host memory (an allocation was refused)") : e.what())
        << (rungs == 0 ? " (no rung had finished; once this is mended, hfta-tune resume " + shell_word(dir) +
                             " starts the sweep)\n"
                       : " (finished rungs are kept: hfta-tune resume " + shell_word(dir) + ")\n");
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
    err << "hfta-tune " << verb << ": " << e.what() << " (every trial is done and kept: hfta-tune resume " << shell_word(dir)
        << " writes the results)\n";
    return kExitFailure;
  }
  print_best(sweep, result.trials, /*finished=*/true, out);
  out << pareto_summary(results);
  out << importance_summary(results);
  out << target_summary(results);
  if (results.at("best").contains("test")) {
    out << "best trial " << results.at("best").at("id") << " on the test split: "
        << test_summary(results.at("best").at("test")) << "\n";
  }
  out << "results: " << dir << "/results.json\n";
  // A sweep whose every trial failed ran nothing a script can use: exit 1, as
  // Ray Tune raises TuneError, so that it is not taken for a success.
  const bool all_failed = !result.trials.empty() && std::all_of(result.trials.begin(), result.trials.end(),
                                                                 [](const TrialRecord& t) { return t.status == "failed"; });
  if (all_failed) {
    const TrialRecord& first = result.trials.front();
    err << "hfta-tune " << verb << ": every trial failed (trial " << first.id << ": " << first.error
        << "); results.json records each one's error\n";
    return kExitFailure;
  }
  return kExitOk;
}

int run(const Args& a, std::ostream& out, std::ostream& err) {
  catch_interrupts();  // from the start: a signal before training stops it at the first check
  stop_after(duration_seconds(a.time_limit).value_or(0));  // the limit counts from the start too
  std::string given;  // the sweep file as read, once: it may be a pipe
  TableBytes tables;  // and a table of the user's own, as read and checked
  auto sweep = load_given(a.sweep, err, &given, &tables);
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
  std::string missing;
  try {
    if (sweep->task.dataset != "csv") missing = trainers::dataset_missing(sweep->task.model, model_options(*sweep, {}));
  } catch (const std::exception& e) {  // there, but unreadable
    missing = e.what();
  }
  if (!missing.empty()) {
    err << "hfta-tune run: " << missing << "; nothing was written\n";
    return kExitFailure;
  }
  const std::string dir = a.out_dir.empty() ? "runs/" + sweep->name : a.out_dir;
  if (const std::string too_long = too_long_for_inside(dir); !too_long.empty()) {
    err << "hfta-tune run: --out: " << too_long << "; give a shorter one (a relative path counts as written)\n";
    return kExitUsage;
  }
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
      err << "hfta-tune run: " << dir << " already holds a finished sweep (see hfta-tune status " << shell_word(dir)
          << "); choose another --out\n";
    } else {
      // Resume continues the sweep the directory records: say so where this
      // file is another (its trials would differ), not only "continue it".
      // (The sweep here carries this run's --seed already; a TPE sweep from
      // before search.waves is read with one wave, as resume reads it.)
      std::ostringstream quiet;
      auto recorded = recorded_sweep(dir, "run", quiet);
      const bool before_waves = recorded && recorded->search.searcher == Searcher::kTpe && !recorded_names_waves(dir);
      if (before_waves) recorded->search.waves = 1;
      const auto edits = recorded ? sweep_edits(*recorded, *sweep, false, before_waves) : SweepEdits{};
      if (!recorded) {  // a damaged sweep.json: status says what, and resume refuses it
        err << "hfta-tune run: " << dir << " already holds a sweep (see hfta-tune status " << shell_word(dir)
            << "); choose another --out\n";
      } else if (!edits.changed.empty()) {
        err << "hfta-tune run: " << dir << " already holds another sweep, '" << recorded->name
            << "' (this file differs in " << joined(edits.changed_values) << "); hfta-tune resume " << shell_word(dir)
            << " continues that one; give this one another --out\n";
      } else {
        err << "hfta-tune run: " << dir << " already holds this sweep, unfinished; continue it with hfta-tune resume "
            << shell_word(dir) << ", or choose another --out\n";
      }
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
    if (left_before_the_sweep(name) || (name == "data" && holds_only_kept_data(dir))) continue;
    err << "hfta-tune run: " << dir << " holds other files (" << name
        << "); give --out a new or empty directory\n";
    return kExitUsage;
  }
  // Nor inside another experiment (trials/99 of one): resume, status and
  // export of the outer one would walk into the inner one's files.
  // (A parent that cannot be read is taken for no experiment: `up` is set
  // for a file not found as well.)
  std::error_code up;
  const auto absolute = std::filesystem::absolute(dir, up).lexically_normal();
  for (auto p = absolute.parent_path(); !p.empty(); p = p.parent_path()) {
    if (std::filesystem::is_regular_file(p / "sweep.json", up) && std::filesystem::exists(p / "lock", up)) {
      err << "hfta-tune run: " << dir << " is inside the experiment " << p.string()
          << "; give --out a directory outside it\n";
      return kExitUsage;
    }
    if (p == p.parent_path()) break;
  }
  // A quoted ~ reaches here as it is, and names a directory ./~ (said, not refused).
  if (dir == "~" || dir.rfind("~/", 0) == 0) {
    out << "note: --out " << dir << " begins with a ~ that no shell expanded (it was quoted): the directory is ./"
        << dir << ", not one in your home directory\n";
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
                                     {"checkpoint_every", a.checkpoint_every < 0 ? kDefaultCheckpointSeconds : a.checkpoint_every},
                                     // (resume then needs the corpus kept in data/: resume_corpus_from)
                                     {"corpus_kept", trains_on_corpus(*sweep)},
                                     {"threads", a.threads > 0 ? a.threads
                                                                : array_threads(default_threads(),
                                                                                workers_for(a, devices_of(a)), devices_of(a))}})
                             .dump() +
                         "\n");
    // A table of the user's own is kept as checked: resume trains on the
    // same rows, whatever becomes of the files the sweep names.
    if (sweep->task.dataset == "csv") keep_table(dir, tables, *sweep);
    tables = {};  // (not held through the training)
    // So is a language model's corpus, whatever $HFTA_TEXT_CORPUS says later.
    keep_corpus(dir, *sweep);
    // So are the earlier sweeps' results the searcher starts from.
    if (!sweep->search.warm_start.empty()) keep_warm_start(dir, *sweep);
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
  if (const std::string gone = read_tables_from(*sweep, dir); !gone.empty()) {  // (just written)
    err << "hfta-tune run: " << gone << "\n";
    return kExitFailure;
  }
  return train(*sweep, dir, a.fusion == "auto", a, a, out, err, "run", *lock);
}

}  // namespace hfta::core::verbs
