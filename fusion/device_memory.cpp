#include "hfta/fusion/device_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// A CUDA LibTorch (the GPU machine's) brings the CUDA caching allocator and the
// runtime's headers; Debian's CPU LibTorch has neither.
#if __has_include(<c10/cuda/CUDACachingAllocator.h>) && __has_include(<cuda_runtime_api.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#define HFTA_CUDA_MEMORY 1
#endif

namespace hfta::fusion {
namespace {

// The bytes of a "Key:   N kB" line of a /proc file (/proc/meminfo, /proc/self/status).
std::optional<double> kib_line(const std::string& path, const std::string& key) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream in(line.substr(key.size()));
      double kib = 0;
      if (in >> kib) return kib * 1024.0;
    }
  }
  return std::nullopt;
}

double meminfo_available_bytes() {
  if (const auto bytes = kib_line("/proc/meminfo", "MemAvailable:")) return *bytes;
  throw std::runtime_error("cannot read MemAvailable from /proc/meminfo");
}

// The first number in `path`, if it holds one ("max" does not).
std::optional<double> number_in(const std::string& path) {
  std::ifstream in(path);
  double value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

// The value of `key` in a memory.stat file.
double stat_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string name;
  double value = 0;
  while (in >> name >> value) {
    if (name == key) return value;
  }
  return 0;
}

// The process's cgroup paths from /proc/self/cgroup: "" for cgroup v2's
// unified line ("0::/path"), "memory" for v1's memory controller.
std::map<std::string, std::string> own_cgroups() {
  std::map<std::string, std::string> out;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::istringstream controllers(line.substr(a + 1, b - a - 1));
    std::string c;
    if (line.substr(a + 1, b - a - 1).empty()) out[""] = line.substr(b + 1);
    while (std::getline(controllers, c, ',')) {
      if (c == "memory") out["memory"] = line.substr(b + 1);
    }
  }
  return out;
}

// What the address-space limit (`ulimit -v`) leaves: the limit less the
// process's virtual size; nullopt where there is none.
std::optional<double> address_space_room() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const auto size = kib_line("/proc/self/status", "VmSize:");
  if (!size) return std::nullopt;
  return std::max(0.0, static_cast<double>(limit.rlim_cur) - *size);
}

// The host memory arrays may take: what the kernel counts available, within
// what the process's cgroup (a container's or a batch job's limit) and
// `ulimit -v` leave, which MemAvailable does not see.
double cpu_available_bytes() {
  double bytes = meminfo_available_bytes();
  const auto cgroups = own_cgroups();
  // cgroup v2's unified hierarchy, then v1's memory controller (a namespaced
  // container sees its own cgroup as the root: "/").
  for (const auto& [controller, mount] : {std::pair<std::string, std::string>{"", "/sys/fs/cgroup"},
                                          std::pair<std::string, std::string>{"memory", "/sys/fs/cgroup/memory"}}) {
    const auto it = cgroups.find(controller);
    if (auto room = cgroup_room_along(mount, it != cgroups.end() ? it->second : "/")) bytes = std::min(bytes, *room);
  }
  if (auto room = address_space_room()) bytes = std::min(bytes, *room);
  return bytes;
}

#ifdef HFTA_CUDA_MEMORY
c10::DeviceIndex index_of(const c10::Device& device) { return device.has_index() ? device.index() : 0; }
#endif

}  // namespace

std::optional<double> cgroup_room_bytes(const std::string& dir) {
  // v2: memory.max ("max": none) and memory.current; v1: memory.limit_in_bytes
  // (about 2^63 where none) and memory.usage_in_bytes. Each usage counts the
  // page cache, which the kernel drops before it runs out (as MemAvailable
  // counts it available).
  const bool v2 = std::ifstream(dir + "/memory.current").good();
  const auto limit = number_in(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  const auto usage = number_in(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
  if (!limit || !usage || *limit >= 0x1p62) return std::nullopt;
  const double cache = stat_value(dir + "/memory.stat", v2 ? "file" : "total_cache");
  return std::max(0.0, *limit - std::max(0.0, *usage - cache));
}

std::optional<double> cgroup_room_along(const std::string& mount, const std::string& path) {
  std::optional<double> room;
  std::string p = path;
  while (true) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (auto r = cgroup_room_bytes(mount + (p == "/" ? "" : p))) room = room ? std::min(*room, *r) : *r;
    if (p.empty() || p == "/") return room;
    const auto slash = p.rfind('/');
    p = slash == std::string::npos ? "" : slash == 0 ? "/" : p.substr(0, slash);
  }
}

double available_memory_bytes(const c10::Device& device) {
  if (device.is_cpu()) return cpu_available_bytes();
#ifdef HFTA_CUDA_MEMORY
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(index_of(device));
    // Blocks the caching allocator holds for no tensor are free for arrays too:
    // give them back, so that the driver's count includes them.
    c10::cuda::CUDACachingAllocator::emptyCache();
    std::size_t free = 0, total = 0;
    const cudaError_t status = cudaMemGetInfo(&free, &total);
    if (status != cudaSuccess) {
      throw std::runtime_error("free memory of " + device.str() + ": " + cudaGetErrorString(status));
    }
    return static_cast<double>(free);
  }
#endif
  throw std::runtime_error("free memory of " + device.str() +
                           " is not available in this build (CPU LibTorch)");
}

std::optional<double> take_peak_bytes(const c10::Device& device) {
#ifdef HFTA_CUDA_MEMORY
  if (device.is_cuda()) {
    namespace allocator = c10::cuda::CUDACachingAllocator;
    // What was allocated when the count began (the dataset's shared copy, say)
    // is not the array's: the peak is counted above it.
    static std::mutex mutex;
    static std::map<c10::DeviceIndex, double> baseline;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto index = index_of(device);
    const auto stats = allocator::getDeviceStats(index);
    // allocated_bytes[0]: the aggregate over the allocator's pools (StatType::AGGREGATE,
    // whose namespace moved between LibTorch versions).
    const auto peak = static_cast<double>(stats.allocated_bytes[0].peak);
    allocator::resetPeakStats(index);
    double& base = baseline[index];
    const double above = std::max(0.0, peak - base);
    base = static_cast<double>(stats.allocated_bytes[0].current);
    return above;
  }
#endif
  (void)device;
  return std::nullopt;
}

}  // namespace hfta::fusion
