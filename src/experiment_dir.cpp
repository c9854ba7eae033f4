#include "hfta/core/experiment_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hfta::core {

namespace {

std::string cause() { return std::strerror(errno); }

void sync_directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = cause();
    if (fd >= 0) ::close(fd);
    throw StorageError("cannot sync " + dir + ": " + why);
  }
  ::close(fd);
}

// A whole-file write lock on the open file description (not the process): the
// kernel drops it when the process dies, even by kill -9, so no lock is stale;
// and unlike flock, another process can ask who holds it without taking it.
struct flock whole_file(short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  return l;
}

// The pid a lock file names: its leading digits (a holder writes "pid\n" over
// what an earlier holder left, then cuts the file; between the two, the tail
// after the newline is not its pid).
std::string read_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  const std::string text = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  return text.substr(0, text.find_first_not_of("0123456789"));
}

}  // namespace

std::string too_long_for_inside(const std::string& dir) {
  constexpr std::size_t kLongestInside = 64, kLongestPath = 4095;  // PATH_MAX less its NUL
  if (dir.size() + kLongestInside <= kLongestPath) return "";
  return "the path " + dir.substr(0, 40) + "... is " + std::to_string(dir.size()) +
         " bytes long, and the files written inside it add up to " + std::to_string(kLongestInside) +
         " more, past the " + std::to_string(kLongestPath) + " bytes a path may have";
}

std::ifstream open_regular(const std::string& path, std::ios::openmode mode) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    std::ifstream none;
    none.setstate(std::ios::failbit);  // (one never opened reads as good)
    errno = EINVAL;
    return none;
  }
  return std::ifstream(path, mode);
}

void write_atomically(const std::string& path, const std::string& text, const std::string& tag) {
  // "NAME.tmp"; where that passes the 255 bytes a file name may have, NAME
  // is cut and a hash of all of it added, so names alike up to the cut (or
  // one of 255 bytes that ends in .tmp) get temporaries of their own.
  const auto slash = path.rfind('/');
  const std::size_t name = path.size() - (slash == std::string::npos ? 0 : slash + 1);
  std::string tmp = path + tag + ".tmp";
  if (name + tag.size() > 251) {
    char hash[24];
    std::snprintf(hash, sizeof hash, ".%016zx", std::hash<std::string>{}(path));
    tmp = path.substr(0, path.size() - name + 200) + hash + tag.substr(0, 30) + ".tmp";
  }
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw StorageError("cannot write " + path + ": " + cause());  // (the temporary is ours, not a name the user knows)
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
            ::fsync(::fileno(f)) == 0;
  std::string why = ok ? "" : cause();
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    why = cause();
  }
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) why = cause();
    std::remove(tmp.c_str());  // a partial file would keep a full disk full
    throw StorageError("cannot write " + path + ": " + why);
  }
  sync_directory_of(path);
}

// Never removes `from` when the rename fails: it is a checkpoint, maybe the
// only copy of a rung (write_atomically removes its own temporary file).
void rename_durably(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) throw StorageError("cannot rename " + from + " to " + to + ": " + cause());
  sync_directory_of(to);
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path path(dir);
  if (!std::filesystem::is_directory(path.parent_path(), ec)) std::filesystem::create_directory(path.parent_path(), ec);
  if (!ec) std::filesystem::create_directory(path, ec);
  if (ec) throw StorageError("cannot create " + dir + ": " + ec.message());
}

bool out_of_room(int error) { return error == ENOSPC || error == EDQUOT || error == EIO || error == EFBIG; }

namespace {

std::string link_lock(const std::string& path) { return path + " is a symbolic link, not a lock hfta-tune made: remove it"; }

std::string odd_lock(const std::string& path) {
  return path + " is not a regular file, so not a lock hfta-tune made: remove it";
}

// Whether the open lock file holds what a lock holds: a pid and a newline
// (and, cut short by a kill, the tail of a longer one; after a power loss,
// maybe zero bytes: it is never synced). Anything else is someone's file of
// that name, kept.
bool holds_a_pid(int fd) {
  char held[64] = {};
  const ssize_t n = ::pread(fd, held, sizeof held, 0);
  return n >= 0 && n < static_cast<ssize_t>(sizeof held) &&
         std::string(held, static_cast<std::size_t>(n)).find_first_not_of(std::string("0123456789\n\0", 12)) ==
             std::string::npos;
}

std::string foreign_content(const std::string& path) {
  return path + " holds something other than a pid, so it is not a lock hfta-tune made: move it away";
}

}  // namespace

std::optional<ExperimentLock> ExperimentLock::take(const std::string& dir, std::string* holder) {
  const std::string path = dir + "/lock";
  // Never through a link, nor into a FIFO or device: the pid goes over what it names.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0 && errno == ELOOP) throw StorageError(link_lock(path));
  if (fd < 0 && out_of_room(errno)) throw std::runtime_error("cannot write " + path + ": " + cause());
  if (fd < 0) throw StorageError("cannot open " + path + ": " + cause());
  struct stat file {};
  if (::fstat(fd, &file) != 0 || !S_ISREG(file.st_mode)) {
    ::close(fd);
    throw StorageError(odd_lock(path));
  }
  struct flock l = whole_file(F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &l) != 0) {
    if (holder) *holder = read_pid(fd);
    ::close(fd);
    return std::nullopt;
  }
  if (!holds_a_pid(fd)) {
    ::close(fd);
    throw StorageError(foreign_content(path));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()) ||
      ::ftruncate(fd, static_cast<off_t>(pid.size())) != 0) {
    const std::string why = cause();
    ::unlink(path.c_str());  // held: no other process has it; an empty lock file would keep the directory
    ::close(fd);
    // Opened, so the directory is writable: a full disk or an I/O error.
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
  struct stat locked {};
  ::stat(dir.c_str(), &locked);
  return ExperimentLock(fd, locked.st_dev, locked.st_ino);
}

std::optional<std::string> ExperimentLock::holder(const std::string& dir) {
  const int fd = ::open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;  // never run, or unreadable: nobody can be seen holding it
  struct flock l = whole_file(F_WRLCK);
  std::optional<std::string> out;
  if (::fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK) out = read_pid(fd);
  ::close(fd);
  return out;
}

std::string ExperimentLock::foreign(const std::string& dir) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return errno == ELOOP ? link_lock(path) : "";  // none yet (or unreadable: take says why)
  struct stat file {};
  std::string why;
  if (::fstat(fd, &file) != 0 || !S_ISREG(file.st_mode)) {
    why = odd_lock(path);
  } else if (!holds_a_pid(fd)) {
    why = foreign_content(path);
  }
  ::close(fd);
  return why;
}

void ExperimentLock::check_still_at(const std::string& dir) const {
  struct stat held {}, there {};
  if (::fstat(fd_, &held) == 0 && ::stat((dir + "/lock").c_str(), &there) == 0 && held.st_dev == there.st_dev &&
      held.st_ino == there.st_ino) {
    return;
  }
  // The kernel knows where the held file is now: "/new/place/lock", or "... (deleted)".
  std::string now;
  std::array<char, 4096> path{};
  const auto n = ::readlink(("/proc/self/fd/" + std::to_string(fd_)).c_str(), path.data(), path.size() - 1);
  if (n > 0) now.assign(path.data(), static_cast<std::size_t>(n));
  const std::string lock = "/lock";
  const bool found = now.size() > lock.size() && now.compare(now.size() - lock.size(), lock.size(), lock) == 0;
  if (found) {
    throw DirectoryMoved(dir + " is no longer the directory this run locked (moved to " +
                             now.substr(0, now.size() - lock.size()) + ")",
                         dir, now.substr(0, now.size() - lock.size()));
  }
  struct stat still {};
  if (::stat(dir.c_str(), &still) == 0 && still.st_dev == dir_device_ && still.st_ino == dir_inode_) {
    // Only the lock file went: the directory is as it was, but a second run could take it now.
    throw DirectoryMoved(dir + "/lock, this run's lock, was removed or replaced", dir, dir);
  }
  throw DirectoryMoved(dir + " is no longer the directory this run locked (removed or replaced)", dir, "");
}

DirectoryMoved::DirectoryMoved(const std::string& what, const std::string& dir, std::string now_at)
    : StorageError(what + ": stopped, rather than write a new " + dir + " that holds part of the sweep"),
      now(std::move(now_at)) {}

ExperimentLock::ExperimentLock(ExperimentLock&& other) noexcept
    : fd_(other.fd_), dir_device_(other.dir_device_), dir_inode_(other.dir_inode_) {
  other.fd_ = -1;
}

ExperimentLock::~ExperimentLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<nlohmann::json> read_results(const std::string& dir) {
  const std::string path = dir + "/results.json";
  auto damaged = [&](const std::string& why) { return DamagedResults(path + " is damaged (" + why + ")"); };
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::not_found) return std::nullopt;
  if (type != std::filesystem::file_type::regular) throw damaged("not a file");
  std::ifstream in(path);
  if (!in) throw damaged("cannot be read: " + cause());
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw damaged("not JSON: truncated or edited");
  // What status and export read of it.
  bool ok = j.is_object() && j.contains("format") && j["format"] == 1 && j.contains("metric") &&
            j["metric"].is_object() && j["metric"].contains("name") && j["metric"]["name"].is_string() &&
            j.contains("trials") && j["trials"].is_array() && j.contains("best") &&
            (j["best"].is_null() || (j["best"].is_object() && j["best"].contains("id") && j["best"].contains("metric")));
  // metric.target's outcome, where the sweep has one (status prints it).
  if (ok && j.contains("target_reached")) {
    const auto& t = j["target_reached"];
    ok = j["metric"].contains("target") && j["metric"]["target"].is_number() &&
         (t.is_null() || (t.is_object() && t.contains("id") && t["id"].is_number_unsigned() && t.contains("metric") &&
                          t["metric"].is_number() && t.contains("budget") && t["budget"].is_number()));
  }
  // Each trial's fields of the types run writes (an edit that gives an id a
  // string, or a parameter a list, is damage, not a value to pass on).
  auto number_or_null = [](const nlohmann::json& v) { return v.is_number() || v.is_null(); };
  for (std::size_t i = 0; ok && i < j["trials"].size(); ++i) {
    const auto& t = j["trials"][i];
    ok = t.is_object() && t.contains("status") && t["status"].is_string() && t.contains("params") &&
         t["params"].is_object() && t.contains("id") && t["id"].is_number_unsigned() && t.contains("seed") &&
         t["seed"].is_number_unsigned() && t.contains("budget") && number_or_null(t["budget"]) &&
         t.contains("metric") && number_or_null(t["metric"]) && (!t.contains("history") || t["history"].is_array());
    if (ok) {
      for (const auto& p : t["params"]) ok = ok && p.is_primitive() && !p.is_null();
    }
  }
  if (!ok) throw damaged("not results of format 1");
  return j;
}

namespace {

std::string csv_field(const nlohmann::json& v) {
  // No value, as JSON writes a NaN (null): an empty field. (Results built in
  // memory, for a sweep not finished, still hold the NaN.)
  if (v.is_null() || (v.is_number_float() && std::isnan(v.get<double>()))) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string results_csv(const nlohmann::json& results, const std::vector<std::string>& parameters, bool parents) {
  // Final metrics recorded since 2026-12-07 go last, after every column before
  // them, so that a reader by position keeps working.
  static const std::set<std::string> kLater = {"val_auc", "val_average_precision", "val_balanced_accuracy", "val_f1"};
  std::set<std::string> params(parameters.begin(), parameters.end()), finals, later_finals;
  bool sized = false;
  for (const auto& t : results.at("trials")) {
    parents |= t.contains("parent");
    sized |= t.contains("model_params");
    for (const auto& [k, v] : t.at("params").items()) params.insert(k);
    if (t.contains("final") && t.at("final").is_object()) {
      for (const auto& [k, v] : t.at("final").items()) (kLater.count(k) ? later_finals : finals).insert(k);
    }
  }
  const nlohmann::json best_id = results.at("best").is_null() ? nlohmann::json() : results.at("best").at("id");
  // Several objectives: each one's value, and whether the trial is on the Pareto front.
  std::vector<std::string> objectives;
  std::set<std::int64_t> front;
  if (results.contains("objectives")) {
    for (const auto& o : results.at("objectives")) objectives.push_back(o.at("name"));
    for (const auto& t : results.at("pareto_front")) front.insert(t.at("id").get<std::int64_t>());
  }
  std::ostringstream out;
  out << "id,status,budget,metric,seed";
  for (const auto& p : params) out << "," << csv_field(p);
  // Columns added later go last, so that a reader by position keeps working.
  out << ",best,weights,state_dict,error,checkpoint";
  for (const auto& f : finals) out << "," << csv_field("final_" + f);
  if (parents) out << ",parent,parent_budget";
  for (const auto& o : objectives) out << "," << csv_field("objective_" + o);
  if (!objectives.empty()) out << ",pareto";
  const bool constrained = results.contains("constraints");
  if (constrained) out << ",feasible";
  if (sized) out << ",model_params";
  for (const auto& f : later_finals) out << "," << csv_field("final_" + f);
  out << "\n";
  for (const auto& t : results.at("trials")) {
    out << t.at("id") << "," << csv_field(t.at("status")) << "," << t.at("budget") << "," << csv_field(t.at("metric")) << ","
        << t.at("seed");
    for (const auto& p : params) out << "," << (t.at("params").contains(p) ? csv_field(t.at("params").at(p)) : "");
    out << "," << (t.at("id") == best_id ? "true" : "false");
    const nlohmann::json files = t.value("files", nlohmann::json::object());
    for (const char* f : {"weights", "state_dict"}) out << "," << (files.contains(f) ? csv_field(files.at(f)) : "");
    // (A failed trial's message, or where and why a diverged one diverged.)
    out << "," << csv_field(t.value("error", t.value("divergence", nlohmann::json())));
    out << "," << (files.contains("checkpoint") ? csv_field(files.at("checkpoint")) : "");
    const nlohmann::json final_metrics = t.value("final", nlohmann::json::object());
    for (const auto& f : finals) out << "," << (final_metrics.contains(f) ? csv_field(final_metrics.at(f)) : "");
    if (parents && t.contains("parent")) out << "," << t.at("parent").at("trial") << "," << t.at("parent").at("budget");
    if (parents && !t.contains("parent")) out << ",,";
    const nlohmann::json values = t.value("objectives", nlohmann::json::object());
    for (const auto& o : objectives) out << "," << (values.contains(o) ? csv_field(values.at(o)) : "");
    if (!objectives.empty()) out << "," << (front.count(t.at("id").get<std::int64_t>()) ? "true" : "false");
    if (constrained) out << "," << csv_field(t.value("feasible", nlohmann::json()));
    if (sized) out << "," << csv_field(t.value("model_params", nlohmann::json()));
    for (const auto& f : later_finals) out << "," << (final_metrics.contains(f) ? csv_field(final_metrics.at(f)) : "");
    out << "\n";
  }
  return out.str();
}

}  // namespace hfta::core
