#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "hfta/search/halton.h"
#include "hfta/search/search_space.h"
#include "../support/parameter_specs.h"

namespace hfta::search {
namespace {

TEST(Halton, PrimesAreTheBases) {
  EXPECT_EQ(nth_prime(0), 2u);
  EXPECT_EQ(nth_prime(1), 3u);
  EXPECT_EQ(nth_prime(2), 5u);
  EXPECT_EQ(nth_prime(9), 29u);
  EXPECT_EQ(nth_prime(99), 541u);
}

// The property that makes it quasi-random: the first b^k points of a
// dimension of base b fall one in each of b^k equal intervals, scrambled or not.
TEST(Halton, TheFirstBToTheKPointsFallOneInEachInterval) {
  for (const std::uint64_t seed : {0ull, 7ull, 123456789ull}) {
    for (std::size_t dimension : {0u, 1u, 2u, 7u}) {
      const auto base = nth_prime(dimension);
      std::uint64_t n = 1;
      while (n * base <= 400) n *= base;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", base " + std::to_string(base) + ", " + std::to_string(n) + " points");
      std::set<std::uint64_t> cells;
      for (std::uint64_t i = 0; i < n; ++i) {
        const double x = scrambled_halton(seed, i, dimension);
        ASSERT_GE(x, 0.0);
        ASSERT_LT(x, 1.0);
        cells.insert(static_cast<std::uint64_t>(x * static_cast<double>(n)));
      }
      EXPECT_EQ(cells.size(), n);
    }
  }
}

TEST(Halton, APureFunctionOfSeedIndexAndDimensionThatTheSeedScrambles) {
  EXPECT_EQ(scrambled_halton(3, 17, 2), scrambled_halton(3, 17, 2));
  int differ = 0;
  for (std::uint64_t i = 0; i < 16; ++i) differ += scrambled_halton(3, i, 0) != scrambled_halton(4, i, 0);
  EXPECT_EQ(differ, 16);
  // Scrambled, point 0 is not the corner.
  EXPECT_NE(scrambled_halton(3, 0, 0), 0.0);
}

using test::listed;
using test::range;

TEST(QuasiSampling, IntegerRangesAndChoicesTakeEachValueOnceInTheFirstPoints) {
  // Dimensions by name: a (base 2), b (base 3); the constant takes none.
  const SearchSpace space({range("a", Distribution::kIntUniform, 1, 4),
                           listed("b", Distribution::kChoice, {std::string("x"), std::string("y"), std::string("z")}),
                           listed("0const", Distribution::kConst, {std::int64_t{5}})},
                          Sampling::kQuasi);
  std::multiset<std::int64_t> a;
  std::multiset<std::string> b;
  for (std::int64_t t = 0; t < 4; ++t) a.insert(std::get<std::int64_t>(space.sample(9, t).at("a")));
  for (std::int64_t t = 0; t < 3; ++t) b.insert(std::get<std::string>(space.sample(9, t).at("b")));
  EXPECT_EQ(a, (std::multiset<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(b, (std::multiset<std::string>{"x", "y", "z"}));
  // A constant takes no dimension: without it, the same values.
  const SearchSpace without({range("a", Distribution::kIntUniform, 1, 4),
                             listed("b", Distribution::kChoice, {std::string("x"), std::string("y"), std::string("z")})},
                            Sampling::kQuasi);
  for (std::int64_t t = 0; t < 10; ++t) {
    EXPECT_EQ(without.sample(9, t).at("a"), space.sample(9, t).at("a"));
    EXPECT_EQ(without.sample(9, t).at("b"), space.sample(9, t).at("b"));
  }
}

// 64 trials over two real ranges, in an 8 x 8 grid of cells: independent
// draws leave about 64 (63/64)^64 = 23 cells empty, the sequence about 10
// (bases 2 and 3: the rows do not fall on base-3 digits; the unscrambled
// sequence leaves 9).
TEST(QuasiSampling, CoversTwoRangesMoreEvenlyThanRandomDraws) {
  const std::vector<ParameterSpec> parameters = {range("lr", Distribution::kLogUniform, 1e-4, 1e-1),
                                                 range("momentum", Distribution::kUniform, 0, 0.9)};
  auto empty_cells = [&](Sampling sampling, std::uint64_t seed) {
    const SearchSpace space(parameters, sampling);
    std::set<int> filled;
    for (std::int64_t t = 0; t < 64; ++t) {
      const Config c = space.sample(seed, t);
      const double x = (std::log(std::get<double>(c.at("lr"))) - std::log(1e-4)) / (std::log(1e-1) - std::log(1e-4));
      const double y = std::get<double>(c.at("momentum")) / 0.9;
      filled.insert(static_cast<int>(x * 8) * 8 + static_cast<int>(y * 8));
    }
    return 64 - static_cast<int>(filled.size());
  };
  int quasi = 0, random = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    quasi += empty_cells(Sampling::kQuasi, seed);
    random += empty_cells(Sampling::kRandom, seed);
  }
  EXPECT_LE(quasi, 5 * 12) << "random: " << random;
  EXPECT_GE(random, 5 * 18);
  EXPECT_LT(2 * quasi, random);
}

TEST(QuasiSampling, PointsKeepTheirValuesAndGridsCycle) {
  const SearchSpace space({range("lr", Distribution::kUniform, 0, 1),
                           listed("width", Distribution::kGrid, {std::int64_t{32}, std::int64_t{64}}),
                           range("momentum", Distribution::kUniform, 0, 0.9)},
                          Sampling::kQuasi);
  const Config fixed = space.sample(1, 3, {{"lr", 0.25}});
  EXPECT_EQ(fixed.at("lr"), ParamValue(0.25));
  EXPECT_EQ(fixed.at("momentum"), space.sample(1, 3).at("momentum"));
  EXPECT_EQ(space.sample(1, 0).at("width"), ParamValue(std::int64_t{32}));
  EXPECT_EQ(space.sample(1, 1).at("width"), ParamValue(std::int64_t{64}));
  // lr is dimension 0 (base 2): the grid takes none.
  EXPECT_EQ(std::get<double>(space.sample(1, 5).at("lr")), scrambled_halton(1, 5, 0));
}

}  // namespace
}  // namespace hfta::search
