#include "tuner_impl.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "hfta/core/trial_export.h"
#include "hfta/fusion/device_memory.h"
#include "hfta/trainers/batch_stream.h"

namespace hfta::core::tuning {

// Where each device's arrays take their batches from: one copy of the
// dataset on a GPU, shared by its arrays, where it fits; else the host,
// with batches prepared ahead (trainers/batch_stream.h).
void Tuner::place_data() {
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

// The data an array on `device` cuts its batches from (prefetch_on: how many it prepares ahead).
const trainers::ClassificationData& Tuner::data_on(const c10::Device& device) const {
  auto it = on_device_.find(device_key(device));
  return it == on_device_.end() ? data_ : it->second;
}

// A GPU named without an index is the first: its arrays' parameters say cuda:0.
std::string Tuner::device_key(const c10::Device& device) {
  return device.is_cpu() ? "cpu" : c10::Device(device.type(), device.has_index() ? device.index() : 0).str();
}

// The rung whose checkpoint holds the trial's final model: its last that did
// not fail (a trial that stopped inside it reached less than its budget).
double Tuner::final_rung(std::int64_t id) const {
  double rung = 0;
  if (auto it = rungs_.find(id); it != rungs_.end()) {
    for (const auto& r : it->second) {
      if (r.status != "failed") rung = std::max(rung, r.budget);
    }
  }
  return rung;
}

// The trial's final model on the test split (held out from every search decision).
std::optional<TestMetrics> Tuner::test_metrics(const TrialRecord& r) {
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
    // Changed since its rung wrote it (LibTorch would read many a damaged file, and score it).
    std::string problem;
    if (const RungResult* rung = finished(r.id, final_rung(r.id)); rung && !store_.intact_weights(r.id, *rung, &problem)) {
      progress_.message("trial " + std::to_string(r.id) + ": " + problem + ", so no test evaluation");
      return std::nullopt;
    }
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
  return TestMetrics{m.val_loss, m.val_accuracy, m.val_fid, m.val_rmse, m.val_mae, m.val_r2,
                     m.val_f1, m.val_balanced_accuracy, m.val_auc, m.val_average_precision};
}

}  // namespace hfta::core::tuning
