// How much memory a device has free for arrays right now.
#pragma once

#include <c10/core/Device.h>

namespace hfta::fusion {

/// Free bytes on `device`: MemAvailable from /proc/meminfo for the CPU, the
/// CUDA driver's free memory for a GPU. Throws std::runtime_error if unknown.
double available_memory_bytes(const c10::Device& device);

}  // namespace hfta::fusion
