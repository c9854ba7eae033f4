// Sizes arrays for one sweep on one device: a memory model per fusion key, first
// estimated from the model's parameter and activation counts, then refined by
// measured peaks, out-of-memory events and measured throughput.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "hfta/core/sweep_config.h"
#include "hfta/fusion/memory_model.h"
#include "hfta/search/search_space.h"

namespace hfta::core {

class ArraySizer {
 public:
  /// `available_bytes`: the device's free memory; arrays plan within
  /// fusion.memory_fraction of it.
  ArraySizer(const SweepConfig& sweep, double available_bytes);

  /// The most models an array of this key may hold: the memory model's answer
  /// within the budget, capped by fusion.max_array and by throughput saturation.
  /// Keys without a memory model yet get max_array.
  std::int64_t capacity(const std::string& key, const search::Config& example);

  /// Predicted bytes of an array of `models`, when the key has a memory model.
  std::optional<double> predicted_bytes(const std::string& key, const search::Config& example,
                                        std::int64_t models);

  /// Bytes of an array of `models` as the parameter and activation counts
  /// estimate them, whatever was measured since (nullopt: unknown).
  std::optional<double> estimated_bytes(const search::Config& example, std::int64_t models) const;

  /// A measured peak of an array of `models` of this key.
  void observe_peak(const std::string& key, std::int64_t models, double bytes);
  /// An array of `models` of this key ran out of memory.
  void observe_out_of_memory(const std::string& key, std::int64_t models);
  /// Models per second measured for an array of `models` of this key.
  void observe_throughput(const std::string& key, std::int64_t models, double models_per_second);

  double budget_bytes() const { return budget_; }
  /// `bytes` of the memory measured free went to something else (the dataset's copy on the device).
  void reserve(double bytes);

 private:
  fusion::MemoryModel* model(const std::string& key, const search::Config& example);
  std::optional<fusion::MemoryModel> estimate(const search::Config& example) const;

  const SweepConfig& sweep_;
  double budget_;
  std::map<std::string, std::optional<fusion::MemoryModel>> models_;
  std::map<std::string, fusion::ThroughputCurve> throughput_;
};

}  // namespace hfta::core
