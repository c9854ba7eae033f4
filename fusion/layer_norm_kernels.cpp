// Loops of the direct layer-norm kernels; see layer_norm.h. Built without the
// torch header, at -O3 (CMakeLists.txt).
#include <algorithm>
#include <cmath>

#include "hfta/fusion/layer_norm.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

struct Rows {
  std::int64_t models, rows, dim;
};

Rows rows_of(const at::Tensor& x) { return {x.size(0), x.size(1), x.size(2)}; }

// The row loops are written for the vectoriser: restrict pointers (outputs
// never alias inputs) and `omp simd` reductions (compiled with -fopenmp-simd,
// no OpenMP runtime), which allow a sum to be taken in vector lanes; the
// compiler may not reorder a floating-point sum otherwise.
template <typename T>
void forward(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias, T eps,
             T* __restrict__ out, T* __restrict__ mean, T* __restrict__ rstd, const Rows& s) {
  const std::int64_t dim = s.dim;
  const T inv_dim = T(1) / static_cast<T>(dim);
  for (std::int64_t b = 0; b < s.models; ++b) {
    const T* __restrict__ w = weight + b * dim;
    const T* __restrict__ shift = bias + b * dim;
    for (std::int64_t r = 0; r < s.rows; ++r, x += dim, out += dim) {
      // Two passes over a row in cache: the mean, then the variance about it.
      T sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t i = 0; i < dim; ++i) sum += x[i];
      const T m = sum * inv_dim;
      T squares = 0;
#pragma omp simd reduction(+ : squares)
      for (std::int64_t i = 0; i < dim; ++i) squares += (x[i] - m) * (x[i] - m);
      const T rs = T(1) / std::sqrt(squares * inv_dim + eps);
      for (std::int64_t i = 0; i < dim; ++i) out[i] = (x[i] - m) * rs * w[i] + shift[i];
      *mean++ = m;
      *rstd++ = rs;
    }
  }
}

// With xhat = (x - mean) * rstd and g = grad_out * weight (the gradient at xhat):
// grad_x = rstd * (g - mean(g) - xhat * mean(g * xhat)), the layer norm's
// backward; grad_weight sums grad_out * xhat and grad_bias grad_out over rows.
template <typename T>
void backward(const T* __restrict__ grad_out, const T* __restrict__ x, const T* __restrict__ weight,
              const T* __restrict__ mean, const T* __restrict__ rstd, T* __restrict__ grad_x,
              T* __restrict__ grad_weight, T* __restrict__ grad_bias, const Rows& s) {
  const std::int64_t dim = s.dim;
  const T inv_dim = T(1) / static_cast<T>(dim);
  for (std::int64_t b = 0; b < s.models; ++b) {
    const T* __restrict__ w = weight + b * dim;
    T* __restrict__ gw = grad_weight + b * dim;
    T* __restrict__ gb = grad_bias + b * dim;
    std::fill(gw, gw + dim, T(0));
    std::fill(gb, gb + dim, T(0));
    for (std::int64_t r = 0; r < s.rows; ++r, x += dim, grad_out += dim, grad_x += dim) {
      const T m = *mean++, rs = *rstd++;
      const T* __restrict__ dy = grad_out;
      T sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
      for (std::int64_t i = 0; i < dim; ++i) {
        sum_g += dy[i] * w[i];
        sum_gx += dy[i] * w[i] * (x[i] - m);
      }
      const T mean_g = sum_g * inv_dim, mean_gx = sum_gx * rs * inv_dim;
      for (std::int64_t i = 0; i < dim; ++i) {
        const T xhat = (x[i] - m) * rs;
        gw[i] += dy[i] * xhat;
        gb[i] += dy[i];
        grad_x[i] = rs * (dy[i] * w[i] - mean_g - xhat * mean_gx);
      }
    }
  }
}

}  // namespace

HFTA_VECTOR_CLONES
void layer_norm_forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            double eps, at::Tensor& out, at::Tensor& mean, at::Tensor& rstd) {
  const Rows s = rows_of(x);
  if (x.scalar_type() == at::kDouble) {
    forward(x.data_ptr<double>(), weight.data_ptr<double>(), bias.data_ptr<double>(), eps,
            out.data_ptr<double>(), mean.data_ptr<double>(), rstd.data_ptr<double>(), s);
  } else {
    forward(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), static_cast<float>(eps),
            out.data_ptr<float>(), mean.data_ptr<float>(), rstd.data_ptr<float>(), s);
  }
}

HFTA_VECTOR_CLONES
void layer_norm_backward_cpu(const at::Tensor& grad_out, const at::Tensor& x, const at::Tensor& weight,
                             const at::Tensor& mean, const at::Tensor& rstd, at::Tensor& grad_x,
                             at::Tensor& grad_weight, at::Tensor& grad_bias) {
  const Rows s = rows_of(x);
  if (x.scalar_type() == at::kDouble) {
    backward(grad_out.data_ptr<double>(), x.data_ptr<double>(), weight.data_ptr<double>(),
             mean.data_ptr<double>(), rstd.data_ptr<double>(), grad_x.data_ptr<double>(),
             grad_weight.data_ptr<double>(), grad_bias.data_ptr<double>(), s);
  } else {
    backward(grad_out.data_ptr<float>(), x.data_ptr<float>(), weight.data_ptr<float>(), mean.data_ptr<float>(),
             rstd.data_ptr<float>(), grad_x.data_ptr<float>(), grad_weight.data_ptr<float>(),
             grad_bias.data_ptr<float>(), s);
  }
}

}  // namespace hfta::fusion
