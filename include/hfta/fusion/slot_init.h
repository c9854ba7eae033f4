// Per-model initialisation: slot b of a fused op equals the plain module built
// right after torch::manual_seed(seed).
#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>

namespace hfta::fusion {

/// Seeds LibTorch's default CPU generator for its scope and restores the previous
/// state after, so initialising one slot never disturbs anyone else's random stream.
class ScopedSeed {
 public:
  explicit ScopedSeed(std::uint64_t seed);
  ~ScopedSeed();
  ScopedSeed(const ScopedSeed&) = delete;
  ScopedSeed& operator=(const ScopedSeed&) = delete;

 private:
  at::Generator saved_;
};

}  // namespace hfta::fusion
