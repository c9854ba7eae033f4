// Each trial's files in the experiment directory: DIR/trials/<id>/trial.json
// (params, seed, every rung result, metric history) and checkpoint.pt (weights,
// optimizer state, position), written atomically at every rung boundary.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/nn/modules/container/sequential.h>

#include "hfta/core/tuner.h"
#include "hfta/fusion/fused_optimizer.h"

namespace hfta::core {

/// One finished rung of a trial.
struct RungResult {
  double budget = 0;
  double metric = 0;
  std::string status = "completed";
  std::int64_t steps = 0;       ///< training steps reached
  std::uint32_t checkpoint_crc = 0;  ///< CRC-32 of checkpoint.pt as written after this rung
};

/// What a trial's directory says.
struct StoredTrial {
  TrialRecord record;
  std::vector<RungResult> rungs;
};

class TrialStore {
 public:
  explicit TrialStore(std::string dir) : dir_(std::move(dir)) {}

  /// Writes the trial's checkpoint, then trial.json with this rung appended
  /// (its CRC), each atomically: a crash leaves the previous rung's files.
  /// Returns the rung as recorded (with its CRC).
  RungResult save(const TrialRecord& record, std::vector<RungResult> rungs, RungResult latest,
            const torch::nn::Sequential& model, const fusion::SlotState& optimizer);

  /// Records that the trial failed at `budget` (its error in record.error):
  /// trial.json with a "failed" rung appended; no checkpoint is written.
  void save_failure(const TrialRecord& record, std::vector<RungResult> rungs, double budget);

  /// Every trial found under DIR/trials.
  std::map<std::int64_t, StoredTrial> load_all() const;

  /// Reads a trial's checkpoint into `model` (already built with the right shape)
  /// and `optimizer`; false with `problem` set when it is missing or its CRC does
  /// not match the last rung's (truncated or corrupt).
  bool load_checkpoint(std::int64_t id, std::uint32_t expected_crc, torch::nn::Sequential& model,
                       fusion::SlotState& optimizer, std::string* problem) const;

 private:
  std::string trial_dir(std::int64_t id) const { return dir_ + "/trials/" + std::to_string(id); }
  void write_trial_json(const TrialRecord& record, const std::vector<RungResult>& rungs) const;
  std::string dir_;
};

}  // namespace hfta::core
