#include "hfta/fusion/device_memory.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

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

}  // namespace

double available_memory_bytes(const c10::Device& device) {
  if (device.is_cpu()) return cpu_available_bytes();
  // GPU memory comes from the CUDA caching allocator, built only with CUDA LibTorch.
  throw std::runtime_error("free memory of " + device.str() +
                           " is not available in this build (CPU LibTorch)");
}

}  // namespace hfta::fusion
