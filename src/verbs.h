// The CLI's verbs, one file each (cli.cpp reads the command line and calls
// one), and what they share: their flags, reading a sweep file or an
// experiment directory while saying what is wrong with it, the options
// training takes, and what run and status print of the results.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "hfta/core/cli.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_config.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/sweep_corpus.h"
#include "hfta/core/sweep_tables.h"
#include "hfta/core/tuner.h"

namespace hfta::core::verbs {

// Flags of every verb, filled by CLI11.
struct Args {
  std::string sweep;
  std::string dir;
  std::string out_dir;
  std::string fusion = "auto";
  std::string device;              // "" (not given): cpu; resume: run.json's
  double checkpoint_every = -1;   // seconds between mid-rung checkpoints; < 0 (not given): 300; resume: run.json's
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

// The verbs: each returns the process's exit code (cli.h).
int validate(const Args& a, std::ostream& out, std::ostream& err);
int plan(const Args& a, std::ostream& out, std::ostream& err);
int run(const Args& a, std::ostream& out, std::ostream& err);
int resume(const Args& a, std::ostream& out, std::ostream& err);
int status(const Args& a, std::ostream& out, std::ostream& err);
int export_results(const Args& a, std::ostream& out, std::ostream& err);

// --- Read from flags (verb_inputs.cpp) ---
std::vector<c10::Device> devices_of(const Args& a);
int workers_for(const Args& a, const std::vector<c10::Device>& devices);
double memory_per_worker(const std::vector<c10::Device>& devices, int workers);
/// How many workers share one device's memory (each plans within 1/that of it).
int workers_sharing(const std::vector<c10::Device>& devices, int workers);
bool precision_fits(const SweepConfig& sweep, const std::string& file, const std::vector<c10::Device>& devices,
                    const char* verb, std::ostream& err);

// --- Read from sweep files and experiment directories (verb_inputs.cpp) ---
std::optional<SweepConfig> load(const std::string& path, std::ostream& err, std::string* text = nullptr,
                                std::size_t max_bytes = kMaxSweepBytes);
std::optional<SweepConfig> load_given(const std::string& path, std::ostream& err, std::string* text = nullptr,
                                      TableBytes* tables = nullptr);
std::optional<SweepConfig> load_sweep(const std::string& path, std::ostream& err, std::string* text,
                                      std::size_t max_bytes, TableBytes* tables);
std::optional<SweepConfig> recorded_sweep(const std::string& dir, const char* verb, std::ostream& err);
std::optional<nlohmann::json> results_or_damage(const std::string& dir, std::string& damaged);
bool left_before_the_sweep(const std::string& name);
/// With `code`: the exit code where it is not (2: no experiment there; 1: one
/// whose sweep.json was lost, as a damaged one is).
bool is_experiment(const std::string& dir, const char* verb, std::ostream& err, int* code = nullptr);
// Why `path` is no folder to read in ("does not exist", "is a file, not a folder",
// "is not a folder", or the system's reason: a symbolic-link loop, no permission to enter it);
// "" when it is one.
std::string folder_problem(const std::string& path);
// DIR/sweep.yaml as edited since the run began, with what it changes
// (nothing where there is no sweep.yaml); nullopt once err says why it does not load.
struct EditedSweep {
  std::optional<SweepConfig> given;  ///< sweep.yaml as read (none: there is none)
  SweepEdits edits;
};

/// The directory's sweep.yaml against `recorded` as resume compares them. A
/// TPE sweep recorded before search.waves existed started every trial at
/// once: it goes on so (`recorded` is set to one wave, and its sweep.yaml,
/// which cannot name waves, is read so).
std::optional<EditedSweep> edited_sweep(const std::string& dir, SweepConfig& recorded,
                                        const nlohmann::json& run_options, std::ostream& err);
std::function<void(const std::string&)> left_out(std::ostream& err, const std::string& verb);
/// With metric.target, the rung result on disk that reached it, if one did.
std::optional<TargetReached> target_reached_on_disk(const std::string& dir, const SweepConfig& sweep);
SweepResult trials_so_far(const std::string& dir, const SweepConfig& sweep, std::size_t* rungs = nullptr,
                          const std::function<void(const std::string&)>& damaged = nullptr);

// --- Printed (verb_output.cpp) ---
std::string number(const nlohmann::json& v);
std::string test_summary(const nlohmann::json& test);
/// results.json's pareto_front as a table (empty with one metric).
std::string pareto_summary(const nlohmann::json& results);
/// results.json's importance as a line: each parameter's share, or why none is judged.
std::string importance_summary(const nlohmann::json& results);
/// With metric.target, how the sweep ended: "trial 3 reached the target ...: the
/// sweep ended after that round" (or that none reached it), a line; "" without one.
std::string target_summary(const nlohmann::json& results);
void print_best(const SweepConfig& sweep, const std::vector<TrialRecord>& trials, bool finished, std::ostream& out);
std::string workers_note(int workers, const std::vector<c10::Device>& devices);
std::string joined(const std::vector<std::string>& items);
// `path` as one word a shell reads back (quoted where it must be), for the commands printed.
std::string shell_word(const std::string& path);

// --- Shared by run and resume (verb_run.cpp) ---
std::optional<ExperimentLock> lock_or_refuse(const std::string& dir, const char* verb, std::ostream& err, int& code);
int train(const SweepConfig& sweep, const std::string& dir, bool fuse, const Args& a, const Args& given,
          std::ostream& out, std::ostream& err, const char* verb, const ExperimentLock& held);

}  // namespace hfta::core::verbs
