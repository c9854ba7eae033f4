// Loops of the direct batch-norm kernels; see batch_norm.h. Built without the
// torch header, at -O3 with `omp simd` reductions honoured (CMakeLists.txt).
#include <cmath>

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

}  // namespace hfta::fusion
