// The density TPE models one parameter with, over one group of results (the
// good or the bad), as Optuna's TPESampler (3.1) builds it: one truncated
// Gaussian kernel per result, on the parameter's scale (param_scale.h), plus
// a prior kernel at the middle of the range as wide as the range. A kernel is
// as wide as the larger gap to its neighbours (the outermost: the gap inward),
// clipped to [range / min(100, kernels + 1), range] (the "magic clip"), so
// the density is sharp where results crowd and flat where they are sparse.
// Older results weigh less once there are more than 25 (default_weights).
// For several parameters at once (Optuna's multivariate TPE) every result's
// kernel has one width instead, Scott's rule as Optuna's: 0.2 n^(-1/(d + 4))
// of the range, and a kernel is the product of its parameters' kernels.
// An integer's or a linear grid's value has the kernels' mass over the
// interval it owns on the scale (later Optuna's, for log-scaled integers too). A categorical parameter's kernel gives its own value one
// count more than the prior's share. tests/search/parzen_estimator_test.cpp
// compares kernels and densities with Optuna's own (with the kernel width's
// 1/sigma in each density, which Optuna 3.1 left out: optuna#5109).
#pragma once

#include <vector>

#include "hfta/search/parameter_spec.h"
#include "hfta/search/rng.h"

namespace hfta::search {

/// Optuna's default_weights: n ones, or for n > 25 a ramp from 1/n to 1 over
/// the oldest n - 25 and ones for the newest 25.
std::vector<double> age_weights(std::size_t n);

class ParzenEstimator {
 public:
  /// `values`: the group's values of `parameter`, oldest first. A numeric
  /// parameter needs a range wider than one value. `width` > 0: every
  /// result's kernel that share of the range wide (before the clip).
  ParzenEstimator(const ParameterSpec& parameter, const std::vector<ParamValue>& values, double width = 0);
  /// Optuna's multivariate width for `results` results in `dims` parameters.
  static double joint_width(std::size_t results, std::size_t dims);

  /// A draw: a kernel by weight, then a value from it (within the range,
  /// rounded as the parameter is).
  ParamValue sample(Rng& rng) const;
  /// The log of the density (of the mass, for a discrete value) at `x`.
  double log_pdf(const ParamValue& x) const;

  /// A kernel drawn by weight; a value drawn from kernel k; kernel k's log density at x.
  std::size_t kernel(Rng& rng) const;
  ParamValue sample(std::size_t k, Rng& rng) const;
  double log_kernel(const ParamValue& x, std::size_t k) const;

  /// The kernels, the prior's last: weights summing to 1; a numeric
  /// parameter's centres and widths on its scale; a categorical one's
  /// probability of each value, kernel by kernel.
  const std::vector<double>& weights() const { return weights_; }
  const std::vector<double>& centres() const { return mu_; }
  const std::vector<double>& widths() const { return sigma_; }
  const std::vector<std::vector<double>>& probabilities() const { return probabilities_; }

 private:
  ParameterSpec p_;
  bool categorical_;
  bool discrete_;  ///< integers and linear grids: a value has its interval's mass
  double lo_ = 0, hi_ = 0;
  std::vector<double> weights_, mu_, sigma_;
  std::vector<std::vector<double>> probabilities_;
};

/// Several parameters' estimators over the same results (each built with
/// joint_width): a draw takes one kernel for all of them, and the density is
/// the weighted sum over kernels of the product of their densities.
std::vector<ParamValue> joint_sample(const std::vector<ParzenEstimator>& dims, Rng& rng);
double joint_log_pdf(const std::vector<ParzenEstimator>& dims, const std::vector<ParamValue>& x);

}  // namespace hfta::search
