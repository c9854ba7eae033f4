// How much memory a device has free for arrays right now, and how much an array took.
#pragma once

#include <optional>

#include <c10/core/Device.h>

namespace hfta::fusion {

/// Free bytes on `device`: MemAvailable from /proc/meminfo for the CPU; for a
/// GPU, the CUDA driver's free memory once the caching allocator has given back
/// the blocks it keeps unused. Throws std::runtime_error if unknown (a GPU in a
/// build against CPU LibTorch).
double available_memory_bytes(const c10::Device& device);

/// On a GPU, the most bytes the caching allocator had handed to tensors since
/// the last call (or since the start), above those it held at that call (what
/// lived before, such as the dataset's copy, is not counted), and the count
/// starts again; nothing on the CPU, where no allocator keeps that count.
std::optional<double> take_peak_bytes(const c10::Device& device);

}  // namespace hfta::fusion
