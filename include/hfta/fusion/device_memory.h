// How much memory a device has free for arrays right now, and how much an array took.
#pragma once

#include <optional>
#include <string>

#include <c10/core/Device.h>

namespace hfta::fusion {

/// Free bytes on `device`: for the CPU, MemAvailable from /proc/meminfo within
/// what the process's cgroup (cgroup_room_bytes) and `ulimit -v` leave; for a
/// GPU, the CUDA driver's free memory once the caching allocator has given back
/// the blocks it keeps unused. Throws std::runtime_error if unknown (a GPU in a
/// build against CPU LibTorch).
double available_memory_bytes(const c10::Device& device);

/// What the cgroup whose files are in `dir` leaves of its memory limit (v2's
/// memory.max or v1's memory.limit_in_bytes, less the usage without page
/// cache); nullopt where it sets none or `dir` holds no such files.
std::optional<double> cgroup_room_bytes(const std::string& dir);

/// The least room of the cgroup at `path` (as /proc/self/cgroup names it)
/// under `mount` and of each of its ancestors: a limit on a parent (a systemd
/// slice, a pod) binds its children too.
std::optional<double> cgroup_room_along(const std::string& mount, const std::string& path);

/// On a GPU, the most bytes the caching allocator had handed to tensors since
/// the last call (or since the start), above those it held at that call (what
/// lived before, such as the dataset's copy, is not counted), and the count
/// starts again; nothing on the CPU, where no allocator keeps that count.
std::optional<double> take_peak_bytes(const c10::Device& device);

}  // namespace hfta::fusion
