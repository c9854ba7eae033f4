// Loops of the direct batch-norm kernels; see batch_norm.h. Built without the
// torch header, at -O3 with `omp simd` reductions honoured (CMakeLists.txt).
#include <algorithm>
#include <cmath>
#include <vector>

#include "hfta/fusion/batch_norm.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

// A channel's values: `batch` runs of `size` contiguous values, `stride` apart.
struct Planes {
  std::int64_t batch, channels, size;
  std::int64_t count() const { return batch * size; }
};

Planes planes_of(const at::Tensor& x) { return {x.size(0), x.size(1), x.numel() / (x.size(0) * x.size(1))}; }

template <typename T>
const T* data_or_null(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

template <typename T>
T* mutable_or_null(at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// Sums in double, as LibTorch's do, taken in vector lanes (omp simd).
template <typename T, typename F>
double channel_sum(const T* __restrict__ x, const Planes& p, std::int64_t c, F f) {
  double sum = 0;
  for (std::int64_t n = 0; n < p.batch; ++n) {
    const T* __restrict__ run = x + (n * p.channels + c) * p.size;
#pragma omp simd reduction(+ : sum)
    for (std::int64_t i = 0; i < p.size; ++i) sum += f(static_cast<double>(run[i]));
  }
  return sum;
}

template <typename T>
void forward(const T* __restrict__ x, const T* weight, const T* bias, T* running_mean, T* running_var,
             double momentum, double eps, T* __restrict__ out, T* __restrict__ mean, T* __restrict__ invstd,
             const Planes& p) {
  const double count = static_cast<double>(p.count());
  for (std::int64_t c = 0; c < p.channels; ++c) {
    const double m = channel_sum(x, p, c, [](double v) { return v; }) / count;
    const double squares = channel_sum(x, p, c, [m](double v) { return (v - m) * (v - m); });
    const double is = 1.0 / std::sqrt(squares / count + eps);
    mean[c] = static_cast<T>(m);
    invstd[c] = static_cast<T>(is);
    if (running_mean != nullptr) {
      running_mean[c] = static_cast<T>(momentum * m + (1 - momentum) * running_mean[c]);
      const double unbiased = count > 1 ? squares / (count - 1) : NAN;
      running_var[c] = static_cast<T>(momentum * unbiased + (1 - momentum) * running_var[c]);
    }
    // y = x * scale + shift, in T as LibTorch's transform.
    const T w = weight != nullptr ? weight[c] : T(1), b = bias != nullptr ? bias[c] : T(0);
    const T scale = static_cast<T>(is) * w;
    const T shift = b - static_cast<T>(m) * scale;
    for (std::int64_t n = 0; n < p.batch; ++n) {
      const std::int64_t at = (n * p.channels + c) * p.size;
      const T* __restrict__ src = x + at;
      T* __restrict__ dst = out + at;
      for (std::int64_t i = 0; i < p.size; ++i) dst[i] = src[i] * scale + shift;
    }
  }
}

// grad_x = (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x - mean))) * invstd * w,
// grad_weight = sum(dy * (x - mean)) * invstd, grad_bias = sum(dy).
template <typename T>
void backward(const T* __restrict__ grad_out, const T* __restrict__ x, const T* weight, const T* mean,
              const T* invstd, T* __restrict__ grad_x, T* grad_weight, T* grad_bias, const Planes& p) {
  const double count = static_cast<double>(p.count());
  for (std::int64_t c = 0; c < p.channels; ++c) {
    const double m = mean[c];
    double sum_dy = 0, sum_dy_xmu = 0;
    for (std::int64_t n = 0; n < p.batch; ++n) {
      const std::int64_t at = (n * p.channels + c) * p.size;
      const T* __restrict__ dy = grad_out + at;
      const T* __restrict__ src = x + at;
#pragma omp simd reduction(+ : sum_dy, sum_dy_xmu)
      for (std::int64_t i = 0; i < p.size; ++i) {
        sum_dy += static_cast<double>(dy[i]);
        sum_dy_xmu += static_cast<double>(dy[i]) * (static_cast<double>(src[i]) - m);
      }
    }
    const T is = invstd[c];
    const T w = weight != nullptr ? weight[c] : T(1);
    const T mean_dy = static_cast<T>(sum_dy / count);
    const T k = static_cast<T>(sum_dy_xmu / count) * is * is;
    const T tm = mean[c], scale = is * w;
    for (std::int64_t n = 0; n < p.batch; ++n) {
      const std::int64_t at = (n * p.channels + c) * p.size;
      const T* __restrict__ dy = grad_out + at;
      const T* __restrict__ src = x + at;
      T* __restrict__ dst = grad_x + at;
      for (std::int64_t i = 0; i < p.size; ++i) dst[i] = (dy[i] - mean_dy - (src[i] - tm) * k) * scale;
    }
    if (grad_weight != nullptr) grad_weight[c] = static_cast<T>(sum_dy_xmu) * is;
    if (grad_bias != nullptr) grad_bias[c] = static_cast<T>(sum_dy);
  }
}

// The matmul layout [B, N, C]: model b's channel c is x[b, :, c]. Each model's
// rows are summed in order into per-channel double accumulators, vectorised
// across the channels, with the same formulas as the planes above.
struct Rows {
  std::int64_t models, rows, channels;
};

Rows rows_of(const at::Tensor& x) { return {x.size(0), x.size(1), x.size(2)}; }

template <typename T>
void forward_rows(const T* __restrict__ x, const T* weight, const T* bias, T* running_mean, T* running_var,
                  double momentum, double eps, T* __restrict__ out, T* __restrict__ mean, T* __restrict__ invstd,
                  const Rows& r) {
  const std::int64_t C = r.channels;
  const double count = static_cast<double>(r.rows);
  std::vector<double> sums(static_cast<std::size_t>(2 * C));
  double* __restrict__ sum = sums.data();
  double* __restrict__ squares = sum + C;
  std::vector<T> affine(static_cast<std::size_t>(2 * C));
  T* __restrict__ scale = affine.data();
  T* __restrict__ shift = scale + C;
  for (std::int64_t b = 0; b < r.models; ++b) {
    const T* __restrict__ xb = x + b * r.rows * C;
    std::fill(sums.begin(), sums.end(), 0.0);
    for (std::int64_t n = 0; n < r.rows; ++n) {
      const T* __restrict__ row = xb + n * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) sum[c] += static_cast<double>(row[c]);
    }
    for (std::int64_t c = 0; c < C; ++c) sum[c] /= count;  // now the mean
    for (std::int64_t n = 0; n < r.rows; ++n) {
      const T* __restrict__ row = xb + n * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        const double d = static_cast<double>(row[c]) - sum[c];
        squares[c] += d * d;
      }
    }
    for (std::int64_t c = 0; c < C; ++c) {
      const std::int64_t at = b * C + c;
      const double m = sum[c];
      const double is = 1.0 / std::sqrt(squares[c] / count + eps);
      mean[at] = static_cast<T>(m);
      invstd[at] = static_cast<T>(is);
      if (running_mean != nullptr) {
        running_mean[at] = static_cast<T>(momentum * m + (1 - momentum) * running_mean[at]);
        const double unbiased = count > 1 ? squares[c] / (count - 1) : NAN;
        running_var[at] = static_cast<T>(momentum * unbiased + (1 - momentum) * running_var[at]);
      }
      const T w = weight != nullptr ? weight[at] : T(1), bb = bias != nullptr ? bias[at] : T(0);
      scale[c] = static_cast<T>(is) * w;
      shift[c] = bb - static_cast<T>(m) * scale[c];
    }
    T* __restrict__ ob = out + b * r.rows * C;
    for (std::int64_t n = 0; n < r.rows; ++n) {
      const T* __restrict__ src = xb + n * C;
      T* __restrict__ dst = ob + n * C;
      for (std::int64_t c = 0; c < C; ++c) dst[c] = src[c] * scale[c] + shift[c];
    }
  }
}

template <typename T>
void backward_rows(const T* __restrict__ grad_out, const T* __restrict__ x, const T* weight, const T* mean,
                   const T* invstd, T* __restrict__ grad_x, T* grad_weight, T* grad_bias, const Rows& r) {
  const std::int64_t C = r.channels;
  const double count = static_cast<double>(r.rows);
  std::vector<double> sums(static_cast<std::size_t>(3 * C));
  double* __restrict__ sum_dy = sums.data();
  double* __restrict__ sum_dy_xmu = sum_dy + C;
  double* __restrict__ m = sum_dy_xmu + C;
  std::vector<T> terms(static_cast<std::size_t>(4 * C));
  T* __restrict__ mean_dy = terms.data();
  T* __restrict__ k = mean_dy + C;
  T* __restrict__ tm = k + C;
  T* __restrict__ scale = tm + C;
  for (std::int64_t b = 0; b < r.models; ++b) {
    const std::int64_t offset = b * r.rows * C;
    std::fill(sum_dy, sum_dy + 2 * C, 0.0);
    for (std::int64_t c = 0; c < C; ++c) m[c] = mean[b * C + c];
    for (std::int64_t n = 0; n < r.rows; ++n) {
      const T* __restrict__ dy = grad_out + offset + n * C;
      const T* __restrict__ src = x + offset + n * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        sum_dy[c] += static_cast<double>(dy[c]);
        sum_dy_xmu[c] += static_cast<double>(dy[c]) * (static_cast<double>(src[c]) - m[c]);
      }
    }
    for (std::int64_t c = 0; c < C; ++c) {
      const std::int64_t at = b * C + c;
      const T is = invstd[at];
      const T w = weight != nullptr ? weight[at] : T(1);
      mean_dy[c] = static_cast<T>(sum_dy[c] / count);
      k[c] = static_cast<T>(sum_dy_xmu[c] / count) * is * is;
      tm[c] = mean[at];
      scale[c] = is * w;
      if (grad_weight != nullptr) grad_weight[at] = static_cast<T>(sum_dy_xmu[c]) * is;
      if (grad_bias != nullptr) grad_bias[at] = static_cast<T>(sum_dy[c]);
    }
    for (std::int64_t n = 0; n < r.rows; ++n) {
      const T* __restrict__ dy = grad_out + offset + n * C;
      const T* __restrict__ src = x + offset + n * C;
      T* __restrict__ dst = grad_x + offset + n * C;
      for (std::int64_t c = 0; c < C; ++c) dst[c] = (dy[c] - mean_dy[c] - (src[c] - tm[c]) * k[c]) * scale[c];
    }
  }
}

template <typename T>
void forward_typed(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& running_mean,
                   at::Tensor& running_var, double momentum, double eps, at::Tensor& out, at::Tensor& mean,
                   at::Tensor& invstd) {
  forward(x.data_ptr<T>(), data_or_null<T>(weight), data_or_null<T>(bias), mutable_or_null<T>(running_mean),
          mutable_or_null<T>(running_var), momentum, eps, out.data_ptr<T>(), mean.data_ptr<T>(),
          invstd.data_ptr<T>(), planes_of(x));
}

template <typename T>
void backward_typed(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                    const at::Tensor& mean, const at::Tensor& invstd, at::Tensor& grad_x, at::Tensor& grad_weight,
                    at::Tensor& grad_bias) {
  backward(grad_out.data_ptr<T>(), x.data_ptr<T>(), data_or_null<T>(weight), mean.data_ptr<T>(),
           invstd.data_ptr<T>(), grad_x.data_ptr<T>(), mutable_or_null<T>(grad_weight),
           mutable_or_null<T>(grad_bias), planes_of(x));
}

}  // namespace

HFTA_VECTOR_CLONES
void batch_norm_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps,
                            at::Tensor& out, at::Tensor& mean, at::Tensor& invstd) {
  if (x.scalar_type() == at::kDouble) {
    forward_typed<double>(x, weight, bias, running_mean, running_var, momentum, eps, out, mean, invstd);
  } else {
    forward_typed<float>(x, weight, bias, running_mean, running_var, momentum, eps, out, mean, invstd);
  }
}

HFTA_VECTOR_CLONES
void batch_norm_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                             const at::Tensor& mean, const at::Tensor& invstd, at::Tensor& grad_x,
                             at::Tensor& grad_weight, at::Tensor& grad_bias) {
  if (x.scalar_type() == at::kDouble) {
    backward_typed<double>(grad_out, x, weight, mean, invstd, grad_x, grad_weight, grad_bias);
  } else {
    backward_typed<float>(grad_out, x, weight, mean, invstd, grad_x, grad_weight, grad_bias);
  }
}

HFTA_VECTOR_CLONES
void batch_norm_rows_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                 at::Tensor& running_mean, at::Tensor& running_var, double momentum, double eps,
                                 at::Tensor& out, at::Tensor& mean, at::Tensor& invstd) {
  if (x.scalar_type() == at::kDouble) {
    forward_rows<double>(x.data_ptr<double>(), data_or_null<double>(weight), data_or_null<double>(bias),
                         mutable_or_null<double>(running_mean), mutable_or_null<double>(running_var), momentum, eps,
                         out.data_ptr<double>(), mean.data_ptr<double>(), invstd.data_ptr<double>(), rows_of(x));
  } else {
    forward_rows<float>(x.data_ptr<float>(), data_or_null<float>(weight), data_or_null<float>(bias),
                        mutable_or_null<float>(running_mean), mutable_or_null<float>(running_var), momentum, eps,
                        out.data_ptr<float>(), mean.data_ptr<float>(), invstd.data_ptr<float>(), rows_of(x));
  }
}

HFTA_VECTOR_CLONES
void batch_norm_rows_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                                  const at::Tensor& mean, const at::Tensor& invstd, at::Tensor& grad_x,
                                  at::Tensor& grad_weight, at::Tensor& grad_bias) {
  if (x.scalar_type() == at::kDouble) {
    backward_rows<double>(grad_out.data_ptr<double>(), x.data_ptr<double>(), data_or_null<double>(weight),
                          mean.data_ptr<double>(), invstd.data_ptr<double>(), grad_x.data_ptr<double>(),
                          mutable_or_null<double>(grad_weight), mutable_or_null<double>(grad_bias), rows_of(x));
  } else {
    backward_rows<float>(grad_out.data_ptr<float>(), x.data_ptr<float>(), data_or_null<float>(weight),
                         mean.data_ptr<float>(), invstd.data_ptr<float>(), grad_x.data_ptr<float>(),
                         mutable_or_null<float>(grad_weight), mutable_or_null<float>(grad_bias), rows_of(x));
  }
}

}  // namespace hfta::fusion
