// A Gaussian process over [0, 1]^d with a Matern 5/2 kernel, one length
// scale per dimension (ARD), an amplitude and a noise: the model of
// GpSearcher. Its posterior matches scikit-learn's GaussianProcessRegressor
// with ConstantKernel * Matern(nu=2.5) + WhiteKernel at the same
// hyperparameters (tested); fit() picks them by the log marginal likelihood.
// No LibTorch: a few hundred points at most.
#pragma once

#include <cstddef>
#include <vector>

namespace hfta::search {

struct GpHyperparameters {
  std::vector<double> length_scales;  ///< one per dimension
  double amplitude = 1;               ///< the kernel's variance
  double noise = 1e-2;                ///< the observations' noise variance
};

class GaussianProcess {
 public:
  /// Conditions on points x (each of d values) and values y at `h`. Throws std::invalid_argument on bad sizes.
  GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, GpHyperparameters h);

  /// The hyperparameters of the largest log marginal likelihood: Nelder-Mead
  /// in log space from a few starts, length scales in [0.01, 10], amplitude
  /// in [0.05, 20], noise in [1e-6, 1] (for y of unit variance).
  static GpHyperparameters fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y);

  /// Matern 5/2 of the scaled distance between a and b, times the amplitude.
  double kernel(const std::vector<double>& a, const std::vector<double>& b) const;
  double log_marginal_likelihood() const { return log_likelihood_; }
  /// Posterior mean and variance (of the function, without the noise) at one point.
  std::pair<double, double> predict(const std::vector<double>& at) const;
  /// One joint draw of the function at `points`, from standard normals z (one per point).
  std::vector<double> sample(const std::vector<std::vector<double>>& points, const std::vector<double>& z) const;

 private:
  std::vector<std::vector<double>> x_;
  GpHyperparameters h_;
  std::vector<double> chol_;   ///< lower Cholesky factor of K + noise I, row-major n x n
  std::vector<double> alpha_;  ///< (K + noise I)^-1 y
  double log_likelihood_ = 0;
};

/// The lower Cholesky factor of an n x n symmetric positive definite matrix
/// (row-major), adding jitter to the diagonal until it factors.
std::vector<double> cholesky(std::vector<double> a, std::size_t n);

}  // namespace hfta::search
