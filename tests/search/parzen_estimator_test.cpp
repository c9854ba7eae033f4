#include "hfta/search/parzen_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "hfta/search/param_scale.h"

namespace hfta::search {
namespace {

struct Reference {
  std::string kind;
  double low, high, step;
  std::vector<double> observations, weights, centres, widths, tests, log_pdf;
};

// Written by Optuna (data/parzen_estimator_reference.py).
const std::vector<Reference>& reference() {
  static const std::vector<Reference> cases = {
#include "data/parzen_estimator_reference.inc"
  };
  return cases;
}

ParameterSpec spec(const Reference& r) {
  ParameterSpec p;
  p.name = "x";
  p.distribution = *distribution_from_name(r.kind == "categorical" ? "choice" : r.kind);
  p.min = r.low;
  p.max = r.high;
  p.q = r.step;
  if (r.kind == "categorical") {
    for (int v = 0; v <= static_cast<int>(r.high); ++v) p.values.push_back("v" + std::to_string(v));
  }
  return p;
}

// The reference's value as the parameter takes it (a categorical one's: by index).
ParamValue value(const ParameterSpec& p, double x) {
  if (p.distribution == Distribution::kChoice) return p.values.at(static_cast<std::size_t>(x));
  if (p.distribution == Distribution::kIntUniform || p.distribution == Distribution::kIntLogUniform) {
    return static_cast<std::int64_t>(std::llround(x));
  }
  return x;
}

TEST(ParzenEstimator, KernelsAndDensitiesAreOptunas) {
  for (const auto& r : reference()) {
    SCOPED_TRACE(r.kind + " over " + std::to_string(r.observations.size()) + " observations");
    const ParameterSpec p = spec(r);
    std::vector<ParamValue> values;
    for (double x : r.observations) values.push_back(value(p, x));
    const ParzenEstimator e(p, values);
    ASSERT_EQ(e.weights().size(), r.weights.size());
    for (std::size_t k = 0; k < r.weights.size(); ++k) EXPECT_NEAR(e.weights()[k], r.weights[k], 1e-12);
    if (r.kind == "categorical") {
      std::vector<double> flat;
      for (const auto& row : e.probabilities()) flat.insert(flat.end(), row.begin(), row.end());
      ASSERT_EQ(flat.size(), r.centres.size());
      for (std::size_t i = 0; i < flat.size(); ++i) EXPECT_NEAR(flat[i], r.centres[i], 1e-12);
    } else {
      ASSERT_EQ(e.centres().size(), r.centres.size());
      for (std::size_t k = 0; k < r.centres.size(); ++k) {
        EXPECT_NEAR(e.centres()[k], r.centres[k], 1e-12);
        EXPECT_NEAR(e.widths()[k], r.widths[k], 1e-12);
      }
    }
    for (std::size_t i = 0; i < r.tests.size(); ++i) {
      EXPECT_NEAR(e.log_pdf(value(p, r.tests[i])), r.log_pdf[i], 1e-10) << "at " << r.tests[i];
    }
  }
}

TEST(ParzenEstimator, OlderResultsWeighLessPast25) {
  EXPECT_EQ(age_weights(25), std::vector<double>(25, 1.0));
  const auto w = age_weights(40);  // a ramp over the oldest 15, from 1/40 to 1
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 40);
  EXPECT_DOUBLE_EQ(w[14], 1.0);
  for (std::size_t i = 1; i < 15; ++i) EXPECT_GT(w[i], w[i - 1]);
  EXPECT_EQ(std::vector<double>(w.begin() + 15, w.end()), std::vector<double>(25, 1.0));
}

// Draws follow the density: the share of 200,000 draws in each of ten bins
// matches the density's mass there (integrated from log_pdf), on a log scale
// and on integers, whose draws are rounded.
TEST(ParzenEstimator, DrawsFollowTheDensity) {
  ParameterSpec lr{"lr", Distribution::kLogUniform, 1e-4, 1e-1};
  ParameterSpec units{"units", Distribution::kIntUniform, 1, 10};
  const ParzenEstimator continuous(lr, {1e-3, 1.2e-3, 2e-3, 3e-2});
  const ParzenEstimator integers(units, {ParamValue(std::int64_t{3}), ParamValue(std::int64_t{3}),
                                         ParamValue(std::int64_t{4}), ParamValue(std::int64_t{9})});
  Rng rng(7);
  constexpr int kDraws = 200000;
  std::vector<int> log_bins(10), int_bins(10);
  const auto [lo, hi] = scaled_range(lr);
  for (int i = 0; i < kDraws; ++i) {
    const double t = to_scale(lr, as_double(continuous.sample(rng)));
    ASSERT_GE(t, lo - 1e-12);
    ASSERT_LE(t, hi + 1e-12);
    ++log_bins[std::min(9, static_cast<int>((t - lo) / (hi - lo) * 10))];
    const auto u = std::get<std::int64_t>(integers.sample(rng));
    ASSERT_GE(u, 1);
    ASSERT_LE(u, 10);
    ++int_bins[u - 1];
  }
  for (int b = 0; b < 10; ++b) {
    double mass = 0;  // the midpoint rule over the bin, on the log scale
    constexpr int kSteps = 2000;
    for (int s = 0; s < kSteps; ++s) {
      const double t = lo + (hi - lo) * (b + (s + 0.5) / kSteps) / 10;
      mass += std::exp(continuous.log_pdf(std::exp(t))) * (hi - lo) / 10 / kSteps;
    }
    EXPECT_NEAR(log_bins[b] / double(kDraws), mass, 0.005) << "log bin " << b;
    const double p = std::exp(integers.log_pdf(ParamValue(std::int64_t{b + 1})));
    EXPECT_NEAR(int_bins[b] / double(kDraws), p, 0.005) << "integer " << b + 1;
  }
}

}  // namespace
}  // namespace hfta::search
