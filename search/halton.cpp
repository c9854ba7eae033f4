#include "hfta/search/halton.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "hfta/search/rng.h"

namespace hfta::search {

std::uint64_t nth_prime(std::size_t dimension) {
  std::uint64_t candidate = 1;
  for (std::size_t found = 0; found <= dimension;) {
    ++candidate;
    bool prime = true;
    for (std::uint64_t d = 2; d * d <= candidate && prime; ++d) prime = candidate % d != 0;
    found += prime;
  }
  return candidate;
}

double scrambled_halton(std::uint64_t seed, std::uint64_t index, std::size_t dimension) {
  const std::uint64_t base = nth_prime(dimension);
  // Every position a double resolves (53 bits), zeros past the index's digits
  // included: their permuted digits are the point's random offset below the
  // index's resolution, so that no two points share a value.
  const auto positions = static_cast<int>(std::ceil(53 / std::log2(static_cast<double>(base))));
  std::vector<std::uint64_t> permutation(base);
  double x = 0, scale = 1.0 / static_cast<double>(base);
  std::uint64_t rest = index;
  for (int k = 0; k < positions; ++k) {
    // Fisher-Yates from the keyed stream: the permutation of position k.
    Rng rng(seed ^ 0x68616c746f6eULL, dimension, static_cast<std::uint64_t>(k));
    std::iota(permutation.begin(), permutation.end(), std::uint64_t{0});
    for (std::uint64_t i = base - 1; i > 0; --i) std::swap(permutation[i], permutation[rng.below(i + 1)]);
    x += static_cast<double>(permutation[rest % base]) * scale;
    rest /= base;
    scale /= static_cast<double>(base);
  }
  return std::min(x, 1 - 0x1.0p-53);  // (the sum of all top digits rounds to 1)
}

}  // namespace hfta::search
