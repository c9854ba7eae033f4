// The tuner of run_sweep (tuner.h): one class, its members defined by concept
// in the tuner*.cpp files each section below names. Private to src/.
#pragma once

#include <cstdint>
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "hfta/core/array_sizer.h"
#include "hfta/core/kept_measurements.h"
#include "hfta/core/progress.h"
#include "hfta/core/trial_settings.h"
#include "hfta/core/trial_store.h"
#include "hfta/core/tuner.h"
#include "hfta/fusion/fused_optimizer.h"
#include "hfta/search/packer.h"
#include "hfta/search/scheduler.h"
#include "hfta/search/searcher.h"
#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/catalog.h"
#include "hfta/trainers/model_zoo.h"
#include "injected_faults.h"

namespace hfta::core::tuning {

using search::Config;

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

class Tuner {
  // What one array tells the scheduler and searcher, applied after its round (train_arrays).
  using Reports = std::vector<std::function<void()>>;

 public:
  Tuner(const SweepConfig& sweep, const TunerOptions& options);
  SweepResult run();  ///< to the scheduler's end; throws Interrupted when a signal or time limit stops it

 private:
  // tuner.cpp: the rounds, and what the scheduler and searcher are told.
  void train_arrays(const std::vector<search::ArrayPlan>& packed);
  const Config& config_of(std::int64_t id);
  bool inherit(std::int64_t child, const search::Parent& parent, double to);
  std::shared_ptr<trainers::ArrayClassifier> build(std::int64_t models, const Config& c,
                                                   const c10::Device& device = c10::Device(c10::kCPU)) const;
  void tell_scheduler(const search::TrialResult& r);
  std::optional<TargetReached> reached_target() const;
  bool done() const { return scheduler_->finished() || reached_target().has_value(); }
  void report_failure(std::int64_t id, double budget);
  void replay(std::int64_t id, const RungResult& r);
  static double told_searcher(search::TrialStatus status, double metric);
  /// Tells the searcher a result: its metric, or with several objectives their values.
  void observe(std::int64_t id, const search::Config& params, const search::TrialResult& result);
  const RungResult* finished(std::int64_t id, double budget) const;
  std::int64_t trials_done() const;
  void note_population_ended_early();
  void check_directory() const;
  std::string format_budget(double budget) const;
  SweepResult result() const;

  // The device worker `w` trains on: workers are dealt out over the devices in turn.
  const c10::Device& device_of(std::size_t worker) const { return options_.devices.at(worker % options_.devices.size()); }

  // tuner_array.cpp: training one array, its failures isolated, and its rung saved.
  void train_isolating_failures(const search::ArrayPlan& array, Reports& reports, std::size_t worker);
  search::ArrayPlan unreported(const search::ArrayPlan& array);
  std::string out_of_memory(const search::ArrayPlan& alone, std::size_t worker, const std::exception& e);
  void fail(std::int64_t id, double budget, const std::string& message, Reports& reports);
  void train_array(const search::ArrayPlan& array, Reports& reports, std::size_t worker);
  void checkpoint_mid_rung(trainers::ArrayTrainer& trainer, const search::ArrayPlan& array, std::int64_t done);
  double report_rung(const search::ArrayPlan& array, trainers::ArrayTrainer& trainer,
                     const std::map<std::int64_t, trainers::SlotMetrics>& latest, std::int64_t to, Reports& reports);
  static double shown_metric(const TrialRecord& r);
  double metric_of(const trainers::SlotMetrics& m) const { return metric_named(m, sweep_.metric.name); }
  static double metric_named(const trainers::SlotMetrics& m, const std::string& name);
  /// A metric the model measured, or params: the model's parameter count.
  static double measured(const trainers::SlotMetrics& m, const torch::nn::Sequential& model, const std::string& name);
  /// With several objectives, each one's value.
  std::vector<double> objectives_of(const trainers::SlotMetrics& m, const torch::nn::Sequential& model) const;
  /// How far the result breaks the sweep's constraints (0: it meets them).
  double violation_of(const trainers::SlotMetrics& m, const torch::nn::Sequential& model) const;

  // tuner_repair.cpp: checkpoints lost or damaged, and rungs resumed mid-way.
  bool intact(std::int64_t id, double budget);
  Saved load_state(std::int64_t id, double budget);
  void damage_checkpoint(std::int64_t id) const;
  bool repair(std::int64_t id, double budget);
  bool repaired_or_failed(std::int64_t id, double from, double to);
  void train_lost_again();
  std::optional<double> resume_partial(std::int64_t id, double from, double to);

  // tuner_measurements.cpp: how fast arrays train, measured and kept.
  double estimated_seconds(const search::ArrayPlan& a);
  void probe_array_sizes(const std::vector<search::PackItem>& items);
  std::unique_ptr<trainers::ArrayTrainer> make_trainer(const std::string& key,
                                                       const std::shared_ptr<trainers::ArrayClassifier>& model,
                                                       const std::vector<trainers::SlotTrial>& slots,
                                                       trainers::ArrayTrainerOptions o, bool initialise = true);
  void keep_throughput(const std::string& key, const KeptMeasurements::Rates& rates);

  // tuner_directory.cpp: state.json, and checkpoints no longer needed.
  void write_state();
  void check_state();
  void drop_done_checkpoints();

  // tuner_data.cpp: where the data lives, and the test evaluation.
  void place_data();
  const trainers::ClassificationData& data_on(const c10::Device& device) const;
  static std::string device_key(const c10::Device& device);
  double final_rung(std::int64_t id) const;
  std::optional<TestMetrics> test_metrics(const TrialRecord& r);
  std::int64_t prefetch_on(const c10::Device& device) const { return prefetch_.at(device_key(device)); }

  // The tuner's state: workers' threads share it under mutex_.
  const SweepConfig& sweep_;
  TunerOptions options_;
  int threads_per_worker_ = 1;  ///< intra-op threads of each worker (all the cores for one)
  std::mutex mutex_;  ///< the tuner's state, between workers
  /// A worker's array failed the sweep (a full disk, say): the others stop
  /// at their next step as Ctrl-C stops them, rather than train on for
  /// minutes while the process is already failing.
  std::atomic<bool> abandoned_{false};
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
  std::set<std::int64_t> proposed_;  ///< trials the searcher was told of this run (Searcher::proposed)
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
  const bool regression_ = trainers::is_regression_loss(sweep_.task.loss);
  /// Classes of examples (not tokens, not a GAN's): F1 and balanced accuracy are measured too.
  const bool classifier_ = trainers::task_kind(*trainers::find_model(sweep_.task.model), sweep_.task.loss) ==
                           trainers::TaskKind::kClassification;
};

}  // namespace hfta::core::tuning
