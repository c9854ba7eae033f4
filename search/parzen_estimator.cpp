#include "hfta/search/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hfta/search/param_scale.h"
#include "hfta/search/param_value.h"

namespace hfta::search {
namespace {

constexpr double kPriorWeight = 1.0;  // Optuna's prior_weight

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double log_sum_exp(const std::vector<double>& terms) {
  const double top = *std::max_element(terms.begin(), terms.end());
  if (!std::isfinite(top)) return top;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

}  // namespace

std::vector<double> age_weights(std::size_t n) {
  std::vector<double> w(n, 1.0);
  if (n <= 25) return w;
  const std::size_t ramp = n - 25;
  const double first = 1.0 / static_cast<double>(n);
  for (std::size_t i = 0; i < ramp; ++i) {
    w[i] = ramp == 1 ? first : first + (1.0 - first) * static_cast<double>(i) / static_cast<double>(ramp - 1);
  }
  return w;
}

double ParzenEstimator::joint_width(std::size_t results, std::size_t dims) {
  return 0.2 * std::pow(static_cast<double>(std::max<std::size_t>(results, 1)), -1.0 / (static_cast<double>(dims) + 4));
}

ParzenEstimator::ParzenEstimator(const ParameterSpec& parameter, const std::vector<ParamValue>& values, double width)
    : p_(parameter), categorical_(is_categorical(parameter.distribution)) {
  const std::size_t n = values.size();
  weights_ = age_weights(n);
  weights_.push_back(kPriorWeight);
  const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= total;

  if (categorical_) {
    // Every kernel has the prior's share of each value; a result's kernel one more of its own.
    for (std::size_t i = 0; i <= n; ++i) {
      std::vector<double> row(p_.values.size(), kPriorWeight / static_cast<double>(n + 1));
      if (i < n) {
        for (std::size_t v = 0; v < row.size(); ++v) row[v] += same(p_.values[v], values[i]) ? 1.0 : 0.0;
      }
      const double sum = std::accumulate(row.begin(), row.end(), 0.0);
      for (double& r : row) r /= sum;
      probabilities_.push_back(std::move(row));
    }
    return;
  }
  discrete_ = p_.distribution == Distribution::kIntUniform || p_.distribution == Distribution::kIntLogUniform ||
              (p_.distribution == Distribution::kQuantized && !p_.log);
  std::tie(lo_, hi_) = scaled_range(p_);
  for (const auto& v : values) mu_.push_back(to_scale(p_, as_double(v)));
  mu_.push_back(0.5 * (lo_ + hi_));  // the prior

  // Each kernel as wide as the larger gap to its neighbours in sorted order,
  // the range's ends counting as neighbours but for the outermost kernels
  // (Optuna's consider_endpoints=False), which take their inner gap.
  const std::size_t k = mu_.size();
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return mu_[a] < mu_[b]; });
  std::vector<double> e{lo_};
  for (std::size_t i : order) e.push_back(mu_[i]);
  e.push_back(hi_);
  sigma_.assign(k, width * (hi_ - lo_));
  for (std::size_t i = 0; i < k && width <= 0; ++i) {
    double width = std::max(e[i + 1] - e[i], e[i + 2] - e[i + 1]);
    if (k >= 2 && i == 0) width = e[2] - e[1];
    if (k >= 2 && i == k - 1) width = e[k] - e[k - 1];
    sigma_[order[i]] = width;
  }
  const double range = hi_ - lo_;
  const double narrowest = range / std::min(100.0, 1.0 + static_cast<double>(k));  // the magic clip
  for (double& s : sigma_) s = std::clamp(s, narrowest, range);
  sigma_.back() = range;
}

std::size_t ParzenEstimator::kernel(Rng& rng) const {
  double u = rng.uniform();
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    if ((u -= weights_[i]) < 0) return i;
  }
  return weights_.size() - 1;
}

ParamValue ParzenEstimator::sample(Rng& rng) const { return sample(kernel(rng), rng); }

ParamValue ParzenEstimator::sample(std::size_t k, Rng& rng) const {
  if (categorical_) {
    double v = rng.uniform();
    for (std::size_t i = 0; i < p_.values.size(); ++i) {
      if ((v -= probabilities_[k][i]) < 0) return p_.values[i];
    }
    return p_.values.back();
  }
  // Truncated to the range by drawing again: a kernel's centre is in the
  // range and its width at most the range's, so a draw lands in it at least a
  // third of the time.
  for (int attempt = 0; attempt < 64; ++attempt) {
    const double t = mu_[k] + sigma_[k] * rng.normal();
    if (t >= lo_ && t <= hi_) return from_scale(p_, t);
  }
  return from_scale(p_, std::clamp(mu_[k], lo_, hi_));
}

double ParzenEstimator::log_kernel(const ParamValue& x, std::size_t k) const {
  if (categorical_) {
    for (std::size_t v = 0; v < p_.values.size(); ++v) {
      if (same(p_.values[v], x)) return std::log(probabilities_[k][v]);
    }
    return -INFINITY;
  }
  const double m = mu_[k], s = sigma_[k];
  const double in_range = std::max(normal_cdf((hi_ - m) / s) - normal_cdf((lo_ - m) / s), 1e-300);
  if (discrete_) {  // the interval the value owns, on the scale
    const double half = p_.distribution == Distribution::kQuantized ? p_.q / 2 : 0.5;
    const double v = as_double(x);
    const double a = std::max(v - half > 0 || !log_scale(p_) ? to_scale(p_, v - half) : lo_, lo_);
    const double b = std::min(to_scale(p_, v + half), hi_);
    return std::log(std::max(normal_cdf((b - m) / s) - normal_cdf((a - m) / s), 1e-300)) - std::log(in_range);
  }
  const double z = (to_scale(p_, as_double(x)) - m) / s;
  return -0.5 * z * z - std::log(s * std::sqrt(2.0 * M_PI) * in_range);
}

double ParzenEstimator::log_pdf(const ParamValue& x) const {
  std::vector<double> terms;
  for (std::size_t k = 0; k < weights_.size(); ++k) terms.push_back(std::log(weights_[k]) + log_kernel(x, k));
  return log_sum_exp(terms);
}

std::vector<ParamValue> joint_sample(const std::vector<ParzenEstimator>& dims, Rng& rng) {
  const std::size_t k = dims.at(0).kernel(rng);
  std::vector<ParamValue> x;
  for (const auto& d : dims) x.push_back(d.sample(k, rng));
  return x;
}

double joint_log_pdf(const std::vector<ParzenEstimator>& dims, const std::vector<ParamValue>& x) {
  std::vector<double> terms;
  for (std::size_t k = 0; k < dims.at(0).weights().size(); ++k) {
    double t = std::log(dims[0].weights()[k]);
    for (std::size_t j = 0; j < dims.size(); ++j) t += dims[j].log_kernel(x[j], k);
    terms.push_back(t);
  }
  return log_sum_exp(terms);
}

}  // namespace hfta::search
