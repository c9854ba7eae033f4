// The experiment directory of a sweep: its files, its lock, and its results.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hfta::core {

/// Writes a file so that a crash leaves either the old or the new one: write,
/// fsync, rename. Throws std::runtime_error naming the file.
void write_atomically(const std::string& path, const std::string& text);

/// An exclusive lock on DIR/lock held for the life of the object: a second run
/// or resume on the same directory refuses, naming the holder's pid.
class ExperimentLock {
 public:
  /// Takes the lock, or returns nullopt with `holder` set to the holding pid ("" if unknown).
  static std::optional<ExperimentLock> take(const std::string& dir, std::string* holder);
  ExperimentLock(ExperimentLock&& other) noexcept;
  ExperimentLock& operator=(ExperimentLock&&) = delete;
  ~ExperimentLock();

 private:
  explicit ExperimentLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// DIR/results.json, when the sweep finished.
std::optional<nlohmann::json> read_results(const std::string& dir);

/// Every trial as CSV: id, status, budget, metric, seed, one column per
/// parameter (empty where a trial lacks it), whether it is the best, and its
/// exported weights (C++ and Python files, relative to the directory).
std::string results_csv(const nlohmann::json& results);

}  // namespace hfta::core
