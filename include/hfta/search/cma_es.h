// The covariance matrix adaptation evolution strategy (CMA-ES; Hansen, "The
// CMA Evolution Strategy: A Tutorial", 2016): a Gaussian over the search
// space whose mean, step size and covariance follow each generation's best
// solutions. The update is the one of the `cmaes` library that Optuna's
// CmaEsSampler drives (weighted recombination, cumulative step-size
// adaptation, rank-one and rank-mu updates with active negative weights),
// so a generation told the same solutions moves the Gaussian alike (tested
// against cmaes 0.9.1's numbers). No LibTorch: dimensions are a handful.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace hfta::search {

class CmaEs {
 public:
  /// A Gaussian at `mean` with covariance sigma^2 I, told `population` solutions a generation.
  CmaEs(std::vector<double> mean, double sigma, std::size_t population);

  /// Hansen's default population for `dims` dimensions: 4 + floor(3 ln dims).
  static std::size_t default_population(std::size_t dims);

  /// The solution mean + sigma * B D z for a standard normal z (dims() of them):
  /// distributed as N(mean, sigma^2 C) when z is.
  std::vector<double> sample(const std::vector<double>& z) const;

  /// One generation: population() solutions and their values, lower better
  /// (+infinity for the worst; ties keep their order). Moves the Gaussian.
  void tell(std::vector<std::pair<std::vector<double>, double>> solutions);

  std::size_t dims() const { return mean_.size(); }
  std::size_t population() const { return population_; }
  int generation() const { return generation_; }
  const std::vector<double>& mean() const { return mean_; }
  double sigma() const { return sigma_; }
  /// The covariance C, row-major dims() x dims().
  const std::vector<double>& covariance() const { return c_; }

 private:
  /// C = B diag(D^2) B^T, with D's squares at least 1e-8 (as cmaes's eigh).
  void decompose();
  std::size_t population_, mu_;
  std::vector<double> weights_;
  double mu_eff_, cc_, c1_, cmu_, c_sigma_, d_sigma_, chi_n_;
  std::vector<double> mean_, p_sigma_, pc_, c_;
  double sigma_;
  int generation_ = 0;
  std::vector<double> b_, d_;  ///< eigenvectors (columns, row-major) and square roots of eigenvalues of c_
};

/// The eigenvalues and eigenvectors of a symmetric n x n matrix (row-major),
/// by cyclic Jacobi rotations: values, and vectors as the columns of a row-major matrix.
std::pair<std::vector<double>, std::vector<double>> symmetric_eigen(std::vector<double> a, std::size_t n);

}  // namespace hfta::search
