#include "tuner_impl.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <new>
#include <sstream>

#include <c10/util/Exception.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/interrupt.h"
#include "hfta/core/oom_retry.h"
#include "hfta/fusion/device_memory.h"

namespace hfta::core::tuning {
namespace {

constexpr std::int64_t kProgressSteps = 50;  // training steps between progress updates

// Why the trainer called a trial diverged at the evaluation `m`
// (array_trainer.cpp), for results.json: what was not a number, or past
// the sweep's bound.
std::string divergence_of(const trainers::SlotMetrics& m, double bound) {
  auto said = [](double v) { return std::isnan(v) ? std::string("NaN") : v > 0 ? "infinite" : "-infinite"; };
  const std::string at = "at step " + std::to_string(m.step) + ", its ";
  if (!std::isfinite(m.train_loss)) return at + "training loss was " + said(m.train_loss);
  if (!std::isfinite(m.val_loss)) return at + "validation loss was " + said(m.val_loss);
  if (bound > 0 && m.train_loss > bound) {
    std::ostringstream loss;
    loss << m.train_loss << " passed early_stopping.divergence " << bound;
    return at + "training loss " + loss.str();
  }
  return at + "discriminator's training loss was " + said(m.d_loss);
}

// Runs f when it leaves scope, by return or by exception.
struct OnExit {
  std::function<void()> f;
  ~OnExit() { f(); }
};

}  // namespace

// Trains an array; when it throws (not for memory: that splits it), the trials
// not yet reported are retried in halves until the one that throws is alone,
// and it is marked failed with the message. The others train as usual. A
// storage error is no trial's fault: it stops the sweep, resumable.
void Tuner::train_isolating_failures(const search::ArrayPlan& array, Reports& reports, std::size_t worker) {
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
    if (rest.trial_ids.size() == 1) {
      const std::string why = is_out_of_memory(e) ? out_of_memory(rest, worker, e) : e.what();
      return fail(rest.trial_ids.front(), rest.to_budget, why, reports);
    }
    const auto [first, second] = search::split_in_two(rest);
    train_isolating_failures(first, reports, worker);
    train_isolating_failures(second, reports, worker);
  }
}

// The array without the trials an earlier attempt at it already reported
// (an attempt can throw while it reports, after some trials are on disk).
// (Nor the trials whose checkpoint was lost: train_lost_again trains them.)
search::ArrayPlan Tuner::unreported(const search::ArrayPlan& array) {
  search::ArrayPlan rest = array;
  rest.trial_ids.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::int64_t id : array.trial_ids) {
    if (!reported_.count({id, array.to_budget}) && !lost_.count(id)) rest.trial_ids.push_back(id);
  }
  return rest;
}

// Why a model that ran out of memory alone failed, and what would help
// (std::bad_alloc alone names neither). Its size as its parameter and
// activation counts estimate it: the sizer's model of the key has learnt
// from this very failure by now.
std::string Tuner::out_of_memory(const search::ArrayPlan& alone, std::size_t worker, const std::exception& e) {
  auto mib = [](double bytes) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(0) << bytes / (1 << 20) << " MiB";
    return s.str();
  };
  std::string what = e.what();
  what = what.substr(0, what.find('\n'));  // LibTorch's messages go on with a backtrace
  if (dynamic_cast<const std::bad_alloc*>(&e)) what = "a host allocation was refused";  // (its what() is "std::bad_alloc")
  std::string out = "out of memory on " + device_key(device_of(worker)) + " with the model alone (" + what + ")";
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto bytes = sizer_.estimated_bytes(records_.at(alone.trial_ids.front()).params, 1)) {
    out += ": it is estimated at " + mib(*bytes) + ", and arrays are planned within " + mib(sizer_.budget_bytes());
  }
  out += "; make it smaller: its task options or batch_size";
  // Workers that share a device share its memory too.
  if (options_.workers > static_cast<int>(options_.devices.size())) out += " (or give fewer --workers)";
  return out;
}

void Tuner::fail(std::int64_t id, double budget, const std::string& message, Reports& reports) {
  std::lock_guard<std::mutex> lock(mutex_);
  TrialRecord& r = records_.at(id);
  r.status = "failed";
  r.error = message;
  r.budget = reached_budget(rungs_[id]);  // where its last rung left it, not where this one aimed
  r.metric = std::numeric_limits<double>::quiet_NaN();
  r.objectives.clear();
  r.violation = 0;
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

// Holds mutex_ but while it trains (training touches nothing the other
// workers share, and no global random stream: building, initialising,
// evaluating and compacting do, so they stay under the lock).
void Tuner::train_array(const search::ArrayPlan& array, Reports& reports, std::size_t worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_if_interrupted();
  if (abandoned_) throw Interrupted();  // (an array retried in halves, after another worker failed the sweep)
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
    if (!(interrupted() || abandoned_) || step >= to) return;
    if (!options_.dir.empty() && step > from) checkpoint_mid_rung(trainer, array, step);
    throw Interrupted();
  };
  std::int64_t done = from;  // (short of `to` where every trial stopped: the steps the line reports)
  while (done < to) {
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
      if (faults_.time_up_after_pieces > 0 && --faults_.time_up_after_pieces == 0) time_is_up();
      if (piece + n < chunk) {
        checkpoint_if_due(done + piece + n);
        stop_if_interrupted_at(done + piece + n);
      }
    }
    done += chunk;
    for (const auto& m : trainer.evaluate(/*scheduled=*/done % every == 0)) {
      latest[m.trial_id] = m;
      nlohmann::json point = {{"step", m.step}, {"train_loss", m.train_loss}, {"val_loss", m.val_loss}};
      if (regression_) {
        point["val_rmse"] = m.val_rmse, point["val_mae"] = m.val_mae, point["val_r2"] = m.val_r2;
      } else {
        point["val_accuracy"] = m.val_accuracy;
      }
      if (language_model_) point["val_perplexity"] = m.val_perplexity;
      if (classifier_) point["val_f1"] = m.val_f1, point["val_balanced_accuracy"] = m.val_balanced_accuracy;
      if (classifier_ && sweep_.names_metric("val_auc")) point["val_auc"] = m.val_auc;
      if (classifier_ && sweep_.names_metric("val_average_precision")) {
        point["val_average_precision"] = m.val_average_precision;
      }
      if (gan_) {
        // train_loss is the generator's; g_loss, the metric's name for it, too.
        point["d_loss"] = m.d_loss, point["g_loss"] = m.train_loss, point["val_fid"] = m.val_fid;
      }
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
  progress_.array_finished(models, array.from_budget, array.to_budget, done - from,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), best);
}

// Each running trial's model, optimizer, history, early-stopping state and
// training losses since its last evaluation, at step `done` of its rung.
void Tuner::checkpoint_mid_rung(trainers::ArrayTrainer& trainer, const search::ArrayPlan& array, std::int64_t done) {
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

// Saves and reports the rung each trial of `array` reached (`latest`: its
// last evaluation; `to`: the rung's last step), returning the best metric shown.
double Tuner::report_rung(const search::ArrayPlan& array, trainers::ArrayTrainer& trainer,
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
    if (r.status == "diverged") r.error = divergence_of(m, sweep_.early_stopping.divergence);
    // Only trials still running go on to another rung, and only they hold a slot.
    const auto progress = m.status == trainers::SlotStatus::kRunning ? trainer.progress(id) : trainers::SlotProgress{};
    Saved saved{trainer.extract(id), trainer.export_optimizer(id), to, progress};
    r.objectives = objectives_of(m, saved.model);
    r.violation = violation_of(m, saved.model);
    r.model_params = static_cast<std::int64_t>(measured(m, saved.model, "params"));
    if (!(repairing_ && r.status != "completed")) {  // (as the rung written below)
      r.rung_metrics[array.to_budget] = r.status == "diverged" ? std::numeric_limits<double>::quiet_NaN() : r.metric;
    }
    // A lost rung trained again that stopped early this time (only where
    // training is not deterministic) is not written: repaired_or_failed
    // writes the trial's failure instead, in one step, as it does for one
    // that throws.
    if (!options_.dir.empty() && !(repairing_ && r.status != "completed")) {
      check_directory();
      RungResult rung{array.to_budget, r.metric, r.status, ran_through ? to : m.step, 0, progress, r.budget, r.objectives,
                      r.violation, r.model_params};
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
                                                                             : search::TrialStatus::kDiverged,
                               r.objectives, r.violation};
    reported_.insert({m.trial_id, array.to_budget});
    reports.push_back([this, result, params = r.params] {
      tell_scheduler(result);
      observe(result.trial_id, params, result);
    });
    progress_.result(m.trial_id, shown_metric(r));  // shown now: the display does not steer anything
    if (std::isnan(best) || search::better(shown_metric(r), best, sweep_.metric.goal)) best = shown_metric(r);
  }
  return best;
}

// The metric the progress line may call best: none for a diverged trial,
// which is never best (best_trial), however good its last evaluation looked.
double Tuner::shown_metric(const TrialRecord& r) {
  return r.status == "diverged" || r.violation != 0 ? std::numeric_limits<double>::quiet_NaN() : r.metric;
}

double Tuner::metric_named(const trainers::SlotMetrics& m, const std::string& name) {
  if (name == "val_loss") return m.val_loss;
  if (name == "val_perplexity") return m.val_perplexity;
  if (name == "train_loss" || name == "g_loss") return m.train_loss;
  if (name == "d_loss") return m.d_loss;
  if (name == "val_fid") return m.val_fid;
  if (name == "val_rmse") return m.val_rmse;
  if (name == "val_mae") return m.val_mae;
  if (name == "val_r2") return m.val_r2;
  if (name == "val_f1") return m.val_f1;
  if (name == "val_balanced_accuracy") return m.val_balanced_accuracy;
  if (name == "val_auc") return m.val_auc;
  if (name == "val_average_precision") return m.val_average_precision;
  return m.val_accuracy;
}

double Tuner::measured(const trainers::SlotMetrics& m, const torch::nn::Sequential& model, const std::string& name) {
  if (name != "params") return metric_named(m, name);
  // The plain model's, as exported (a GAN's: generator and discriminator).
  double count = 0;
  for (const auto& p : model->parameters()) count += static_cast<double>(p.numel());
  return count;
}

std::vector<double> Tuner::objectives_of(const trainers::SlotMetrics& m, const torch::nn::Sequential& model) const {
  std::vector<double> out;
  for (const auto& o : sweep_.objectives) out.push_back(measured(m, model, o.name));
  return out;
}

double Tuner::violation_of(const trainers::SlotMetrics& m, const torch::nn::Sequential& model) const {
  double out = 0;
  for (const auto& c : sweep_.constraints) out += c.violation(measured(m, model, c.name));
  return out;
}

}  // namespace hfta::core::tuning
