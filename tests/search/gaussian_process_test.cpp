#include "hfta/search/gaussian_process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hfta/search/rng.h"

namespace hfta::search {
namespace {

struct Reference {
  std::vector<std::vector<double>> x;
  std::vector<double> y, length_scales;
  double amplitude, noise, log_likelihood;
  std::vector<std::vector<double>> test;
  std::vector<double> mean, std;
};

// Written by scikit-learn (data/gaussian_process_reference.py).
const std::vector<Reference>& reference() {
  static const std::vector<Reference> cases = {
#include "data/gaussian_process_reference.inc"
  };
  return cases;
}

TEST(GaussianProcess, PosteriorAndLikelihoodAreScikitLearns) {
  for (const auto& r : reference()) {
    const GaussianProcess gp(r.x, r.y, {r.length_scales, r.amplitude, r.noise});
    EXPECT_NEAR(gp.log_marginal_likelihood(), r.log_likelihood, 1e-8 * std::abs(r.log_likelihood));
    for (std::size_t i = 0; i < r.test.size(); ++i) {
      const auto [mean, var] = gp.predict(r.test[i]);
      EXPECT_NEAR(mean, r.mean[i], 1e-8);
      // (scikit-learn's std is of a new observation: the noise included.)
      EXPECT_NEAR(std::sqrt(var + r.noise), r.std[i], 1e-8);
    }
  }
}

TEST(GaussianProcess, SamplesItsPosterior) {
  const auto& r = reference().front();
  const GaussianProcess gp(r.x, r.y, {r.length_scales, r.amplitude, r.noise});
  const std::vector<std::vector<double>> points = {r.test[0], r.test[1]};
  const auto [m0, v0] = gp.predict(points[0]);
  const auto [m1, v1] = gp.predict(points[1]);
  Rng rng(5);
  const int draws = 100000;
  double s0 = 0, s1 = 0, q0 = 0, q1 = 0;
  for (int k = 0; k < draws; ++k) {
    const auto f = gp.sample(points, {rng.normal(), rng.normal()});
    s0 += f[0] / draws, s1 += f[1] / draws, q0 += f[0] * f[0] / draws, q1 += f[1] * f[1] / draws;
  }
  EXPECT_NEAR(s0, m0, 0.02 * std::sqrt(v0) + 1e-9);
  EXPECT_NEAR(s1, m1, 0.02 * std::sqrt(v1) + 1e-9);
  EXPECT_NEAR(q0 - s0 * s0, v0, 0.03 * v0);
  EXPECT_NEAR(q1 - s1 * s1, v1, 0.03 * v1);
}

// On a smooth function of one dimension and noise of another, the fit finds
// the irrelevant dimension's length scale longer, and predicts held-out points.
TEST(GaussianProcess, FitFindsWhichDimensionMatters) {
  Rng rng(2);
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    x.push_back({rng.uniform(), rng.uniform()});
    y.push_back(std::sin(5 * x.back()[0]));
  }
  const auto h = GaussianProcess::fit(x, y);
  EXPECT_GT(h.length_scales[1], 3 * h.length_scales[0]);
  const GaussianProcess gp(x, y, h);
  for (double t : {0.1, 0.45, 0.8}) EXPECT_NEAR(gp.predict({t, 0.5}).first, std::sin(5 * t), 0.05) << t;
  // Its likelihood beats the starting guesses'.
  EXPECT_GT(gp.log_marginal_likelihood(), GaussianProcess(x, y, {{0.3, 0.3}, 1.0, 1e-2}).log_marginal_likelihood());
}

TEST(GaussianProcess, CholeskyFactorsAndAddsJitterWhereItMust) {
  const std::vector<double> a = {4, 2, 2, 3};
  const auto l = cholesky(a, 2);
  EXPECT_NEAR(l[0], 2, 1e-12);
  EXPECT_NEAR(l[2], 1, 1e-12);
  EXPECT_NEAR(l[3], std::sqrt(2.0), 1e-12);
  EXPECT_EQ(l[1], 0);
  const auto singular = cholesky({1, 1, 1, 1}, 2);  // rank 1: factors with jitter
  EXPECT_GT(singular[3], 0);
}

}  // namespace
}  // namespace hfta::search
