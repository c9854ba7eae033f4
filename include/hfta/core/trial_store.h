// Each trial's files in the experiment directory: DIR/trials/<id>/trial.json
// (params, seed, every rung result, metric history) and checkpoint.pt (weights,
// optimizer state, position), written atomically at every rung boundary.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/modules/container/sequential.h>

#include "hfta/core/trial_export.h"
#include "hfta/core/tuner.h"
#include "hfta/fusion/fused_optimizer.h"
#include "hfta/trainers/array_trainer.h"

namespace hfta::core {

/// One finished rung of a trial.
struct RungResult {
  double budget = 0;
  double metric = 0;
  std::string status = "completed";
  std::int64_t steps = 0;       ///< training steps reached
  std::uint32_t checkpoint_crc = 0;  ///< CRC-32 of checkpoint.pt as written after this rung
  trainers::SlotProgress progress;   ///< early stopping and plateau state at the rung's end
  /// The budget trained: `budget`, or less for a trial that stopped or
  /// diverged inside the rung (where it did). Trials of files written before
  /// this field read `budget`.
  double reached = 0;
  /// With several objectives, their values at the rung's end (sweep_config.h).
  std::vector<double> objectives;
  double violation = 0;  ///< of the sweep's constraints at the rung's end (sweep_config.h)
  /// The parameters of the trial's plain model, as exported (0: a rung
  /// written before this field).
  std::int64_t model_params = 0;
  /// CRC-32 of weights.pt and state_dict.pt as written after this rung (0: a
  /// rung written before these fields).
  ExportedWeights weights;
};

/// A rung in progress: where a trial stood at an evaluation point inside it.
struct PartialRung {
  double from_budget = 0, to_budget = 0;  ///< the rung's interval
  std::int64_t steps = 0;                 ///< training steps reached
  trainers::SlotProgress progress;        ///< early stopping and plateau state
  std::uint32_t checkpoint_crc = 0;       ///< CRC-32 of partial.pt
};

/// What a trial's directory says.
struct StoredTrial {
  TrialRecord record;
  std::vector<RungResult> rungs;
  std::optional<PartialRung> partial;  ///< the rung it was in when the run stopped, if checkpointed
};

/// The budget a trial reached: the most its rungs that did not fail reached (0: none did).
double reached_budget(const std::vector<RungResult>& rungs);

/// TrialRecord::rung_metrics of a trial's rungs (those that did not fail).
std::map<double, double> rung_metrics(const std::vector<RungResult>& rungs);

/// The rungs a trial trained itself: all but a PBT clone's up to its parent's
/// budget, which are the parent's (and counted there).
std::size_t own_rungs(const StoredTrial& trial);

/// CRC-32 of `bytes`, as checkpoints and warm_start.json are checked by.
std::uint32_t crc32_of(const std::string& bytes);

class TrialStore {
 public:
  explicit TrialStore(std::string dir) : dir_(std::move(dir)) {}

  /// Writes the trial's checkpoint, then trial.json with this rung appended
  /// (its CRC), each atomically: a crash leaves the previous rung's files.
  /// Returns the rung as recorded (with its CRC).
  RungResult save(const TrialRecord& record, std::vector<RungResult> rungs, RungResult latest,
            const torch::nn::Sequential& model, const fusion::SlotState& optimizer);

  /// Writes partial.pt (model and optimizer mid-rung), then trial.json naming it
  /// (history so far, `partial` with the CRC). A rung's save removes it.
  void save_partial(const TrialRecord& record, const std::vector<RungResult>& rungs, PartialRung partial,
                    const torch::nn::Sequential& model, const fusion::SlotState& optimizer);

  /// Records that the trial failed at `budget` (its error in record.error):
  /// trial.json with a "failed" rung appended; no checkpoint is written.
  void save_failure(const TrialRecord& record, std::vector<RungResult> rungs, double budget);

  /// Every trial found under DIR/trials. A trial.json that cannot be read
  /// (damaged outside hfta-tune: it is written atomically) is left out, and
  /// `damaged`, when given, hears which and why: that trial trains again.
  std::map<std::int64_t, StoredTrial> load_all(
      const std::function<void(const std::string&)>& damaged = nullptr) const;

  /// Reads the checkpoint of a trial's rung whose CRC is `expected_crc` (its
  /// last rung's, or the one before) into `model` (already built with the
  /// right shape) and `optimizer`; false with `problem` set when it is missing
  /// or its CRC does not match (truncated or corrupt).
  bool load_checkpoint(std::int64_t id, std::uint32_t expected_crc, torch::nn::Sequential& model,
                       fusion::SlotState& optimizer, std::string* problem) const;
  /// The path of the intact checkpoint of the trial's rung whose CRC is
  /// `expected_crc` (as load_checkpoint finds it), without loading it; nullopt
  /// with `problem` set when there is none.
  std::optional<std::string> intact_checkpoint(std::int64_t id, std::uint32_t expected_crc,
                                               std::string* problem) const;
  /// On resume, the files of a trial as trial.json names them, whether or
  /// not it trains again: finishes the moves a kill cut short (the last
  /// rung's checkpoint.next.pt into place, the one it replaces to
  /// checkpoint.prev.pt; a partial.next.pt trial.json names), and removes
  /// what it does not name (a next file of a write it never recorded, a
  /// mid-rung checkpoint of a rung since finished), so that results.json's
  /// files are the trial's as an uninterrupted run leaves them.
  void settle(const StoredTrial& trial) const;
  /// Removes the trial's checkpoints (rung and mid-rung), which only more
  /// training reads; its weights stay. Returns the bytes freed.
  std::uintmax_t drop_checkpoints(std::int64_t id) const;
  /// Whether the trial's weights.pt is as its rung wrote it (`rung.weights`;
  /// a rung from before they were recorded: taken as it is); `problem` says why not.
  bool intact_weights(std::int64_t id, const RungResult& rung, std::string* problem) const;
  /// Whether the trial has a rung checkpoint on disk (drop_checkpoints removes them).
  bool has_checkpoint(std::int64_t id) const;

  /// The same for a partial rung's checkpoint.
  bool load_partial(std::int64_t id, const PartialRung& partial, torch::nn::Sequential& model,
                    fusion::SlotState& optimizer, std::string* problem) const;

 private:
  std::string trial_dir(std::int64_t id) const { return dir_ + "/trials/" + std::to_string(id); }
  void write_trial_json(const TrialRecord& record, const std::vector<RungResult>& rungs,
                        const PartialRung* partial = nullptr) const;
  /// Whether the file at `path` has the CRC `expected_crc`; `problem` says why not.
  static bool intact(const std::string& path, std::uint32_t expected_crc, std::string* problem);
  /// Reads a checkpoint into `model` (built with the right shape) and `optimizer`.
  static void read_archive(const std::string& path, torch::nn::Sequential& model, fusion::SlotState& optimizer);
  std::string dir_;
};

}  // namespace hfta::core
