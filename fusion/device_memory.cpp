#include "hfta/fusion/device_memory.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>

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

double cpu_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      double kib = 0;
      in >> kib;
      return kib * 1024.0;
    }
  }
  throw std::runtime_error("cannot read MemAvailable from /proc/meminfo");
}

#ifdef HFTA_CUDA_MEMORY
c10::DeviceIndex index_of(const c10::Device& device) { return device.has_index() ? device.index() : 0; }
#endif

}  // namespace

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
