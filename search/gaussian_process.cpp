#include "hfta/search/gaussian_process.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hfta::search {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Solves L v = b for lower-triangular L.
std::vector<double> forward(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i * n + k] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

// Solves L^T v = b.
std::vector<double> backward(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k * n + i] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

// Nelder-Mead minimisation of f from x0 with initial steps `step`: the standard
// reflection, expansion, contraction and shrink (1, 2, 0.5, 0.5).
template <typename F>
std::vector<double> nelder_mead(F f, std::vector<double> x0, double step, int iterations) {
  const std::size_t n = x0.size();
  std::vector<std::vector<double>> simplex{x0};
  for (std::size_t i = 0; i < n; ++i) {
    simplex.push_back(x0);
    simplex.back()[i] += step;
  }
  std::vector<double> values;
  for (const auto& p : simplex) values.push_back(f(p));
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::size_t> order(n + 1);
    for (std::size_t i = 0; i <= n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (std::abs(values[worst] - values[best]) < 1e-9 * (1 + std::abs(values[best]))) break;
    std::vector<double> centre(n, 0.0);
    for (std::size_t i = 0; i <= n; ++i) {
      if (i == worst) continue;
      for (std::size_t k = 0; k < n; ++k) centre[k] += simplex[i][k] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (std::size_t k = 0; k < n; ++k) p[k] = centre[k] + t * (simplex[worst][k] - centre[k]);
      return p;
    };
    const auto reflected = along(-1);
    const double fr = f(reflected);
    if (fr < values[best]) {
      const auto expanded = along(-2);
      const double fe = f(expanded);
      simplex[worst] = fe < fr ? expanded : reflected;
      values[worst] = std::min(fe, fr);
    } else if (fr < values[second]) {
      simplex[worst] = reflected;
      values[worst] = fr;
    } else {
      const auto contracted = along(0.5);
      const double fc = f(contracted);
      if (fc < values[worst]) {
        simplex[worst] = contracted;
        values[worst] = fc;
      } else {
        for (std::size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          for (std::size_t k = 0; k < n; ++k) simplex[i][k] = simplex[best][k] + 0.5 * (simplex[i][k] - simplex[best][k]);
          values[i] = f(simplex[i]);
        }
      }
    }
  }
  return simplex[static_cast<std::size_t>(std::min_element(values.begin(), values.end()) - values.begin())];
}

}  // namespace

std::vector<double> cholesky(std::vector<double> a, std::size_t n) {
  for (double jitter = 0;; jitter = jitter == 0 ? 1e-10 : jitter * 10) {
    std::vector<double> l(n * n, 0.0);
    bool ok = true;
    for (std::size_t i = 0; i < n && ok; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        double s = a[i * n + j] + (i == j ? jitter : 0.0);
        for (std::size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
        if (i == j) {
          if (!(s > 0)) {
            ok = false;
            break;
          }
          l[i * n + i] = std::sqrt(s);
        } else {
          l[i * n + j] = s / l[j * n + j];
        }
      }
    }
    if (ok) return l;
    if (jitter > 1) throw std::runtime_error("a covariance matrix is not positive definite");
  }
}

GaussianProcess::GaussianProcess(std::vector<std::vector<double>> x, std::vector<double> y, GpHyperparameters h)
    : x_(std::move(x)), h_(std::move(h)) {
  const std::size_t n = x_.size();
  if (n == 0 || y.size() != n) throw std::invalid_argument("a Gaussian process needs one value per point");
  for (const auto& p : x_) {
    if (p.size() != h_.length_scales.size()) throw std::invalid_argument("a point has the wrong dimension");
  }
  std::vector<double> k(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) k[i * n + j] = k[j * n + i] = kernel(x_[i], x_[j]) + (i == j ? h_.noise : 0.0);
  }
  chol_ = cholesky(std::move(k), n);
  alpha_ = backward(chol_, n, forward(chol_, n, y));
  double fit = 0, log_det = 0;
  for (std::size_t i = 0; i < n; ++i) {
    fit += y[i] * alpha_[i];
    log_det += std::log(chol_[i * n + i]);
  }
  log_likelihood_ = -0.5 * fit - log_det - 0.5 * static_cast<double>(n) * std::log(2 * kPi);
}

double GaussianProcess::kernel(const std::vector<double>& a, const std::vector<double>& b) const {
  double r2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) r2 += std::pow((a[i] - b[i]) / h_.length_scales[i], 2);
  const double r = std::sqrt(5 * r2);
  return h_.amplitude * (1 + r + r * r / 3) * std::exp(-r);
}

std::pair<double, double> GaussianProcess::predict(const std::vector<double>& at) const {
  const std::size_t n = x_.size();
  std::vector<double> ks(n);
  for (std::size_t i = 0; i < n; ++i) ks[i] = kernel(x_[i], at);
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += ks[i] * alpha_[i];
  const auto v = forward(chol_, n, ks);
  double var = h_.amplitude;
  for (double e : v) var -= e * e;
  return {mean, std::max(var, 0.0)};
}

std::vector<double> GaussianProcess::sample(const std::vector<std::vector<double>>& points,
                                            const std::vector<double>& z) const {
  const std::size_t n = x_.size(), m = points.size();
  if (z.size() != m) throw std::invalid_argument("one standard normal per point");
  // Posterior covariance K** - V^T V with V = L^-1 K*.
  std::vector<std::vector<double>> v(m);
  std::vector<double> mean(m, 0.0);
  for (std::size_t j = 0; j < m; ++j) {
    std::vector<double> ks(n);
    for (std::size_t i = 0; i < n; ++i) ks[i] = kernel(x_[i], points[j]);
    for (std::size_t i = 0; i < n; ++i) mean[j] += ks[i] * alpha_[i];
    v[j] = forward(chol_, n, ks);
  }
  std::vector<double> cov(m * m);
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      double s = kernel(points[a], points[b]);
      for (std::size_t i = 0; i < n; ++i) s -= v[a][i] * v[b][i];
      cov[a * m + b] = cov[b * m + a] = s + (a == b ? 1e-9 * h_.amplitude : 0.0);
    }
  }
  const auto l = cholesky(std::move(cov), m);
  std::vector<double> out = mean;
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t k = 0; k <= a; ++k) out[a] += l[a * m + k] * z[k];
  }
  return out;
}

GpHyperparameters GaussianProcess::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  const std::size_t d = x.at(0).size();
  // theta: log length scales, log amplitude, log noise; clamped to their ranges.
  auto hyper = [d](const std::vector<double>& theta) {
    GpHyperparameters h;
    for (std::size_t i = 0; i < d; ++i) h.length_scales.push_back(std::exp(std::clamp(theta[i], std::log(0.01), std::log(10.0))));
    h.amplitude = std::exp(std::clamp(theta[d], std::log(0.05), std::log(20.0)));
    h.noise = std::exp(std::clamp(theta[d + 1], std::log(1e-6), 0.0));
    return h;
  };
  auto cost = [&](const std::vector<double>& theta) {
    try {
      return -GaussianProcess(x, y, hyper(theta)).log_marginal_likelihood();
    } catch (const std::runtime_error&) {
      return 1e300;
    }
  };
  std::vector<double> best;
  double best_cost = 1e301;
  for (double scale : {0.1, 0.3, 1.0}) {  // short, middling and long length scales
    std::vector<double> start(d, std::log(scale));
    start.push_back(0.0);
    start.push_back(std::log(1e-2));
    const auto theta = nelder_mead(cost, start, 1.0, 200 * static_cast<int>(d + 2));
    if (const double c = cost(theta); c < best_cost) best_cost = c, best = theta;
  }
  return hyper(best);
}

}  // namespace hfta::search
