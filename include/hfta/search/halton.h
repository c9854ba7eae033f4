// A scrambled Halton sequence: quasi-random points that cover [0, 1)^d more
// evenly than independent draws (searcher: qmc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hfta::search {

/// The `dimension`-th prime (0: 2, 1: 3, 2: 5, ...).
std::uint64_t nth_prime(std::size_t dimension);

/// Coordinate `dimension` of point `index` of the Halton sequence (radical
/// inverse of `index` in base nth_prime(dimension)), each digit position's
/// digits permuted at random, keyed by (seed, dimension, position), as scipy's
/// Halton(scramble=True) and Optuna's QMCSampler(qmc_type="halton") scramble
/// it. The first b^k points of a dimension of base b fall one in each interval
/// [i / b^k, (i + 1) / b^k). A pure function of its arguments; in [0, 1).
double scrambled_halton(std::uint64_t seed, std::uint64_t index, std::size_t dimension);

}  // namespace hfta::search
