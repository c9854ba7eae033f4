#include "hfta/core/tuner.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iomanip>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <memory>
#include <atomic>
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "hfta/core/array_sizer.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/oom_retry.h"
#include "hfta/core/search_setup.h"
#include "hfta/fusion/device_memory.h"
#include "hfta/trainers/catalog.h"
#include "hfta/core/trial_export.h"
#include "hfta/core/kept_measurements.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/throughput_probe.h"
#include "hfta/core/trial_settings.h"
#include "injected_faults.h"
#include "hfta/core/trial_store.h"
#include "hfta/core/sweep_json.h"
#include "hfta/fusion/fused_optimizer.h"
#include "hfta/fusion/caching_host_allocator.h"
#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/model_zoo.h"
#include "hfta/search/worker_balance.h"

namespace hfta::core {
namespace {

using search::Config;

constexpr std::int64_t kProgressSteps = 50;  // training steps between progress updates

// Where a trial stopped: its model, its optimizer state, and how far it trained.
struct Saved {
  torch::nn::Sequential model{nullptr};
  fusion::SlotState optimizer;
  std::int64_t steps = 0;
  trainers::SlotProgress progress;  ///< early stopping and plateau state, carried into its next rung
};

// A rung checkpoint that was intact when its round began and could not be read
// when its array started (lost while earlier arrays trained).
struct CheckpointLost : std::runtime_error {
  CheckpointLost(std::int64_t trial, const std::string& what) : std::runtime_error(what), id(trial) {}
  std::int64_t id;
};

// Runs f when it leaves scope, by return or by exception.
struct OnExit {
  std::function<void()> f;
  ~OnExit() { f(); }
};

class Tuner {
  // What one array tells the scheduler and searcher, applied after its round (train_arrays).
  using Reports = std::vector<std::function<void()>>;

 public:
  Tuner(const SweepConfig& sweep, const TunerOptions& options)
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
    data_ = trainers::load_classification_data(sweep.task.model, model_options(sweep, {}), sweep.task.validation_size);
    settings_ = TrialSettings(sweep, static_cast<std::int64_t>(data_.train.size()));
    note_idle_patience();
    place_data();
    if (!options.dir.empty()) {
      kept_.load();
      for (const auto& [key, rates] : kept_.throughput()) {
        for (const auto& [b, r] : rates) sizer_.observe_throughput(key, b, r);
      }
      // What earlier runs in this directory finished: their rungs are not trained again.
      for (auto& [id, stored] : store_.load_all([this](const std::string& m) { progress_.message(m); })) {
        store_.settle(stored);
        records_[id] = stored.record;
        rungs_[id] = stored.rungs;
        if (stored.partial) partials_[id] = *stored.partial;
      }
      if (!records_.empty()) {
        progress_.message("resuming: " + std::to_string(records_.size()) + " trial(s) have finished rungs");
      }
      check_state();
    }
  }

  SweepResult run() {
    const auto start = std::chrono::steady_clock::now();
    while (!scheduler_->finished()) {
      stop_if_interrupted();
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      auto jobs = scheduler_->next_jobs(std::numeric_limits<std::size_t>::max(), now);
      if (jobs.empty()) {
        // ASHA holds promotions for a short wait so later ones can join the
        // array; with nothing else to train, release them now.
        jobs = scheduler_->next_jobs(std::numeric_limits<std::size_t>::max(), now + 3600);
        if (jobs.empty()) throw std::logic_error("the scheduler has nothing to run but is not finished");
      }
      // Every new trial of the round gets its parameters before an earlier run's
      // results are replayed: a searcher that learns (TPE) then suggests them
      // from what it knew when the round began, as in a run never interrupted.
      for (const auto& job : jobs) {
        for (const auto& t : job.trials) config_of(t.trial_id);
      }
      std::vector<search::PackItem> items;
      for (const auto& job : jobs) {
        for (const auto& t : job.trials) {
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
    if (dropped_bytes_ > 0) {
      std::ostringstream mib;
      mib << std::fixed << std::setprecision(0) << static_cast<double>(dropped_bytes_) / (1 << 20);
      progress_.message("--keep-checkpoints live: removed " + mib.str() + " MiB of checkpoints of trials done training");
    }
    SweepResult out = result();
    if (out.best >= 0) out.best_test = test_metrics(out.trials[static_cast<std::size_t>(out.best)]);
    // Stopped by a signal during the test evaluation: no results.json, and
    // resume evaluates again (all else is on disk). A time limit that passed
    // meanwhile lets the finished sweep write its results.
    if (signalled()) throw Interrupted();
    return out;
  }

 private:
  // Trains a round's arrays, `workers` at a time: longest first, and an array
  // that would leave the other workers idle is cut (worker_balance.h). What they
  // tell the scheduler and searcher is applied in array order once all are done:
  // the same as one after another, whichever finishes first.
  void train_arrays(const std::vector<search::ArrayPlan>& packed) {
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
    std::vector<std::exception_ptr> errors(workers);
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
          errors[w] = std::current_exception();
          next = arrays.size();  // the others finish their arrays and stop
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
    for (auto& array_reports : reports) {
      for (auto& report : array_reports) report();
    }
  }


  // Seconds an array should take on one worker: its model-steps at the rate the
  // probe measured for its key and size. Keys it did not measure (fusion off, or
  // one trial of the key per round) get the mean one-model rate of those it did
  // (or 1: only the ratios between arrays matter).
  double estimated_seconds(const search::ArrayPlan& a) {
    const Config& c = config_of(a.trial_ids.front());
    const auto models = static_cast<std::int64_t>(a.trial_ids.size());
    const auto steps = static_cast<double>(settings_.steps_for(a.to_budget, c) - settings_.steps_for(a.from_budget, c));
    double rate = 0, single = 0;
    for (const auto& [key, rates] : kept_.throughput()) single += rate_at(rates, 1) / static_cast<double>(kept_.throughput().size());
    if (auto it = kept_.throughput().find(a.key); it != kept_.throughput().end()) rate = rate_at(it->second, models);
    if (rate <= 0) rate = single > 0 ? single : 1.0;
    return steps * static_cast<double>(models) / rate;
  }

  // Trains an array; when it throws (not for memory: that splits it), the trials
  // not yet reported are retried in halves until the one that throws is alone,
  // and it is marked failed with the message. The others train as usual. A
  // storage error is no trial's fault: it stops the sweep, resumable.
  // The array without the trials an earlier attempt at it already reported
  // (an attempt can throw while it reports, after some trials are on disk).
  // (Nor the trials whose checkpoint was lost: train_lost_again trains them.)
  search::ArrayPlan unreported(const search::ArrayPlan& array) {
    search::ArrayPlan rest = array;
    rest.trial_ids.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::int64_t id : array.trial_ids) {
      if (!reported_.count({id, array.to_budget}) && !lost_.count(id)) rest.trial_ids.push_back(id);
    }
    return rest;
  }

  // The round's trials whose checkpoint was lost after the round checked it
  // (an array may start hours after its round began): their lost rungs train
  // again, as a round's first check repairs them, and then the rung they were
  // promoted to, in arrays of their own.
  void train_lost_again() {
    while (!lost_.empty()) {
      std::vector<search::PackItem> items;
      for (const auto& [id, job] : std::map<std::int64_t, std::pair<double, double>>(std::move(lost_))) {
        if (repaired_or_failed(id, job.first, job.second)) items.push_back({id, config_of(id), job.first, job.second});
      }
      lost_.clear();
      auto capacity = [this](const std::string& key, const Config& c) { return sizer_.capacity(key, c); };
      train_arrays(packer_.pack(items, capacity));
    }
    lost_in_round_.clear();
  }

  void train_isolating_failures(const search::ArrayPlan& array, Reports& reports, std::size_t worker) {
    // A half of an array split on running out of memory trains only what was
    // not reported: a reported trial's rung is done, and its state is gone.
    auto train = [&](const search::ArrayPlan& a) {
      const search::ArrayPlan rest = unreported(a);
      if (!rest.trial_ids.empty()) train_array(rest, reports, worker);
    };
    try {
      train_splitting_on_oom(array, sizer_, train, &mutex_);
    } catch (const CheckpointLost& e) {
      // The trial leaves the array, to train its lost rungs again once the
      // round's arrays are done; the others train on. Lost while its lost rung
      // trains again (the rung before, checked just now), or lost again after
      // that this round (a file that keeps going, or a checkpoint that reads
      // back wrong however often it is written), it fails instead, rather than
      // training for ever.
      std::unique_lock<std::mutex> lock(mutex_);
      if (repairing_ || !lost_in_round_.insert(e.id).second) {
        lock.unlock();
        fail(e.id, array.to_budget, e.what(), reports);
      } else {
        lost_[e.id] = {array.from_budget, array.to_budget};
        progress_.message(std::string(e.what()) + "; it trains its lost rungs again once this round's arrays are done");
        lock.unlock();
      }
      train_isolating_failures(array, reports, worker);  // the others, without it
    } catch (const StorageError&) {
      throw;
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      const search::ArrayPlan rest = unreported(array);
      if (rest.trial_ids.empty()) return;
      if (rest.trial_ids.size() == 1) return fail(rest.trial_ids.front(), rest.to_budget, e.what(), reports);
      const auto [first, second] = search::split_in_two(rest);
      train_isolating_failures(first, reports, worker);
      train_isolating_failures(second, reports, worker);
    }
  }

  void fail(std::int64_t id, double budget, const std::string& message, Reports& reports) {
    std::lock_guard<std::mutex> lock(mutex_);
    TrialRecord& r = records_.at(id);
    r.status = "failed";
    r.error = message;
    r.budget = reached_budget(rungs_[id]);  // where its last rung left it, not where this one aimed
    r.metric = std::numeric_limits<double>::quiet_NaN();
    // (Training a lost rung again, the failure is recorded once, where
    // repaired_or_failed puts it: a kill before then leaves trial.json as it was.)
    if (!options_.dir.empty() && !repairing_) {
      check_directory();
      store_.save_failure(r, rungs_[id], budget);  // a resumed run does not train it again
      rungs_[id].push_back({budget, r.metric, r.status, 0, 0});
    }
    reported_.insert({id, budget});
    saved_.erase(id);  // it never trains again
    progress_.message("trial " + std::to_string(id) + " failed: " + message);
    reports.push_back([this, id, budget] { report_failure(id, budget); });
    progress_.result(id, r.metric);
  }

  // --keep-checkpoints live: the checkpoints of every trial the scheduler
  // will not train again go (only training reads them; its weights stay).
  void drop_done_checkpoints() {
    if (options_.keep_checkpoints || options_.dir.empty()) return;
    for (const auto& [id, record] : records_) {
      if (checkpoints_dropped_.count(id) || scheduler_->may_train_again(id)) continue;
      dropped_bytes_ += store_.drop_checkpoints(id);
      checkpoints_dropped_.insert(id);
    }
  }

  // The rung whose checkpoint holds the trial's final model: its last that did
  // not fail (a trial that stopped inside it reached less than its budget).
  double final_rung(std::int64_t id) const {
    double rung = 0;
    if (auto it = rungs_.find(id); it != rungs_.end()) {
      for (const auto& r : it->second) {
        if (r.status != "failed") rung = std::max(rung, r.budget);
      }
    }
    return rung;
  }

  // The trial's final model on the test split (held out from every search decision).
  std::optional<TestMetrics> test_metrics(const TrialRecord& r) {
    if (data_.test.size() == 0) return std::nullopt;
    auto model = build(1, r.params, device_of(0));
    bool loaded = false;
    if (saved_.count(r.id) || options_.dir.empty() || (store_.has_checkpoint(r.id) && intact(r.id, final_rung(r.id)))) {
      try {
        model->load_slot(0, load_state(r.id, final_rung(r.id)).model);
        loaded = true;
      } catch (const CheckpointLost&) {  // lost since intact() read it: its final weights, as below
      }
    }
    if (!loaded) {  // its checkpoints went (--keep-checkpoints live), or are damaged: its final weights
      const std::string dir = options_.dir + "/trials/" + std::to_string(r.id);
      try {
        auto plain = model->make_plain();
        import_weights(plain, dir);
        model->load_slot(0, plain);
      } catch (const std::exception& e) {  // damaged from outside: the sweep still finishes, without a test score
        // (LibTorch's message: its first line; a backtrace follows it.)
        const std::string what = e.what();
        progress_.message("trial " + std::to_string(r.id) + ": " + dir + "/" + kWeightsFile +
                          " cannot be read, so no test evaluation: " + what.substr(0, std::min<std::size_t>(what.find('\n'), 200)));
        return std::nullopt;
      }
    }
    trainers::ClassificationData test = data_on(device_of(0));
    test.validation = test.test;
    auto o = settings_.array_options(r.params);
    o.prefetch = prefetch_on(device_of(0));
    trainers::ArrayTrainer trainer(model, {settings_.slot_of(r.id, r.params, r.seed)}, o, test, /*initialise=*/false);
    const auto m = trainer.evaluate().front();
    return TestMetrics{m.val_loss, m.val_accuracy, m.val_fid};
  }

  // Where each device's arrays take their batches from: one copy of the
  // dataset on a GPU, shared by its arrays, where it fits; else the host,
  // with batches prepared ahead (trainers/batch_stream.h).
  void place_data() {
    const double bytes = trainers::data_bytes(data_);
    for (const auto& device : options_.devices) {
      const std::string name = device_key(device);
      if (prefetch_.count(name)) continue;
      const double free = device.is_cpu() ? 0 : fusion::available_memory_bytes(device);
      const std::int64_t ahead = trainers::batches_ahead(device, bytes, free, options_.prefetch);
      prefetch_[name] = ahead;
      if (!device.is_cpu() && ahead == 0) {
        on_device_[name] = trainers::to_device(data_, device);
        sizer_.reserve(bytes / options_.workers);  // the sizer plans with each worker's share of all devices
      }
      std::ostringstream mb;
      mb << std::fixed << std::setprecision(0) << bytes / (1 << 20);
      const std::string prepared = "batches for " + name + " prepared " + std::to_string(ahead) +
                                   " ahead by a background thread";
      if (device.is_cpu() && ahead > 0) progress_.message(prepared);
      if (!device.is_cpu()) {
        progress_.message("dataset (" + mb.str() + " MiB) " +
                          (ahead == 0 ? "copied to " + name + " once, for all its arrays"
                                      : "kept on the host; " + prepared + ", pinned and copied asynchronously"));
      }
    }
  }

  // The data an array on `device` cuts its batches from, and how many it prepares ahead.
  const trainers::ClassificationData& data_on(const c10::Device& device) const {
    auto it = on_device_.find(device_key(device));
    return it == on_device_.end() ? data_ : it->second;
  }
  std::int64_t prefetch_on(const c10::Device& device) const { return prefetch_.at(device_key(device)); }
  // A GPU named without an index is the first: its arrays' parameters say cuda:0.
  static std::string device_key(const c10::Device& device) {
    return device.is_cpu() ? "cpu" : c10::Device(device.type(), device.has_index() ? device.index() : 0).str();
  }

  // Before each write into the directory: a directory moved away (or
  // removed) stops the sweep, where writing on would make a new one.
  void check_directory() const {
    if (options_.lock) options_.lock->check_still_at(options_.dir);
  }

  // Every result reaches the scheduler through here, and state.json lists them in order.
  void tell_scheduler(const search::TrialResult& r) {
    scheduler_->report(r);
    told_.push_back(r);
  }

  // state.json: the scheduler's and searcher's state after each round, for
  // reading. It is derived: resume rebuilds both by replaying trials/ (every
  // random draw is a pure function of the sweep's seed and the trial's id), and
  // says which rung results state.json holds that trials/ lost.
  void write_state() {
    if (options_.dir.empty()) return;
    check_directory();
    nlohmann::json reports = nlohmann::json::array();
    for (const auto& r : told_) {
      static const char* const names[] = {"completed", "stopped", "diverged", "failed"};
      reports.push_back({{"trial", r.trial_id}, {"budget", r.budget},
                         {"metric", std::isfinite(r.metric) ? nlohmann::json(r.metric) : nlohmann::json()},
                         {"status", names[static_cast<int>(r.status)]}});
    }
    nlohmann::json state = {
        {"format", 1},
        {"name", sweep_.name},
        {"finished", scheduler_->finished()},
        {"scheduler", {{"method", to_string(sweep_.search.method)}, {"results", reports}}},
        {"searcher", {{"kind", to_string(sweep_.search.searcher)}, {"configurations", records_.size()}, {"observations", observations_}}},
        {"random_streams",
         {{"seed", sweep_.seed},
          {"scheme", "counter-based (search/rng.h): a trial's configuration and seed are functions of the sweep's "
                     "seed and the trial's id; batch order of the seed and epoch; dropout masks of the trial's seed "
                     "and step: no stream position to keep"}}}};
    write_atomically(options_.dir + "/state.json", state.dump(1) + "\n");
  }

  // Early stopping and plateau schedules count evaluation points (every
  // task.eval_steps, by default each epoch), not rung ends between them:
  // where budget.max leaves fewer points than a patience needs, it can never
  // act. Said at the start, at the batch size with the fewest points.
  void note_idle_patience() {
    std::vector<std::pair<std::string, std::int64_t>> patiences;  // what waits, for how many evaluations
    if (sweep_.early_stopping.enabled && sweep_.early_stopping.patience > 0) {
      patiences.emplace_back("early_stopping.patience", sweep_.early_stopping.patience);
    }
    const auto* schedule = sweep_.find_parameter("schedule");
    const auto* plateau = sweep_.find_parameter("plateau_patience");
    const bool may_plateau =
        plateau || (schedule && std::any_of(schedule->values.begin(), schedule->values.end(), [](const auto& v) {
                      return search::to_string(v) == "plateau";
                    }));
    if (may_plateau) {
      double least = std::stod(trainers::find_training_hyperparameter("plateau_patience")->default_value);
      if (plateau && search::is_categorical(plateau->distribution)) {
        least = 1e18;
        for (const auto& v : plateau->values) least = std::min(least, search::as_double(v));
      } else if (plateau) {
        least = plateau->min;
      }
      patiences.emplace_back("plateau_patience", static_cast<std::int64_t>(least));
    }
    const auto train = static_cast<std::int64_t>(data_.train.size());
    for (const auto& [name, patience] : patiences) {
      for (const std::int64_t b : batch_sizes(sweep_)) {
        const std::int64_t every = sweep_.task.eval_steps > 0 ? sweep_.task.eval_steps : (train + b - 1) / b;
        const std::int64_t last = std::max<std::int64_t>(settings_.raw_steps_at(static_cast<double>(sweep_.budget.max), b), 1);
        const std::int64_t points = (last - 1) / every;  // before the last step, where stopping saves nothing
        if (points > patience) continue;
        progress_.message("note: " + name + " " + std::to_string(patience) + " waits for " + std::to_string(patience + 1) +
                          " evaluations, and budget.max leaves " + std::to_string(points) + " before its end (one every " +
                          std::to_string(every) + " steps at batch " + std::to_string(b) +
                          "), so it never acts: set task.eval_steps to evaluate more often");
        break;
      }
    }
  }

  // On resume: the rung results an earlier state.json recorded that trials/ no longer holds.
  void check_state() {
    std::ifstream in(options_.dir + "/state.json");
    if (!in) return;
    const auto state = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    // Valid JSON of another shape is as damaged as a truncated file.
    auto is_result = [](const nlohmann::json& r) {
      return r.is_object() && r.contains("trial") && r["trial"].is_number_integer() && r.contains("budget") &&
             r["budget"].is_number();
    };
    const bool readable = state.is_object() && state.contains("scheduler") && state["scheduler"].is_object() &&
                          state["scheduler"].contains("results") && state["scheduler"]["results"].is_array() &&
                          std::all_of(state["scheduler"]["results"].begin(), state["scheduler"]["results"].end(), is_result);
    if (!readable) {
      progress_.message("state.json is damaged: rebuilt from trials/");
      return;
    }
    std::vector<std::string> lost;
    for (const auto& r : state["scheduler"]["results"]) {
      const auto id = r["trial"].get<std::int64_t>();
      const double budget = r["budget"].get<double>();
      if (!finished(id, budget)) lost.push_back("trial " + std::to_string(id) + " at " + nlohmann::json(budget).dump());
    }
    if (lost.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < lost.size() && i < 5; ++i) list += (i ? ", " : "") + lost[i];
    if (lost.size() > 5) list += " and " + std::to_string(lost.size() - 5) + " more";
    progress_.message("state.json records " + std::to_string(lost.size()) + " rung result(s) that trials/ no longer holds (" +
                      list + "): they train again");
  }

  // Never promoted: the scheduler sees a failed trial as diverged, with the worst metric.
  void report_failure(std::int64_t id, double budget) {
    const double worst = sweep_.metric.goal == Goal::kMaximize ? -std::numeric_limits<double>::infinity()
                                                               : std::numeric_limits<double>::infinity();
    tell_scheduler({id, budget, worst, search::TrialStatus::kDiverged});
    reported_.insert({id, budget});
  }

  // Trials done training: those the scheduler will not train again, and those
  // that ended (stopped, diverged, failed, or at the full budget) in a round
  // whose results it has yet to hear (workers report at the round's end).
  // Drawn from workers' threads under mutex_, while the scheduler waits.
  std::int64_t trials_done() const {
    std::int64_t done = 0;
    for (const auto& [id, r] : records_) {
      const bool at_full_budget = r.budget >= static_cast<double>(sweep_.budget.max);
      if (r.status != "completed" || at_full_budget || !scheduler_->may_train_again(id)) ++done;
    }
    return done;
  }

  // The rung result an earlier run recorded for this trial and budget, if any.
  const RungResult* finished(std::int64_t id, double budget) const {
    auto it = rungs_.find(id);
    if (it == rungs_.end()) return nullptr;
    for (const auto& r : it->second) {
      if (r.budget == budget) return &r;
    }
    return nullptr;
  }

  // A diverged trial's metric where it stopped may be finite (a NaN model's
  // accuracy, or a loss past early_stopping.divergence): the searcher is told
  // NaN, which TPE counts as the worst result, as BOHB counts a crashed run.
  static double told_searcher(search::TrialStatus status, double metric) {
    return status == search::TrialStatus::kDiverged ? std::numeric_limits<double>::quiet_NaN() : metric;
  }

  void replay(std::int64_t id, const RungResult& r) {
    if (r.status == "failed") {
      report_failure(id, r.budget);
      progress_.replayed(0, id, std::numeric_limits<double>::quiet_NaN());
      return;
    }
    const auto status = r.status == "completed" ? search::TrialStatus::kCompleted
                        : r.status == "stopped"  ? search::TrialStatus::kStopped
                                                 : search::TrialStatus::kDiverged;
    tell_scheduler({id, r.budget, r.metric, status});
    searcher_->observe(id, records_.at(id).params, r.budget, told_searcher(status, r.metric));
    ++observations_;
    double from = 0;  // the rung it trained from: its previous one
    for (const auto& earlier : rungs_.at(id)) {
      if (earlier.budget < r.budget) from = std::max(from, earlier.budget);
    }
    progress_.replayed(r.budget - from, id, r.status == "diverged" ? std::numeric_limits<double>::quiet_NaN() : r.metric);
  }

  // Whether the trial's checkpoint at `budget` is on disk with the CRC its
  // rung recorded (saying why not), without loading it: a round checks every
  // promoted trial's first, and each array loads its own (load_state).
  bool intact(std::int64_t id, double budget) {
    const RungResult* r = finished(id, budget);
    if (!r) return false;
    std::string problem;
    if (store_.intact_checkpoint(id, r->checkpoint_crc, &problem)) return true;
    progress_.message("trial " + std::to_string(id) + ": no intact checkpoint at " + format_budget(budget) + ": " +
                      problem);
    return false;
  }

  // The trial's state at `budget`: saved_'s (a run without a directory, or a
  // rung resumed from its mid-rung checkpoint), else its rung's checkpoint.
  Saved load_state(std::int64_t id, double budget) {
    if (auto it = saved_.find(id); it != saved_.end()) return it->second;
    const RungResult* r = finished(id, budget);
    if (!r) throw std::logic_error("trial " + std::to_string(id) + " has no rung at " + format_budget(budget));
    auto model = build(1, records_.at(id).params)->make_plain();
    fusion::SlotState state;
    std::string problem;
    if (take_one(faults_.damaged_at_load, {id, budget})) damage_checkpoint(id);
    if (!store_.load_checkpoint(id, r->checkpoint_crc, model, state, &problem)) {
      throw CheckpointLost(id, "trial " + std::to_string(id) + ": its checkpoint at " + format_budget(budget) +
                                   " could not be read: " + problem);
    }
    return {model, state, r->steps, r->progress};
  }

  // (Tests: HFTA_TUNE_DAMAGE_CHECKPOINTS...) Cuts the trial's last checkpoint short.
  void damage_checkpoint(std::int64_t id) const {
    std::filesystem::resize_file(options_.dir + "/trials/" + std::to_string(id) + "/checkpoint.pt", 100);
  }

  std::string format_budget(double budget) const {
    std::ostringstream s;
    s << budget << " " << to_string(sweep_.budget.unit);
    return s.str();
  }

  // A trial whose checkpoint at `budget` could not be loaded: falls back to
  // its previous rung's checkpoint (repairing that one first, down to the
  // start where none is left) and trains the lost rung again, alone, recording
  // what it recorded the first time: the rung's evaluations, training losses
  // averaged as they were (the rung's checkpoint holds the running sums). Returns whether it stands at
  // `budget` again, still running (false: it failed, or this time stopped).
  bool repair(std::int64_t id, double budget) {
    double previous = 0;
    for (const auto& r : rungs_.at(id)) {
      if (r.budget < budget && r.status == "completed") previous = std::max(previous, r.budget);
    }
    if (previous > 0 && !intact(id, previous) && !repair(id, previous)) return false;
    progress_.message("trial " + std::to_string(id) + ": " +
                      (previous > 0 ? "falling back to its checkpoint at " + format_budget(previous) + " and training"
                                    : "training from the start") +
                      " its rung to " + format_budget(budget) + " again");
    auto& rungs = rungs_.at(id);
    rungs.erase(std::remove_if(rungs.begin(), rungs.end(), [&](const RungResult& r) { return r.budget >= budget; }),
                rungs.end());
    const std::int64_t start = settings_.steps_for(previous, config_of(id));
    auto& h = records_.at(id).history;
    h.erase(std::remove_if(h.begin(), h.end(), [&](const nlohmann::json& e) { return e.at("step") > start; }), h.end());
    rung_start_[id] = previous;
    reported_.erase({id, budget});  // reported earlier in this process, perhaps: it trains again
    progress_.unreplayed(budget - previous);
    auto capacity = [this](const std::string& key, const Config& c) { return sizer_.capacity(key, c); };
    Reports already_reported;  // the scheduler replayed this rung's result
    for (const auto& plan : packer_.pack({{id, config_of(id), previous, budget}}, capacity)) {
      train_isolating_failures(plan, already_reported, 0);
    }
    rung_start_[id] = budget;
    const RungResult* again = finished(id, budget);
    return again && again->status == "completed";
  }

  // repair(), and where training the lost rungs again fails (or this time
  // stops early), the trial fails at `to`, the rung it could not start, with
  // the rungs and history the scheduler was told before: what a resumed run
  // replays from trial.json then equals what this run decided from.
  bool repaired_or_failed(std::int64_t id, double from, double to) {
    const std::vector<RungResult> rungs = rungs_.at(id);
    const nlohmann::json history = records_.at(id).history;
    repairing_ = true;
    bool repaired = false;
    try {
      repaired = repair(id, from);
    } catch (...) {
      repairing_ = false;
      throw;
    }
    repairing_ = false;
    if (repaired) return true;
    TrialRecord& r = records_.at(id);
    const std::string why = r.status == "failed" ? r.error : "it stopped early this time, where it had not";
    rungs_.at(id) = rungs;
    r.history = history;
    r.status = "failed";
    r.error = "its checkpoint at " + format_budget(from) + " was lost, and training its rungs again failed: " + why;
    r.budget = reached_budget(rungs);
    r.metric = std::numeric_limits<double>::quiet_NaN();
    check_directory();
    store_.save_failure(r, rungs, to);
    rungs_.at(id).push_back({to, r.metric, r.status, 0, 0});
    saved_.erase(id);
    progress_.message("trial " + std::to_string(id) + " failed: " + r.error);
    progress_.result(id, r.metric);  // the rung it could not start: a result of the plan's
    report_failure(id, to);
    return false;
  }

  // A trial killed mid-rung: loads its partial checkpoint for the rung
  // [from, to] into saved_ and returns the budget it reached; nullopt when it has
  // none for this rung or the checkpoint is damaged (the rung then restarts).
  std::optional<double> resume_partial(std::int64_t id, double from, double to) {
    auto it = partials_.find(id);
    if (it == partials_.end()) return std::nullopt;
    const PartialRung partial = it->second;
    partials_.erase(it);
    if (partial.from_budget != from || partial.to_budget != to) return std::nullopt;
    const Config& c = config_of(id);
    auto model = build(1, c)->make_plain();
    fusion::SlotState state;
    std::string problem;
    if (!store_.load_partial(id, partial, model, state, &problem)) {
      progress_.message("trial " + std::to_string(id) + ": " + problem + "; restarting its rung");
      return std::nullopt;
    }
    saved_[id] = {model, state, partial.steps, partial.progress};
    progress_.message("trial " + std::to_string(id) + " continues its rung from step " + std::to_string(partial.steps));
    progress_.restored(settings_.budget_of(partial.steps, c) - partial.from_budget);
    return settings_.budget_of(partial.steps, c);
  }

  // Each running trial's model, optimizer, history, early-stopping state and
  // training losses since its last evaluation, at step `done` of its rung.
  void checkpoint_mid_rung(trainers::ArrayTrainer& trainer, const search::ArrayPlan& array, std::int64_t done) {
    check_directory();
    const auto ids = trainer.trial_ids();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (trainer.status(static_cast<std::int64_t>(k)) != trainers::SlotStatus::kRunning) continue;
      const std::int64_t id = ids[k];
      // The rung's own start, not this array's (a rung resumed mid-way starts there).
      const auto start = rung_start_.find(id);
      PartialRung partial{start != rung_start_.end() ? start->second : array.from_budget, array.to_budget, done,
                          trainer.progress(id), 0};
      store_.save_partial(records_.at(id), rungs_[id], partial, trainer.extract(id), trainer.export_optimizer(id));
    }
    // Tests: a kill right here.
    if (faults_.exit_after_checkpoints > 0 && --faults_.exit_after_checkpoints == 0) std::_Exit(9);
  }

  const Config& config_of(std::int64_t id) {
    auto it = records_.find(id);
    if (it == records_.end()) {
      TrialRecord r;
      r.id = id;
      r.params = searcher_->suggest(id);
      r.seed = search::trial_seed(sweep_.seed, id);
      it = records_.emplace(id, std::move(r)).first;
    }
    return it->second.params;
  }

  std::shared_ptr<trainers::ArrayClassifier> build(std::int64_t models, const Config& c,
                                                   const c10::Device& device = c10::Device(c10::kCPU)) const {
    return trainers::make_classifier(sweep_.task.model, models, model_options(sweep_, c), data_.classes,
                                     at::TensorOptions().device(device));
  }

  // The device worker `w` trains on: workers are dealt out over the devices in turn.
  const c10::Device& device_of(std::size_t worker) const { return options_.devices.at(worker % options_.devices.size()); }

  // Before the first arrays of a fusion key, measures how fast arrays of 1, 2,
  // 4, ... of its models train (throughput_probe.h), so that the sizer caps
  // arrays where larger ones stop paying. Kept in the experiment directory: a
  // resumed run packs as the interrupted one did.
  void probe_array_sizes(const std::vector<search::PackItem>& items) {
    if (!options_.fuse) return;
    std::map<std::string, std::vector<const search::PackItem*>> by_key;
    for (const auto& item : items) by_key[packer_.fusion_key(item.params)].push_back(&item);
    for (const auto& [key, members] : by_key) {
      if (members.size() < 2 || kept_.throughput().count(key)) continue;
      const Config& example = members.front()->params;
      // Up to the arrays this round can form; a curve still rising there leaves larger ones uncapped.
      const std::int64_t most = std::min<std::int64_t>(sizer_.capacity(key, example),
                                                       static_cast<std::int64_t>(members.size()));
      if (most < 2) continue;
      auto make_step = [&](std::int64_t b) -> ArrayStep {
        std::vector<trainers::SlotTrial> slots;
        for (std::int64_t i = 0; i < b; ++i) slots.push_back(settings_.slot_of(i, example, static_cast<std::uint64_t>(i)));
        auto o = settings_.array_options(example);
        o.record_losses = true;  // each timed step ends when the device has finished it
        std::shared_ptr<trainers::ArrayTrainer> trainer = make_trainer(key, build(b, example, device_of(0)), slots, o);
        return [trainer] { trainer->train(1); };
      };
      ProbeOptions probe;
      probe.fuse_gain = sweep_.fusion.min_gain;
      // The key's share of the sweep's training (the plan's, split as this round's trials are).
      if (options_.totals.work > 0) {
        probe.sized_steps = std::max<double>(1, static_cast<double>(settings_.raw_steps(
            options_.totals.work * static_cast<double>(members.size()) / static_cast<double>(items.size()), example)));
      }
      const auto start = std::chrono::steady_clock::now();
      keep_throughput(key, probe_throughput(make_step, most, probe));
      // The probe's arrays leave their blocks cached; arrays of other sizes
      // trained after them ran slower (PointNet sweep: 60.9-62.4 s against
      // 56.8-57.9 s with the cache emptied here), so they start from none.
      fusion::CachingHostAllocator::instance().empty_cache();
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::string rates;
      for (const auto& [b, r] : kept_.throughput().at(key)) rates += " B=" + std::to_string(b) + " " + std::to_string(std::lround(r));
      std::ostringstream seconds;
      seconds << std::fixed << std::setprecision(1) << took;
      seconds << " s";
      if (probe.sized_steps > 0) {  // sizes 1 and 2 always run; larger ones only within the share
        seconds << " (sizes above 2 only within " << std::defaultfloat << std::setprecision(2)
                << probe.max_share * probe.sized_steps / kept_.throughput().at(key).begin()->second << " s)";
      }
      progress_.message("array sizes measured in " + seconds.str() + ", model-steps/s:" + rates +
                        "; arrays of at most " + std::to_string(sizer_.capacity(key, example)));
    }
  }

  // An array's trainer with the op strategies kept for its fusion key and size:
  // measured when the first array of that size is built (the probe's, or a
  // real one), then reused, so later arrays neither time them again nor differ.
  std::unique_ptr<trainers::ArrayTrainer> make_trainer(const std::string& key,
                                                       const std::shared_ptr<trainers::ArrayClassifier>& model,
                                                       const std::vector<trainers::SlotTrial>& slots,
                                                       trainers::ArrayTrainerOptions o, bool initialise = true) {
    if (const auto* kept = kept_.strategies(key, model->models())) o.strategies = *kept;
    const c10::Device device = model->parameters().front().device();
    o.prefetch = prefetch_on(device);
    auto trainer = std::make_unique<trainers::ArrayTrainer>(model, slots, o, data_on(device), initialise);
    if (o.strategies.empty() && !model->strategies().empty()) {
      check_directory();
      kept_.keep_strategies(key, model->models(), model->strategies());
    }
    return trainer;
  }

  void keep_throughput(const std::string& key, const KeptMeasurements::Rates& rates) {
    check_directory();
    kept_.keep_throughput(key, rates);
    for (const auto& [b, r] : rates) sizer_.observe_throughput(key, b, r);
  }

  // Holds mutex_ but while it trains (training touches nothing the other
  // workers share, and no global random stream: building, initialising,
  // evaluating and compacting do, so they stay under the lock).
  void train_array(const search::ArrayPlan& array, Reports& reports, std::size_t worker) {
    std::unique_lock<std::mutex> lock(mutex_);
    stop_if_interrupted();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t id : array.trial_ids) {
      if (faults_.failing_trials.count(id)) throw std::runtime_error("injected fault (HFTA_TUNE_FAULT_TRIALS)");
    }
    const Config& first = records_.at(array.trial_ids.front()).params;
    const auto models = static_cast<std::int64_t>(array.trial_ids.size());
    // On a GPU the caching allocator counts the peak from here: this array's.
    const bool own_device = options_.workers <= static_cast<int>(options_.devices.size());
    if (own_device) fusion::take_peak_bytes(device_of(worker));
    auto model = build(models, first, device_of(worker));
    std::vector<trainers::SlotTrial> slots;
    for (std::int64_t id : array.trial_ids) {
      slots.push_back(settings_.slot_of(id, records_.at(id).params, records_.at(id).seed));
    }
    trainers::ArrayTrainerOptions o = settings_.array_options(first);
    const bool resumed = array.from_budget > 0;
    // The states the array starts from, read here (not when the round began):
    // the host holds one array's, not the round's.
    std::vector<Saved> start;
    if (resumed) {
      for (std::int64_t b = 0; b < models; ++b) {
        start.push_back(load_state(array.trial_ids[static_cast<std::size_t>(b)], array.from_budget));
        model->load_slot(b, start.back().model);
      }
    }
    const auto trainer_of_array = make_trainer(array.key, model, slots, o, /*initialise=*/!resumed);
    trainers::ArrayTrainer& trainer = *trainer_of_array;
    const std::int64_t from = settings_.steps_for(array.from_budget, first);
    // Budgets smaller than a batch still train: every rung at least one step further.
    const std::int64_t to = std::max(settings_.steps_for(array.to_budget, first), from + 1);
    if (resumed) {
      for (std::int64_t b = 0; b < models; ++b) {
        const std::int64_t id = array.trial_ids[static_cast<std::size_t>(b)];
        trainer.import_optimizer(b, start[static_cast<std::size_t>(b)].optimizer);
        trainer.restore_progress(b, start[static_cast<std::size_t>(b)].progress);  // as if it had trained straight on
      }
      start.clear();
    }
    trainer.seek(from);
    progress_.array_started(models, array.from_budget, array.to_budget);
    // An attempt that throws (retried split, or without the trial that threw,
    // or the sweep stops) takes back its evaluations and its progress.
    std::map<std::int64_t, std::size_t> history;
    for (std::int64_t id : array.trial_ids) history[id] = records_.at(id).history.size();
    double advanced = 0;
    bool ended = false;
    const OnExit undo_unless_ended{[&] {
      if (ended) return;
      if (!lock.owns_lock()) lock.lock();
      for (std::int64_t id : array.trial_ids) {
        if (reported_.count({id, array.to_budget})) continue;
        auto& h = records_.at(id).history;
        while (h.size() > history.at(id)) h.erase(h.size() - 1);
      }
      progress_.array_abandoned(advanced);
    }};
    // Budget units per step, summed over the array's models: the ETA's measure of work.
    const double work_per_step = static_cast<double>(models) * (array.to_budget - array.from_budget) /
                                 static_cast<double>(std::max<std::int64_t>(to - from, 1));
    // Evaluate every task.eval_steps steps (by default at every epoch boundary
    // of the training data), counted from the trial's first step whatever the
    // budget unit, and at the end of the rung: the same points however the
    // trial's training is cut into rungs or resumed. A rung end between them
    // only looks (evaluate(false)): early stopping and plateau schedules count
    // the regular points, which every trial passes wherever its rungs end.
    const std::int64_t every = sweep_.task.eval_steps > 0
                                   ? sweep_.task.eval_steps
                                   : (data_.train.size() + settings_.batch_size(first) - 1) / settings_.batch_size(first);
    std::map<std::int64_t, trainers::SlotMetrics> latest;  // each trial's last evaluation
    auto last_checkpoint = std::chrono::steady_clock::now();
    // Mid-rung checkpoints, at least checkpoint_seconds apart: between pieces
    // of training or after an evaluation, never where one is due (a trial
    // resumed there would skip it).
    // None while a lost rung trains again (repairing_): trial.json stays as the
    // scheduler was told until repaired_or_failed writes the outcome, and a
    // kill meanwhile starts the repair over.
    auto checkpoint_if_due = [&](std::int64_t step) {
      if (options_.dir.empty() || repairing_ || step >= to ||
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() <
              options_.checkpoint_seconds) {
        return;
      }
      checkpoint_mid_rung(trainer, array, step);
      last_checkpoint = std::chrono::steady_clock::now();
    };
    // After Ctrl-C or SIGTERM: a last mid-rung checkpoint where one may stand
    // (as checkpoint_if_due's), then the sweep stops, resumable.
    // At the rung's end the rung is saved as usual, and the next array stops.
    auto stop_if_interrupted_at = [&](std::int64_t step) {
      if (!interrupted() || step >= to) return;
      if (!options_.dir.empty() && step > from) checkpoint_mid_rung(trainer, array, step);
      throw Interrupted();
    };
    for (std::int64_t done = from; done < to;) {
      const std::int64_t chunk = std::min(every - done % every, to - done);
      // In pieces, so the progress line moves between evaluations (the same training).
      for (std::int64_t piece = 0; piece < chunk; piece += kProgressSteps) {
        const std::int64_t n = std::min(kProgressSteps, chunk - piece);
        lock.unlock();
        trainer.train(n);
        lock.lock();
        progress_.advanced(work_per_step * static_cast<double>(n));
        advanced += work_per_step * static_cast<double>(n);
        if (faults_.interrupt_after_pieces > 0 && --faults_.interrupt_after_pieces == 0) std::raise(SIGINT);
        if (faults_.time_up_after_pieces > 0 && --faults_.time_up_after_pieces == 0) stop_after(1e-9);
        if (piece + n < chunk) {
          checkpoint_if_due(done + piece + n);
          stop_if_interrupted_at(done + piece + n);
        }
      }
      done += chunk;
      for (const auto& m : trainer.evaluate(/*scheduled=*/done % every == 0)) {
        latest[m.trial_id] = m;
        nlohmann::json point = {{"step", m.step}, {"train_loss", m.train_loss}, {"val_loss", m.val_loss},
                                {"val_accuracy", m.val_accuracy}};
        if (language_model_) point["val_perplexity"] = m.val_perplexity;
        if (gan_) point["d_loss"] = m.d_loss, point["val_fid"] = m.val_fid;  // train_loss is the generator's
        records_.at(m.trial_id).history.push_back(point);
      }
      if (!trainer.any_running()) break;  // every trial stopped: the rest of the rung would change nothing
      checkpoint_if_due(done);
      stop_if_interrupted_at(done);
    }
    // What the array took teaches its key's memory model (not where other
    // workers' arrays shared the device and the count).
    if (own_device) {
      if (const auto peak = fusion::take_peak_bytes(device_of(worker))) sizer_.observe_peak(array.key, models, *peak);
    }
    const double best = report_rung(array, trainer, latest, to, reports);
    ended = true;
    progress_.array_finished(models, array.from_budget, array.to_budget, to - from,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), best);
  }

  // Saves and reports the rung each trial of `array` reached (`latest`: its
  // last evaluation; `to`: the rung's last step), returning the best metric shown.
  double report_rung(const search::ArrayPlan& array, trainers::ArrayTrainer& trainer,
                     const std::map<std::int64_t, trainers::SlotMetrics>& latest, std::int64_t to, Reports& reports) {
    double best = std::numeric_limits<double>::quiet_NaN();
    std::size_t reported_here = 0;
    for (std::int64_t id : array.trial_ids) {
      // For testing: device memory runs out while a promoted array reports,
      // after HFTA_TUNE_OOM_AFTER_REPORTS of its trials are on disk (once).
      if (faults_.oom_after_reports > 0 && array.from_budget > 0 &&
          reported_here == static_cast<std::size_t>(faults_.oom_after_reports)) {
        faults_.oom_after_reports = 0;
        throw c10::OutOfMemoryError(c10::SourceLocation{__func__, __FILE__, __LINE__},
                                    "out of memory (injected: HFTA_TUNE_OOM_AFTER_REPORTS)");
      }
      ++reported_here;
      const auto& m = latest.at(id);
      TrialRecord& r = records_.at(m.trial_id);
      // A trial that stopped or diverged reached the evaluation where it did.
      const bool ran_through = m.status == trainers::SlotStatus::kRunning;
      r.budget = ran_through || m.step >= to ? array.to_budget
                                             : std::min(array.to_budget, settings_.budget_of(m.step, r.params));
      r.metric = metric_of(m);
      r.status = m.status == trainers::SlotStatus::kRunning ? "completed"
                 : m.status == trainers::SlotStatus::kStopped ? "stopped" : "diverged";
      // Only trials still running go on to another rung, and only they hold a slot.
      const auto progress = m.status == trainers::SlotStatus::kRunning ? trainer.progress(id) : trainers::SlotProgress{};
      Saved saved{trainer.extract(id), trainer.export_optimizer(id), to, progress};
      // A lost rung trained again that stopped early this time (only where
      // training is not deterministic) is not written: repaired_or_failed
      // writes the trial's failure instead, in one step, as it does for one
      // that throws.
      if (!options_.dir.empty() && !(repairing_ && r.status != "completed")) {
        check_directory();
        RungResult rung{array.to_budget, r.metric, r.status, ran_through ? to : m.step, 0, progress, r.budget};
        rungs_[m.trial_id].push_back(store_.save(r, rungs_[m.trial_id], rung, saved.model, saved.optimizer));
        if (take_one(faults_.damaged_when_written, {m.trial_id, array.to_budget})) damage_checkpoint(m.trial_id);
      }
      // The state this rung started from is stale now: a retried array must not
      // start from it. With a directory the new one is read back from disk
      // (load_state, with its CRC) if the trial is promoted, so the host holds
      // the states of the array in training, not of every trial the sweep
      // ever trained (an array of BERT-Medium under Adam is 0.6 GB a model).
      if (options_.dir.empty()) {
        saved_[m.trial_id] = std::move(saved);
      } else {
        saved_.erase(m.trial_id);
      }
      search::TrialResult result{m.trial_id, array.to_budget, r.metric,
                                 m.status == trainers::SlotStatus::kRunning ? search::TrialStatus::kCompleted
                                 : m.status == trainers::SlotStatus::kStopped ? search::TrialStatus::kStopped
                                                                               : search::TrialStatus::kDiverged};
      reported_.insert({m.trial_id, array.to_budget});
      reports.push_back([this, result, params = r.params] {
        tell_scheduler(result);
        searcher_->observe(result.trial_id, params, result.budget, told_searcher(result.status, result.metric));
        ++observations_;
      });
      progress_.result(m.trial_id, shown_metric(r));  // shown now: the display does not steer anything
      if (std::isnan(best) || search::better(shown_metric(r), best, sweep_.metric.goal)) best = shown_metric(r);
    }
    return best;
  }

  // The metric the progress line may call best: none for a diverged trial,
  // which is never best (best_trial), however good its last evaluation looked.
  static double shown_metric(const TrialRecord& r) {
    return r.status == "diverged" ? std::numeric_limits<double>::quiet_NaN() : r.metric;
  }

  double metric_of(const trainers::SlotMetrics& m) const {
    if (sweep_.metric.name == "val_loss") return m.val_loss;
    if (sweep_.metric.name == "val_perplexity") return m.val_perplexity;
    if (sweep_.metric.name == "train_loss" || sweep_.metric.name == "g_loss") return m.train_loss;
    if (sweep_.metric.name == "d_loss") return m.d_loss;
    if (sweep_.metric.name == "val_fid") return m.val_fid;
    return m.val_accuracy;
  }

  SweepResult result() const {
    SweepResult out;
    for (const auto& [id, r] : records_) out.trials.push_back(r);
    out.best = best_trial(out.trials, sweep_.metric.goal);
    return out;
  }

  const SweepConfig& sweep_;
  TunerOptions options_;
  int threads_per_worker_ = 1;  ///< intra-op threads of each worker (all the cores for one)
  std::mutex mutex_;  ///< the tuner's state, between workers
  std::unique_ptr<search::Searcher> searcher_;
  std::unique_ptr<search::Scheduler> scheduler_;
  search::Packer packer_;
  trainers::ClassificationData data_;                            ///< on the host
  TrialSettings settings_{sweep_, 0};  ///< trial options: assigned once data_ says how large an epoch is
  std::map<std::string, trainers::ClassificationData> on_device_;  ///< its copy on a GPU, by device
  std::map<std::string, std::int64_t> prefetch_;                   ///< batches ahead, by device
  std::vector<search::TrialResult> told_;  ///< what the scheduler was told, in order (state.json)
  bool repairing_ = false;                  ///< training a lost rung again (repaired_or_failed)
  std::int64_t observations_ = 0;          ///< results the searcher observed
  std::map<std::int64_t, TrialRecord> records_;
  std::map<std::int64_t, Saved> saved_;
  std::set<std::int64_t> checkpoints_dropped_;  ///< --keep-checkpoints live: trials whose checkpoints went
  std::uintmax_t dropped_bytes_ = 0;
  TrialStore store_;
  ArraySizer sizer_;
  std::map<std::int64_t, std::vector<RungResult>> rungs_;  ///< finished rungs, from disk
  KeptMeasurements kept_{options_.dir, [this](const std::string& m) { progress_.message(m); }};
  Progress progress_;
  std::set<std::pair<std::int64_t, double>> reported_;  ///< (trial, budget) rung results reported
  InjectedFaults faults_ = InjectedFaults::from_environment();  ///< tests' (injected_faults.h)
  std::map<std::int64_t, std::pair<double, double>> lost_;  ///< trial -> its job's (from, to): see train_lost_again
  std::set<std::int64_t> lost_in_round_;  ///< trials lost once this round (lost again: failed)
  std::map<std::int64_t, PartialRung> partials_;  ///< mid-rung checkpoints found on disk, not yet resumed
  std::map<std::int64_t, double> rung_start_;      ///< where each trial's current rung began
  const bool language_model_ = trainers::find_model(sweep_.task.model)->kind == trainers::TaskKind::kLanguageModel ||
                               trainers::find_model(sweep_.task.model)->kind == trainers::TaskKind::kMaskedLanguageModel;
  const bool gan_ = trainers::find_model(sweep_.task.model)->kind == trainers::TaskKind::kGan;
};

nlohmann::json params_json(const Config& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : c) out[k] = to_json(v);
  return out;
}

}  // namespace

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
  if (const trainers::ModelSpec* model = trainers::find_model(sweep.task.model)) {
    for (const auto& p : sweep.parameters) {
      const trainers::OptionSpec* option = model->find_option(p.name);
      if (option && option->shapes_data) {
        out.push_back("parameters." + p.name + ": it shapes the dataset every trial of the sweep shares; set it under "
                      "task.options, not as a parameter");
      }
    }
  }
  if (sweep.task.precision != "fp32" && trainers::find_model(sweep.task.model) &&
      trainers::find_model(sweep.task.model)->kind == trainers::TaskKind::kGan) {
    out.push_back("task.precision: " + sweep.task.model + " trains in fp32 only (its two optimizers step "
                  "between forward passes, outside one autocast region)");
  }
  return out;
}

bool may_be_best(const TrialRecord& t) {
  return (t.status == "completed" || t.status == "stopped") && t.budget > 0 && !std::isnan(t.metric);
}

bool ranks_before(const TrialRecord& a, const TrialRecord& b, Goal goal) {
  return search::better(a.metric, b.metric, goal) || (a.metric == b.metric && a.budget > b.budget);
}

std::int64_t best_trial(const std::vector<TrialRecord>& trials, Goal goal) {
  const TrialRecord* best = nullptr;
  for (const TrialRecord& t : trials) {
    if (may_be_best(t) && (!best || ranks_before(t, *best, goal))) best = &t;
  }
  return best ? best - trials.data() : -1;
}

SweepResult run_sweep(const SweepConfig& sweep, const TunerOptions& options) {
  return Tuner(sweep, options).run();
}

nlohmann::json results_json(const SweepConfig& sweep, const SweepResult& result, const std::string& dir) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : result.trials) {
    // Files relative to the experiment directory (trial_store.h, trial_export.h).
    const std::string trial = "trials/" + std::to_string(t.id) + "/";
    // A trial has files once a rung of it finished (a trial that failed in its first has none).
    nlohmann::json files = nlohmann::json::object();
    if (t.budget > 0) {
      files = {{"weights", trial + kWeightsFile}, {"state_dict", trial + kStateDictFile}};
      struct stat info {};
      if (dir.empty() || ::stat((dir + "/" + trial + "checkpoint.pt").c_str(), &info) == 0) {
        files["checkpoint"] = trial + "checkpoint.pt";
      }
    }
    trials.push_back({{"id", t.id}, {"params", params_json(t.params)}, {"seed", t.seed}, {"status", t.status},
                      {"budget", t.budget}, {"metric", t.metric}, {"history", t.history}, {"files", files}});
    // Every metric where it ended (Ray Tune's last_result): its last evaluation.
    if (!t.history.empty()) trials.back()["final"] = t.history.back();
    if (t.status == "failed") trials.back()["error"] = t.error;
  }
  nlohmann::json best = nullptr;
  if (result.best >= 0) {
    const auto& b = result.trials[static_cast<std::size_t>(result.best)];
    best = {{"id", b.id}, {"params", params_json(b.params)}, {"metric", b.metric}};
    if (result.best_test) {
      best["test"] = {{"loss", result.best_test->loss}, {"accuracy", result.best_test->accuracy}};
      const auto kind = trainers::find_model(sweep.task.model)->kind;
      if (kind == trainers::TaskKind::kGan) {
        best["test"]["fid"] = result.best_test->fid;  // loss and accuracy: the discriminator's
      } else if (kind != trainers::TaskKind::kClassification) {
        best["test"]["perplexity"] = std::exp(result.best_test->loss);
      }
    }
  }
  return {{"format", 1},
          {"name", sweep.name},
          {"finished", result.finished},
          {"metric", {{"name", sweep.metric.name}, {"goal", to_string(sweep.metric.goal)}}},
          {"trials", trials},
          {"best", best}};
}

}  // namespace hfta::core
