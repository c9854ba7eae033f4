// The experiment directory of a sweep: its files, its lock, and its results.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hfta::core {

/// The experiment directory could not be written (a full disk, an I/O error,
/// no permission): the sweep stops, resumable, rather than blaming a trial.
struct StorageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The experiment directory is no longer the one the run locked: moved
/// (`now` says where), removed or replaced while the sweep ran. Writing on
/// would make a new directory of the same name, the sweep split in two.
struct DirectoryMoved : StorageError {
  /// `what` happened to `dir`, which is at `now_at` now.
  DirectoryMoved(const std::string& what, const std::string& dir, std::string now_at);
  std::string now;  ///< where the locked directory is now; "" where it was removed
};

/// Writes a file so that a crash leaves either the old or the new one: write,
/// fsync, rename, fsync the directory. Throws StorageError naming the file
/// and the cause, leaving no temporary file behind.
/// `tag` goes into the temporary's name (NAME<tag>.tmp): writers that may
/// race on one path (exports to the user's file) each give their own.
void write_atomically(const std::string& path, const std::string& text, const std::string& tag = "");

/// Why `dir` is too long a path for the files hfta-tune writes inside it
/// (trials/<id>/checkpoint.next.pt.tmp, up to 64 bytes more), or "" where
/// they fit within the 4095 bytes a path may have. Checked before a run or
/// resume writes anything: otherwise it failed mid-sweep, and every resume again.
std::string too_long_for_inside(const std::string& dir);

/// `path` opened for reading where it is a regular file (through links);
/// otherwise a stream that failed. A FIFO or device put in an experiment
/// directory from outside would block a read of it for ever.
std::ifstream open_regular(const std::string& path, std::ios::openmode mode = std::ios::in);

/// rename(from, to), then fsync of to's directory, so the new name survives
/// a power loss. Throws StorageError, leaving `from` where it was.
void rename_durably(const std::string& from, const std::string& to);

/// Makes `dir` and, where missing, its parent (trials/<id> and trials/), but
/// never the experiment directory above them: one that moved away mid-run is
/// not made again, half a sweep in each. Throws StorageError.
void make_directories(const std::string& dir);

/// Whether a write failed for want of room or by the device (ENOSPC, EDQUOT,
/// EIO, EFBIG past `ulimit -f`): a failure of the run, where EACCES or EROFS is the user's to fix.
bool out_of_room(int error);

/// An exclusive lock on DIR/lock held for the life of the object: a second run
/// or resume on the same directory refuses, naming the holder's pid.
class ExperimentLock {
 public:
  /// Takes the lock, or returns nullopt with `holder` set to the holding pid ("" if unknown).
  /// Throws std::runtime_error where it cannot be written for want of room
  /// (out_of_room: a full disk, an I/O error), a failure of the run, and
  /// StorageError where it cannot be opened otherwise (a directory not
  /// writable, a read-only filesystem: the user's to fix).
  static std::optional<ExperimentLock> take(const std::string& dir, std::string* holder);
  /// The holder's pid ("" if unknown) when a process holds DIR's lock, without
  /// taking it or writing anything (status reads a directory it may not own).
  static std::optional<std::string> holder(const std::string& dir);
  /// Why DIR/lock is no lock hfta-tune made (a link, a FIFO, someone's own file),
  /// so that take() would refuse it; "" where it is one, or there is none.
  static std::string foreign(const std::string& dir);
  /// Throws DirectoryMoved where DIR/lock is not the file this lock holds.
  void check_still_at(const std::string& dir) const;
  ExperimentLock(ExperimentLock&& other) noexcept;
  ExperimentLock& operator=(ExperimentLock&&) = delete;
  ~ExperimentLock();

 private:
  ExperimentLock(int fd, std::uint64_t dir_device, std::uint64_t dir_inode)
      : fd_(fd), dir_device_(dir_device), dir_inode_(dir_inode) {}
  int fd_ = -1;
  std::uint64_t dir_device_ = 0, dir_inode_ = 0;  ///< the directory locked, to tell it from one made in its place
};

/// results.json was found but holds no results of format 1 (truncated,
/// edited, a directory): `resume` writes it again from the trials' files.
struct DamagedResults : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// DIR/results.json, when the sweep finished (nullopt: there is none). Throws
/// DamagedResults, naming the file and what is wrong with it.
std::optional<nlohmann::json> read_results(const std::string& dir);

/// Every trial as CSV: id, status, budget, metric, seed, one column per
/// parameter (empty where a trial lacks it), whether it is the best, and its
/// exported weights (C++ and Python files, relative to the directory).
/// `parameters` (the sweep's names) and `parents` (population based
/// training's) give those columns before any trial has them, so that the
/// snapshots of a sweep in progress line up with its final export.
std::string results_csv(const nlohmann::json& results, const std::vector<std::string>& parameters = {},
                        bool parents = false);

}  // namespace hfta::core
