// The devices a sweep trains on, parsed from the --device flag.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

namespace hfta::fusion {

/// Parses "cpu", "cuda" (every visible GPU) or "cuda:0,cuda:1" into devices.
/// Throws std::invalid_argument naming the bad entry, or when CUDA is asked for
/// but this LibTorch has no CUDA or no GPU is visible.
std::vector<c10::Device> parse_device_list(const std::string& spec);

/// Same as parse_device_list, with the number of visible GPUs given (for tests
/// and for callers that already asked LibTorch).
std::vector<c10::Device> parse_device_list(const std::string& spec, int cuda_device_count);

/// "cpu", "cuda:0,cuda:1": the inverse of parse_device_list.
std::string to_string(const std::vector<c10::Device>& devices);

}  // namespace hfta::fusion
