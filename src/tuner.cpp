#include "tuner_impl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>
#include <thread>

#include "hfta/core/sweep_tables.h"

#include <ATen/Parallel.h>

#include "hfta/core/data_notes.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/suspect_settings.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/fusion/device_memory.h"
#include "hfta/search/pbt_explore.h"
#include "hfta/search/worker_balance.h"

namespace hfta::core::tuning {

Tuner::Tuner(const SweepConfig& sweep, const TunerOptions& options)
    : sweep_(sweep), options_(options), searcher_(make_searcher(sweep)),
      scheduler_(make_scheduler(sweep)), packer_(make_packer(sweep, options.fuse)), store_(options.dir),
      // Each worker's arrays get a share of its device's memory (as `plan` sizes them).
      sizer_(sweep, fusion::available_memory_bytes(options.devices.at(0)) * static_cast<double>(options.devices.size()) /
                        std::max(1, options.workers)),
      progress_(options.log, options.live, options.totals, sweep.metric.name, sweep.metric.goal,
                to_string(sweep.budget.unit)) {
  if (auto refused = not_trainable_yet(sweep); !refused.empty()) throw std::runtime_error(refused.front());
  if (options.workers < 1) throw std::invalid_argument("workers must be at least 1");
  progress_.count_done_with([this] { return trials_done(); });
  if (options.live) progress_.width_with(&Progress::terminal_columns);
  // The cores, shared out: each worker's ops run on its own share (the probe
  // measures that too). Set even for one worker, in every thread that trains:
  // LibTorch settles its count (physical cores) lazily, per thread, while the
  // BLAS and oneDNN follow OpenMP's, which starts at the logical CPUs; left
  // so, arrays of 1 and 2 trained a MobileNet on a mix of both counts and
  // parted from arrays of 6 (experiments/results/sweep_bench-cpu.md).
  threads_per_worker_ = options.threads > 0 ? options.threads
                                            : array_threads(process_threads(), options.workers, options.devices);
  at::set_num_threads(threads_per_worker_);
  if (sweep.task.dataset == "csv") {
    SweepConfig reading = sweep;  // (the counts it fills in: the verbs' reads filled sweep's)
    data_ = read_sweep_table(reading).data;
  } else {
    data_ = trainers::load_classification_data(sweep.task.model, model_options(sweep, {}), sweep.task.validation_size,
                                               sweep.task.corpus_file);
  }
  settings_ = TrialSettings(sweep, static_cast<std::int64_t>(data_.train.size()));
  // Notes on the training set's size, where run's plan could not say them
  // (it knows the size without loading the data: plan_notes).
  if (const auto train = static_cast<std::int64_t>(data_.train.size()); known_train_examples(sweep) != train) {
    for (const auto& note : data_notes(sweep, train)) progress_.message(note);
  }
  place_data();
  if (!options.dir.empty()) {
    kept_.load();
    for (const auto& [key, rates] : kept_.throughput()) {
      for (const auto& [b, r] : rates) sizer_.observe_throughput(key, b, r);
    }
    // What earlier runs in this directory finished: their rungs are not trained again.
    std::size_t finished_rungs = 0;
    for (auto& [id, stored] : store_.load_all([this](const std::string& m) { progress_.message(m); })) {
      store_.settle(stored);
      records_[id] = stored.record;
      rungs_[id] = stored.rungs;
      finished_rungs += own_rungs(stored);
      if (stored.partial) partials_[id] = *stored.partial;
    }
    if (!records_.empty()) {  // counted as status counts them
      progress_.message("resuming: " + std::to_string(records_.size()) + " trial(s) with " +
                        std::to_string(finished_rungs) + " finished rung(s)" +
                        (partials_.empty() ? "" : ", " + std::to_string(partials_.size()) + " checkpointed mid-rung"));
    }
    check_state();
  }
}

SweepResult Tuner::run() {
  const auto start = std::chrono::steady_clock::now();
  if (faults_.time_up_at_start) time_is_up();
  while (!done()) {
    stop_if_interrupted();
    // ASHA's promotion_wait reads this clock (a test's stands still: injected_faults.h).
    const double now = faults_.scheduler_clock_still
                           ? 0.0
                           : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto jobs = scheduler_->next_jobs(std::numeric_limits<std::size_t>::max(), now);
    if (jobs.empty()) {
      // ASHA holds promotions for a short wait so later ones can join the
      // array; with nothing else to train, release them now.
      jobs = scheduler_->next_jobs(std::numeric_limits<std::size_t>::max(), now + 3600);
      if (jobs.empty()) throw std::logic_error("the scheduler has nothing to run but is not finished");
    }
    // Every new trial of the round gets its parameters before an earlier run's
    // results are replayed: a searcher that learns (TPE) then suggests them
    // from what it knew when the round began, and from the round's trials
    // before them, as in a run never interrupted.
    for (const auto& job : jobs) {
      for (const auto& t : job.trials) config_of(t.trial_id);
    }
    std::vector<search::PackItem> items;
    for (const auto& job : jobs) {
      for (const auto& t : job.trials) {
        if (const auto parent = scheduler_->parent_of(t.trial_id);
            parent && !finished(t.trial_id, parent->budget) && !inherit(t.trial_id, *parent, job.budget)) {
          continue;
        }
        if (const RungResult* done = finished(t.trial_id, job.budget)) {
          replay(t.trial_id, *done);
          continue;
        }
        double from = t.from_budget;
        rung_start_[t.trial_id] = from;  // what its mid-rung checkpoints record
        if (auto mid = resume_partial(t.trial_id, from, job.budget)) {
          from = *mid;  // the rung continues from its last mid-rung checkpoint
        } else {
          if (from > 0 && !saved_.count(t.trial_id) && !intact(t.trial_id, from) &&
              !repaired_or_failed(t.trial_id, from, job.budget)) {
            continue;
          }
          // Evaluations past where it starts again (a partial rung, or all of a
          // lost checkpoint's) would be recorded twice.
          const std::int64_t start = settings_.steps_for(from, config_of(t.trial_id));
          auto& h = records_.at(t.trial_id).history;
          h.erase(std::remove_if(h.begin(), h.end(), [&](const nlohmann::json& e) { return e.at("step") > start; }),
                  h.end());
        }
        items.push_back({t.trial_id, config_of(t.trial_id), from, job.budget});
      }
    }
    probe_array_sizes(items);
    auto capacity = [this](const std::string& key, const Config& c) { return sizer_.capacity(key, c); };
    train_arrays(packer_.pack(items, capacity));
    train_lost_again();
    write_state();
    drop_done_checkpoints();
  }
  write_state();
  drop_done_checkpoints();
  progress_.finish();
  note_population_ended_early();
  if (dropped_bytes_ > 0) {
    std::ostringstream mib;
    mib << std::fixed << std::setprecision(0) << static_cast<double>(dropped_bytes_) / (1 << 20);
    progress_.message("--keep-checkpoints live: removed " + mib.str() + " MiB of checkpoints of trials done training");
  }
  SweepResult out = result();
  out.target_reached = reached_target();
  if (out.best >= 0) out.best_test = test_metrics(out.trials[static_cast<std::size_t>(out.best)]);
  for (std::int64_t i : out.pareto) {  // (the choice among them is the user's: each is evaluated)
    const TrialRecord& t = out.trials[static_cast<std::size_t>(i)];
    const bool is_best = out.best >= 0 && out.trials[static_cast<std::size_t>(out.best)].id == t.id;
    if (auto test = is_best ? out.best_test : test_metrics(t)) out.pareto_test[t.id] = *test;
  }
  // Stopped by a signal during the test evaluation: no results.json, and
  // resume evaluates again (all else is on disk). A time limit that passed
  // meanwhile lets the finished sweep write its results.
  if (signalled()) throw Interrupted();
  return out;
}

// Trains a round's arrays, `workers` at a time: longest first, and an array
// that would leave the other workers idle is cut (worker_balance.h). What they
// tell the scheduler and searcher is applied in array order once all are done:
// the same as one after another, whichever finishes first.
void Tuner::train_arrays(const std::vector<search::ArrayPlan>& packed) {
  const auto plan = search::balance_for_workers(packed, static_cast<std::size_t>(options_.workers),
                                                [this](const search::ArrayPlan& a) { return estimated_seconds(a); });
  const std::vector<search::ArrayPlan>& arrays = plan.arrays;
  std::vector<Reports> reports(arrays.size());
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(options_.workers), arrays.size());
  if (workers <= 1) {
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      train_isolating_failures(arrays[i], reports[i], 0);
      for (auto& report : reports[i]) report();
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  // The error said: the first that is no stop (a full disk, not the time
  // limit another worker stopped at), else the first stop.
  std::exception_ptr first_error;
  bool first_is_a_stop = false;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      at::set_num_threads(threads_per_worker_);  // OpenMP's count is the thread's own
      try {
        for (std::size_t n; (n = next++) < arrays.size();) {
          const std::size_t i = plan.start_order[n];
          train_isolating_failures(arrays[i], reports[i], w);
        }
      } catch (...) {
        bool stop = false;
        try {
          throw;
        } catch (const Interrupted&) {
          stop = true;
        } catch (...) {
        }
        const std::lock_guard<std::mutex> hold(error_mutex);
        if (!first_error || (first_is_a_stop && !stop)) first_error = std::current_exception(), first_is_a_stop = stop;
        next = arrays.size();  // no worker starts another array,
        abandoned_ = true;     // and each stops its own at its next step, checkpointed
      }
    });
  }
  for (auto& t : threads) t.join();
  abandoned_ = false;
  if (first_error) std::rethrow_exception(first_error);
  for (auto& array_reports : reports) {
    for (auto& report : array_reports) report();
  }
}

const Config& Tuner::config_of(std::int64_t id) {
  auto it = records_.find(id);
  if (it == records_.end()) {
    TrialRecord r;
    r.id = id;
    r.parent = scheduler_->parent_of(id);
    // Population based training's new trial: its parent's configuration, explored.
    r.params = r.parent ? search::explore(config_of(r.parent->trial), make_search_space(sweep_), pbt_mutable(sweep_),
                                          {sweep_.search.resample_probability, sweep_.search.perturbation_factors},
                                          sweep_.seed, id)
                        : searcher_->suggest(id);
    r.seed = search::trial_seed(sweep_.seed, id);
    it = records_.emplace(id, std::move(r)).first;
  }
  // The searcher hears of every trial as it first enters a round, one an
  // earlier run proposed included, before its results are replayed: so TPE
  // counts the same wave-mates as liars whether the run was cut or not.
  if (proposed_.insert(id).second) searcher_->proposed(id, it->second.params);
  return it->second.params;
}

// A new trial of population based training starts where its parent stands:
// the parent's rung at that budget (its checkpoint, metric and early-stopping
// state) and its history up to there become the trial's own, so that from
// here on it trains, checkpoints, resumes and exports as any trial.
// False where the parent's state is gone (its directory was damaged since):
// the trial fails at `to`, its first rung.
bool Tuner::inherit(std::int64_t child, const search::Parent& parent, double to) {
  const RungResult* at = finished(parent.trial, parent.budget);
  if (!at) throw std::logic_error("trial " + std::to_string(parent.trial) + " has no rung to inherit at " + format_budget(parent.budget));
  RungResult rung = *at;
  Saved state;
  try {
    state = load_state(parent.trial, parent.budget);
  } catch (const CheckpointLost& e) {
    Reports now;
    fail(child, to, std::string("it starts from trial ") + std::to_string(parent.trial) + "'s state, which is lost (" +
                        e.what() + ")", now);
    for (auto& report : now) report();
    return false;
  }
  TrialRecord& r = records_.at(child);
  // Reduce-on-plateau holds the learning rate it reached: the clone's own lr,
  // reduced as often as the parent's was (not the parent's, which would
  // leave its explored lr unused).
  const double parent_lr = settings_.slot_of(parent.trial, records_.at(parent.trial).params, 0).lr;
  const double child_lr = settings_.slot_of(child, r.params, 0).lr;
  if (rung.progress.plateau.lr > 0 && parent_lr > 0 && child_lr != parent_lr) {
    rung.progress.plateau.lr *= child_lr / parent_lr;
    state.progress = rung.progress;
  }
  r.history = nlohmann::json::array();
  for (const auto& e : records_.at(parent.trial).history) {
    if (e.at("step").get<std::int64_t>() <= rung.steps) r.history.push_back(e);
  }
  r.budget = rung.reached, r.metric = rung.metric, r.status = rung.status, r.objectives = rung.objectives;
  r.violation = rung.violation, r.model_params = rung.model_params;
  r.rung_metrics = rung_metrics({rung});  // (as trial.json's rungs give it on resume)
  if (options_.dir.empty()) {
    rungs_[child] = {rung};
    saved_[child] = std::move(state);
    return true;
  }
  check_directory();
  rungs_[child] = {store_.save(r, {}, rung, state.model, state.optimizer)};
  return true;
}

std::shared_ptr<trainers::ArrayClassifier> Tuner::build(std::int64_t models, const Config& c,
                                                 const c10::Device& device) const {
  // A table's rows are as wide as its features; the other datasets' inputs are the models' own.
  const std::int64_t inputs = sweep_.task.dataset == "csv" ? data_.train.images.size(1) : 0;
  return trainers::make_classifier(sweep_.task.model, models, model_options(sweep_, c), data_.classes,
                                   at::TensorOptions().device(device), inputs);
}

// Population based training ends where a generation leaves no member to go
// on or to clone (all stopped, diverged or failed): said, as it is no error.
void Tuner::note_population_ended_early() {
  if (sweep_.search.method != SearchMethod::kPbt || reached_target()) return;
  double furthest = 0;
  for (const auto& [id, r] : records_) furthest = std::max(furthest, r.budget);
  if (furthest >= static_cast<double>(sweep_.budget.max)) return;
  progress_.message("population based training ended at " + format_budget(furthest) +
                    ": no member of the population completed its generation (each stopped, diverged or failed)");
}

// Every result reaches the scheduler through here, and state.json lists them in order.
void Tuner::tell_scheduler(const search::TrialResult& r) {
  scheduler_->report(r);
  told_.push_back(r);
}

// metric.target: decided between rounds from what the scheduler was told,
// whatever the order, so that a resumed run (which tells replayed results
// first) ends where the uninterrupted one did.
std::optional<TargetReached> Tuner::reached_target() const {
  if (!sweep_.metric.target) return std::nullopt;
  std::vector<TargetReached> measured;
  for (const auto& r : told_) {
    // (A result outside the constraints reaches no target.)
    if ((r.status == search::TrialStatus::kCompleted || r.status == search::TrialStatus::kStopped) && r.violation == 0) {
      measured.push_back({r.trial_id, r.metric, r.budget});
    }
  }
  return reaching_target(measured, *sweep_.metric.target, sweep_.metric.goal);
}

// Never promoted: the scheduler sees a failed trial as diverged, with the worst metric.
void Tuner::report_failure(std::int64_t id, double budget) {
  const double worst = sweep_.metric.goal == Goal::kMaximize ? -std::numeric_limits<double>::infinity()
                                                             : std::numeric_limits<double>::infinity();
  tell_scheduler({id, budget, worst, search::TrialStatus::kDiverged});
  reported_.insert({id, budget});
}

void Tuner::replay(std::int64_t id, const RungResult& r) {
  if (r.status == "failed") {
    report_failure(id, r.budget);
    progress_.replayed(0, id, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const auto status = r.status == "completed" ? search::TrialStatus::kCompleted
                      : r.status == "stopped"  ? search::TrialStatus::kStopped
                                               : search::TrialStatus::kDiverged;
  const search::TrialResult result{id, r.budget, r.metric, status, r.objectives, r.violation};
  tell_scheduler(result);
  observe(id, records_.at(id).params, result);
  double from = 0;  // the rung it trained from: its previous one
  for (const auto& earlier : rungs_.at(id)) {
    if (earlier.budget < r.budget) from = std::max(from, earlier.budget);
  }
  // (As shown_metric: a diverged result, or one outside the constraints, is never best.)
  const bool never_best = r.status == "diverged" || r.violation != 0;
  progress_.replayed(r.budget - from, id, never_best ? std::numeric_limits<double>::quiet_NaN() : r.metric);
}

// A diverged trial's metric where it stopped may be finite (a NaN model's
// accuracy, or a loss past early_stopping.divergence): the searcher is told
// NaN, which TPE counts as the worst result, as BOHB counts a crashed run.
double Tuner::told_searcher(search::TrialStatus status, double metric) {
  return status == search::TrialStatus::kDiverged ? std::numeric_limits<double>::quiet_NaN() : metric;
}

void Tuner::observe(std::int64_t id, const search::Config& params, const search::TrialResult& result) {
  search::TrialResult told = result;
  told.metric = told_searcher(result.status, result.metric);
  for (double& v : told.objectives) v = told_searcher(result.status, v);
  searcher_->observe(id, params, told);
  ++observations_;
}

// The rung result an earlier run recorded for this trial and budget, if any.
const RungResult* Tuner::finished(std::int64_t id, double budget) const {
  auto it = rungs_.find(id);
  if (it == rungs_.end()) return nullptr;
  for (const auto& r : it->second) {
    if (r.budget == budget) return &r;
  }
  return nullptr;
}

// Trials done training: those the scheduler will not train again, and those
// that ended (stopped, diverged, failed, or at the full budget) in a round
// whose results it has yet to hear (workers report at the round's end).
// Drawn from workers' threads under mutex_, while the scheduler waits.
std::int64_t Tuner::trials_done() const {
  std::int64_t done = 0;
  for (const auto& [id, r] : records_) {
    const bool at_full_budget = r.budget >= static_cast<double>(sweep_.budget.max);
    if (r.status != "completed" || at_full_budget || !scheduler_->may_train_again(id)) ++done;
  }
  return done;
}

// Before each write into the directory: a directory moved away (or
// removed) stops the sweep, where writing on would make a new one.
void Tuner::check_directory() const {
  if (options_.lock) options_.lock->check_still_at(options_.dir);
}

std::string Tuner::format_budget(double budget) const { return budget_text(budget, to_string(sweep_.budget.unit)); }

SweepResult Tuner::result() const {
  SweepResult out;
  for (const auto& [id, r] : records_) out.trials.push_back(r);
  out.best = best_trial(out.trials, sweep_.metric.goal);
  out.pareto = pareto_front(out.trials, sweep_);
  return out;
}

}  // namespace hfta::core::tuning

namespace hfta::core {

// LibTorch's count as the process started (later tuners in it must not divide it again).
int process_threads() {
  static const int threads = at::get_num_threads();
  return threads;
}

int array_threads(int threads, int workers, const std::vector<c10::Device>& devices) {
  return std::max(1, threads / (devices.front().is_cpu() ? std::max(1, workers) : 1));
}

std::vector<std::string> not_trainable_yet(const SweepConfig& sweep) {
  std::vector<std::string> out;
  if (!trainers::is_trainable(sweep.task.model)) {
    out.push_back("task.model: training " + sweep.task.model +
                  " is not yet available (mlp, cnn, pointnet, dcgan, resnet18, mobilenet_v3_small, transformer_lm and bert are)");
  }
  // The loader refuses these at their line; a sweep built in code reaches here.
  const trainers::ModelSpec* model = trainers::find_model(sweep.task.model);
  if (!model) return out;
  for (const auto& p : sweep.parameters) {
    const trainers::OptionSpec* option = model->find_option(p.name);
    if (option && option->shapes_data) {
      out.push_back("parameters." + p.name + ": it shapes the dataset every trial of the sweep shares; set it under "
                    "task.options, not as a parameter");
    }
  }
  if (const std::string refusal = trainers::precision_refusal(*model, sweep.task.precision); !refusal.empty()) {
    out.push_back("task.precision: " + refusal);
  }
  return out;
}

SweepResult run_sweep(const SweepConfig& sweep, const TunerOptions& options) {
  return tuning::Tuner(sweep, options).run();
}

}  // namespace hfta::core
