#include "hfta/core/experiment_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace hfta::core {

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                  ::fsync(::fileno(f)) == 0;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }
}

std::optional<ExperimentLock> ExperimentLock::take(const std::string& dir, std::string* holder) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    if (holder) *holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
    ::close(fd);
    return std::nullopt;
  }
  // The kernel drops the lock when the process dies, even by kill -9: no stale locks.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    ::close(fd);
    throw std::runtime_error("cannot write " + path);
  }
  return ExperimentLock(fd);
}

ExperimentLock::ExperimentLock(ExperimentLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

ExperimentLock::~ExperimentLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<nlohmann::json> read_results(const std::string& dir) {
  std::ifstream in(dir + "/results.json");
  if (!in) return std::nullopt;
  return nlohmann::json::parse(in);
}

namespace {

std::string csv_field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string results_csv(const nlohmann::json& results) {
  std::set<std::string> params;
  for (const auto& t : results.at("trials")) {
    for (const auto& [k, v] : t.at("params").items()) params.insert(k);
  }
  const nlohmann::json best_id = results.at("best").is_null() ? nlohmann::json() : results.at("best").at("id");
  std::ostringstream out;
  out << "id,status,budget,metric,seed";
  for (const auto& p : params) out << "," << csv_field(p);
  out << ",best,weights,state_dict\n";
  for (const auto& t : results.at("trials")) {
    out << t.at("id") << "," << csv_field(t.at("status")) << "," << t.at("budget") << "," << t.at("metric") << ","
        << t.at("seed");
    for (const auto& p : params) out << "," << (t.at("params").contains(p) ? csv_field(t.at("params").at(p)) : "");
    out << "," << (t.at("id") == best_id ? "true" : "false");
    const nlohmann::json files = t.value("files", nlohmann::json::object());
    for (const char* f : {"weights", "state_dict"}) out << "," << (files.contains(f) ? csv_field(files.at(f)) : "");
    out << "\n";
  }
  return out.str();
}

}  // namespace hfta::core
