// Counter-based random numbers: every draw is a pure function of its keys, so a
// trial's configuration never depends on run order, machine or library version.
#pragma once

#include <cstdint>
#include <string>

namespace hfta::search {

/// SplitMix64's finalizer: a bijective mix of 64 bits.
std::uint64_t mix64(std::uint64_t x);

/// A stable 64-bit hash of a string (FNV-1a, then mixed).
std::uint64_t hash_string(const std::string& s);

/// A stream of random numbers keyed by (seed, a, b). Same keys, same numbers,
/// everywhere: no std:: distributions, whose output differs between libraries.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t a = 0, std::uint64_t b = 0);

  std::uint64_t next_u64();
  /// Uniform in [0, 1), 53 random bits.
  double uniform();
  /// Uniform integer in [0, n), without modulo bias. n > 0.
  std::uint64_t below(std::uint64_t n);
  /// Standard normal (Box-Muller).
  double normal();

 private:
  std::uint64_t state_;
  std::uint64_t counter_ = 0;
};

}  // namespace hfta::search
