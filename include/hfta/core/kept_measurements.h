// Measurements that decide only speed, kept in the experiment directory so that
// a resumed run computes exactly as the interrupted one did: each array shape's
// op strategies (strategies.json) and each fusion key's training rate at
// growing array sizes (throughput.json). A damaged file is reported and its
// measurements are taken again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hfta/fusion/strategy.h"

namespace hfta::core {

/// Model-steps per second at `models` from rates measured at some sizes: linear
/// between two measured sizes, the nearest one's beyond them; 0 when none is.
double rate_at(const std::map<std::int64_t, double>& rates, std::int64_t models);

class KeptMeasurements {
 public:
  using Rates = std::map<std::int64_t, double>;  ///< model-steps per second by array size

  /// `dir` "" keeps them in memory only; `report` says what was damaged.
  KeptMeasurements(std::string dir, std::function<void(const std::string&)> report);

  /// Reads what an earlier run in `dir` kept.
  void load();

  /// The strategies of a fusion key's arrays of `models`, or nullptr when not measured yet.
  const std::vector<fusion::Strategy>* strategies(const std::string& key, std::int64_t models) const;
  void keep_strategies(const std::string& key, std::int64_t models, const std::vector<fusion::Strategy>& chosen);

  const std::map<std::string, Rates>& throughput() const { return throughput_; }
  void keep_throughput(const std::string& key, const Rates& rates);

 private:
  template <typename Use>
  bool read(const std::string& path, Use use);
  void write_strategies() const;
  void write_throughput() const;

  std::string dir_;
  std::function<void(const std::string&)> report_;
  std::map<std::string, std::vector<fusion::Strategy>> strategies_;  ///< by array shape ("<key> B=<models>")
  std::map<std::string, Rates> throughput_;                           ///< by fusion key
};

}  // namespace hfta::core
