#include "hfta/search/cma_es.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace hfta::search {
namespace {

constexpr double kEps = 1e-8;       // cmaes's floor for an eigenvalue and a norm
constexpr double kSigmaMax = 1e32;  // and its ceiling for the step size

double sum(const std::vector<double>& v, std::size_t from, std::size_t to) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to), 0.0);
}

double sum_of_squares(const std::vector<double>& v, std::size_t from, std::size_t to) {
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += v[i] * v[i];
  return s;
}

}  // namespace

std::pair<std::vector<double>, std::vector<double>> symmetric_eigen(std::vector<double> a, std::size_t n) {
  std::vector<double> v(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) v[i * n + i] = 1;
  auto at = [n](std::vector<double>& m, std::size_t r, std::size_t c) -> double& { return m[r * n + c]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, all = 0;
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < n; ++c) (r == c ? all : off) += at(a, r, c) * at(a, r, c);
    }
    if (off <= 1e-30 * (all + off) || off == 0) break;
    for (std::size_t p = 0; p + 1 < n; ++p) {
      for (std::size_t q = p + 1; q < n; ++q) {
        const double apq = at(a, p, q);
        if (apq == 0) continue;
        // The rotation J (c at pp and qq, s at pq, -s at qp) whose J^T A J has a zero at pq.
        const double theta = (at(a, q, q) - at(a, p, p)) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // A J
          const double kp = at(a, k, p), kq = at(a, k, q);
          at(a, k, p) = c * kp - s * kq;
          at(a, k, q) = s * kp + c * kq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // J^T (A J)
          const double pk = at(a, p, k), qk = at(a, q, k);
          at(a, p, k) = c * pk - s * qk;
          at(a, q, k) = s * pk + c * qk;
        }
        for (std::size_t k = 0; k < n; ++k) {  // V J
          const double kp = at(v, k, p), kq = at(v, k, q);
          at(v, k, p) = c * kp - s * kq;
          at(v, k, q) = s * kp + c * kq;
        }
      }
    }
  }
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = at(a, i, i);
  return {values, v};
}

std::size_t CmaEs::default_population(std::size_t dims) {
  return 4 + static_cast<std::size_t>(std::floor(3 * std::log(static_cast<double>(std::max<std::size_t>(dims, 1)))));
}

CmaEs::CmaEs(std::vector<double> mean, double sigma, std::size_t population)
    : population_(population), mu_(population / 2), mean_(std::move(mean)), sigma_(sigma) {
  const std::size_t n = mean_.size();
  if (n == 0) throw std::invalid_argument("CMA-ES needs at least one dimension");
  if (population < 4) throw std::invalid_argument("CMA-ES needs a population of at least 4");
  if (!(sigma > 0)) throw std::invalid_argument("CMA-ES needs a positive step size");
  const double dn = static_cast<double>(n);
  std::vector<double> w(population);
  for (std::size_t i = 0; i < population; ++i) {
    w[i] = std::log((static_cast<double>(population) + 1) / 2) - std::log(static_cast<double>(i) + 1);
  }
  mu_eff_ = std::pow(sum(w, 0, mu_), 2) / sum_of_squares(w, 0, mu_);
  const double mu_eff_minus = std::pow(sum(w, mu_, population), 2) / sum_of_squares(w, mu_, population);
  const double alpha_cov = 2;
  c1_ = alpha_cov / (std::pow(dn + 1.3, 2) + mu_eff_);
  cmu_ = std::min(1 - c1_ - 1e-8,
                  alpha_cov * (mu_eff_ - 2 + 1 / mu_eff_) / (std::pow(dn + 2, 2) + alpha_cov * mu_eff_ / 2));
  const double min_alpha =
      std::min({1 + c1_ / cmu_, 1 + 2 * mu_eff_minus / (mu_eff_ + 2), (1 - c1_ - cmu_) / (dn * cmu_)});
  double positive = 0, negative = 0;
  for (double x : w) (x > 0 ? positive : negative) += std::abs(x);
  weights_.resize(population);
  for (std::size_t i = 0; i < population; ++i) weights_[i] = w[i] >= 0 ? w[i] / positive : min_alpha / negative * w[i];
  c_sigma_ = (mu_eff_ + 2) / (dn + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (dn + 1)) - 1) + c_sigma_;
  cc_ = (4 + mu_eff_ / dn) / (dn + 4 + 2 * mu_eff_ / dn);
  chi_n_ = std::sqrt(dn) * (1.0 - 1.0 / (4.0 * dn) + 1.0 / (21.0 * dn * dn));
  p_sigma_.assign(n, 0.0);
  pc_.assign(n, 0.0);
  c_.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) c_[i * n + i] = 1;
  decompose();
}

void CmaEs::decompose() {
  const std::size_t n = dims();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = r + 1; c < n; ++c) c_[r * n + c] = c_[c * n + r] = (c_[r * n + c] + c_[c * n + r]) / 2;
  }
  auto [values, vectors] = symmetric_eigen(c_, n);
  b_ = std::move(vectors);
  d_.resize(n);
  for (std::size_t i = 0; i < n; ++i) d_[i] = std::sqrt(values[i] < 0 ? kEps : values[i]);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      double s = 0;
      for (std::size_t k = 0; k < n; ++k) s += b_[r * n + k] * d_[k] * d_[k] * b_[c * n + k];
      c_[r * n + c] = s;
    }
  }
}

std::vector<double> CmaEs::sample(const std::vector<double>& z) const {
  const std::size_t n = dims();
  if (z.size() != n) throw std::invalid_argument("CMA-ES sample: z has the wrong size");
  std::vector<double> x = mean_;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t k = 0; k < n; ++k) x[r] += sigma_ * b_[r * n + k] * d_[k] * z[k];
  }
  return x;
}

void CmaEs::tell(std::vector<std::pair<std::vector<double>, double>> solutions) {
  const std::size_t n = dims();
  if (solutions.size() != population_) throw std::invalid_argument("CMA-ES tell: expected one solution per member");
  ++generation_;
  std::stable_sort(solutions.begin(), solutions.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  // y_k = (x_k - m) / sigma ~ N(0, C); the mean moves to the weighted best.
  std::vector<std::vector<double>> y(population_, std::vector<double>(n));
  std::vector<double> y_w(n, 0.0);
  for (std::size_t k = 0; k < population_; ++k) {
    if (solutions[k].first.size() != n) throw std::invalid_argument("CMA-ES tell: a solution has the wrong size");
    for (std::size_t i = 0; i < n; ++i) y[k][i] = (solutions[k].first[i] - mean_[i]) / sigma_;
    if (k < mu_) {
      for (std::size_t i = 0; i < n; ++i) y_w[i] += weights_[k] * y[k][i];
    }
  }
  for (std::size_t i = 0; i < n; ++i) mean_[i] += sigma_ * y_w[i];  // (cm = 1)
  // C^(-1/2) v = B D^-1 B^T v
  auto inv_sqrt_c = [&](const std::vector<double>& v) {
    std::vector<double> t(n, 0.0), out(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < n; ++i) t[k] += b_[i * n + k] * v[i];
      t[k] /= d_[k];
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < n; ++k) out[i] += b_[i * n + k] * t[k];
    }
    return out;
  };
  const auto c_w = inv_sqrt_c(y_w);
  const double ps_rate = std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_);
  for (std::size_t i = 0; i < n; ++i) p_sigma_[i] = (1 - c_sigma_) * p_sigma_[i] + ps_rate * c_w[i];
  const double norm_ps = std::sqrt(sum_of_squares(p_sigma_, 0, n));
  sigma_ = std::min(sigma_ * std::exp(c_sigma_ / d_sigma_ * (norm_ps / chi_n_ - 1)), kSigmaMax);
  // The rank-one path stalls while the step-size path is long (Hansen's h_sigma).
  const double left = norm_ps / std::sqrt(1 - std::pow(1 - c_sigma_, 2.0 * (generation_ + 1)));
  const double h_sigma = left < (1.4 + 2 / (static_cast<double>(n) + 1)) * chi_n_ ? 1.0 : 0.0;
  const double pc_rate = h_sigma * std::sqrt(cc_ * (2 - cc_) * mu_eff_);
  for (std::size_t i = 0; i < n; ++i) pc_[i] = (1 - cc_) * pc_[i] + pc_rate * y_w[i];
  // Negative weights are rescaled by the Mahalanobis length of their step (active CMA).
  std::vector<double> w_io(population_);
  for (std::size_t k = 0; k < population_; ++k) {
    w_io[k] = weights_[k];
    if (weights_[k] < 0) {
      const auto u = inv_sqrt_c(y[k]);
      w_io[k] *= static_cast<double>(n) / (sum_of_squares(u, 0, n) + kEps);
    }
  }
  const double delta_h = (1 - h_sigma) * cc_ * (2 - cc_);
  const double keep = 1 + c1_ * delta_h - c1_ - cmu_ * sum(weights_, 0, population_);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      double rank_mu = 0;
      for (std::size_t k = 0; k < population_; ++k) rank_mu += w_io[k] * y[k][r] * y[k][c];
      c_[r * n + c] = keep * c_[r * n + c] + c1_ * pc_[r] * pc_[c] + cmu_ * rank_mu;
    }
  }
  decompose();
}

}  // namespace hfta::search
