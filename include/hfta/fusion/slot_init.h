// Per-model initialisation: slot b of a fused op equals the plain module built
// right after torch::manual_seed(seed).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

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
  at::Tensor saved_;  ///< the generator's state before (a state, not a clone: LibTorch 1.13's Generator::clone leaks the copy)
};

/// A plain module built the way LibTorch builds it right after manual_seed(seed).
template <typename Plain, typename Options>
Plain seeded(std::uint64_t seed, const Options& options) {
  ScopedSeed scoped(seed);
  return Plain(options);
}

}  // namespace hfta::fusion
