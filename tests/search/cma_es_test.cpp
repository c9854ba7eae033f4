#include "hfta/search/cma_es.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hfta/search/rng.h"

namespace hfta::search {
namespace {

struct Generation {
  std::vector<std::pair<std::vector<double>, double>> told;
  std::vector<double> mean;
  double sigma;
  std::vector<double> covariance;
};

struct Case {
  std::string name;
  std::vector<double> mean;
  double sigma;
  std::size_t population;
  std::vector<Generation> generations;
};

// Written by the `cmaes` library (data/cma_es_reference.py).
const std::vector<Case>& reference() {
  static const std::vector<Case> cases = {
#include "data/cma_es_reference.inc"
  };
  return cases;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-10 * std::max(1.0, std::abs(want[i]))) << what << " [" << i << "]";
  }
}

TEST(CmaEs, MovesItsGaussianAsTheCmaesLibraryDoesWhenToldTheSameSolutions) {
  for (const auto& c : reference()) {
    CmaEs es(c.mean, c.sigma, c.population);
    for (std::size_t g = 0; g < c.generations.size(); ++g) {
      const auto& gen = c.generations[g];
      es.tell(gen.told);
      const std::string what = c.name + " generation " + std::to_string(g + 1);
      EXPECT_EQ(es.generation(), static_cast<int>(g + 1));
      expect_near_all(es.mean(), gen.mean, what + " mean");
      EXPECT_NEAR(es.sigma(), gen.sigma, 1e-10 * gen.sigma) << what << " sigma";
      expect_near_all(es.covariance(), gen.covariance, what + " covariance");
    }
  }
}

TEST(CmaEs, DefaultPopulationIsHansens) {
  EXPECT_EQ(CmaEs::default_population(1), 4u);
  EXPECT_EQ(CmaEs::default_population(2), 6u);
  EXPECT_EQ(CmaEs::default_population(3), 7u);
  EXPECT_EQ(CmaEs::default_population(10), 10u);
}

TEST(CmaEs, SamplesItsGaussian) {
  // After some generations C is not diagonal: the samples' mean and covariance estimate mean and sigma^2 C.
  const auto& c = reference().front();
  CmaEs es(c.mean, c.sigma, c.population);
  for (const auto& gen : c.generations) es.tell(gen.told);
  const std::size_t n = es.dims(), draws = 200000;
  std::vector<double> mean(n, 0.0), cov(n * n, 0.0);
  Rng rng(7);
  std::vector<std::vector<double>> xs;
  for (std::size_t k = 0; k < draws; ++k) {
    std::vector<double> z(n);
    for (double& v : z) v = rng.normal();
    xs.push_back(es.sample(z));
    for (std::size_t i = 0; i < n; ++i) mean[i] += xs.back()[i] / draws;
  }
  for (const auto& x : xs) {
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t q = 0; q < n; ++q) cov[r * n + q] += (x[r] - mean[r]) * (x[q] - mean[q]) / draws;
    }
  }
  const double s2 = es.sigma() * es.sigma();
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(mean[i], es.mean()[i], 0.01 * es.sigma());
  for (std::size_t i = 0; i < n * n; ++i) {
    EXPECT_NEAR(cov[i] / s2, es.covariance()[i], 0.02 * std::sqrt(es.covariance()[i / n * n + i / n] * es.covariance()[i % n * n + i % n]));
  }
}

TEST(CmaEs, SymmetricEigenReconstructsItsMatrix) {
  Rng rng(3);
  for (std::size_t n : {1u, 2u, 5u, 9u}) {
    std::vector<double> m(n * n);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c <= r; ++c) m[r * n + c] = m[c * n + r] = rng.normal();
    }
    const auto [values, vectors] = symmetric_eigen(m, n);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < n; ++c) {
        double back = 0, dot = 0;
        for (std::size_t k = 0; k < n; ++k) {
          back += vectors[r * n + k] * values[k] * vectors[c * n + k];
          dot += vectors[k * n + r] * vectors[k * n + c];
        }
        EXPECT_NEAR(back, m[r * n + c], 1e-12) << n;
        EXPECT_NEAR(dot, r == c ? 1.0 : 0.0, 1e-12) << n;  // orthonormal columns
      }
    }
  }
}

TEST(CmaEs, RefusesWhatItCannotRun) {
  EXPECT_THROW(CmaEs({}, 0.1, 6), std::invalid_argument);
  EXPECT_THROW(CmaEs({0.5, 0.5}, 0.1, 3), std::invalid_argument);
  EXPECT_THROW(CmaEs({0.5, 0.5}, 0.0, 6), std::invalid_argument);
  CmaEs es({0.5, 0.5}, 0.1, 6);
  EXPECT_THROW(es.tell({{{0.5, 0.5}, 1.0}}), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::search
