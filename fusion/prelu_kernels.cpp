// Loops of the direct PReLU kernels; see prelu.h. Built without the torch
// header, at -O3 (CMakeLists.txt).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "hfta/fusion/prelu.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

struct Shape {
  std::int64_t n, c, inner;
};

Shape shape_of(const at::Tensor& x) {
  std::int64_t inner = 1;
  for (std::int64_t d = 2; d < x.dim(); ++d) inner *= x.size(d);
  return {x.size(0), x.dim() > 1 ? x.size(1) : 1, inner};
}

template <typename T>
void forward(const T* x, const T* slope, T* y, const Shape& s) {
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t c = 0; c < s.c; ++c, x += s.inner, y += s.inner) {
      const T a = slope[c];
#pragma omp simd
      for (std::int64_t i = 0; i < s.inner; ++i) {
        // Both sides computed, then selected (-fno-trapping-math lets the
        // compiler compute the product everywhere; a branch would not vectorise).
        const T v = x[i], scaled = a * v;
        y[i] = v > 0 ? v : scaled;
      }
    }
  }
}

// The slope gradient sums x * g over a whole channel: in float its rounding
// would depend on the SIMD width the CPU's clone reduces with (the same
// program gave a relative error of 1.4e-5 against LibTorch's on one build, 1e-6
// on another), so float sums in double, whatever the vector width.
template <typename T>
using Accumulator = std::conditional_t<std::is_same_v<T, float>, double, T>;

template <typename T>
void backward(const T* x, const T* slope, const T* g, T* gx, T* gslope, const Shape& s) {
  using A = Accumulator<T>;
  std::vector<A> sums(static_cast<std::size_t>(s.c), A(0));
  for (std::int64_t n = 0; n < s.n; ++n) {
    for (std::int64_t c = 0; c < s.c; ++c, x += s.inner, g += s.inner, gx += s.inner) {
      const T a = slope[c];
      A sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t i = 0; i < s.inner; ++i) {
        const T v = x[i], d = g[i], scaled = a * d;
        const A share = A(v) * A(d);  // exact in double
        const bool pass = v > 0;
        gx[i] = pass ? d : scaled;
        sum += pass ? A(0) : share;
      }
      sums[static_cast<std::size_t>(c)] += sum;
    }
  }
  for (std::int64_t c = 0; c < s.c; ++c) gslope[c] += static_cast<T>(sums[static_cast<std::size_t>(c)]);
}

void check(const at::Tensor& t, const char* what) {
  if (!t.is_cpu() || !t.is_contiguous() || t.dim() < 1) {
    throw std::invalid_argument(std::string("prelu kernel: ") + what + " must be a contiguous CPU tensor");
  }
}

}  // namespace

HFTA_VECTOR_CLONES
void prelu_forward_cpu(const at::Tensor& x, const at::Tensor& slopes, at::Tensor& y) {
  check(x, "input");
  check(slopes, "slopes");
  check(y, "output");
  const Shape s = shape_of(x);
  if (x.scalar_type() == at::kFloat) {
    forward(x.data_ptr<float>(), slopes.data_ptr<float>(), y.data_ptr<float>(), s);
  } else if (x.scalar_type() == at::kDouble) {
    forward(x.data_ptr<double>(), slopes.data_ptr<double>(), y.data_ptr<double>(), s);
  } else {
    throw std::invalid_argument("prelu kernel: float or double only");
  }
}

HFTA_VECTOR_CLONES
void prelu_backward_cpu(const at::Tensor& x, const at::Tensor& slopes, const at::Tensor& grad_y,
                        at::Tensor& grad_x, at::Tensor& grad_slopes) {
  check(x, "input");
  check(grad_y, "gradient");
  check(grad_x, "input gradient");
  check(grad_slopes, "slope gradient");
  const Shape s = shape_of(x);
  if (x.scalar_type() == at::kFloat) {
    backward(x.data_ptr<float>(), slopes.data_ptr<float>(), grad_y.data_ptr<float>(), grad_x.data_ptr<float>(),
             grad_slopes.data_ptr<float>(), s);
  } else {
    backward(x.data_ptr<double>(), slopes.data_ptr<double>(), grad_y.data_ptr<double>(), grad_x.data_ptr<double>(),
             grad_slopes.data_ptr<double>(), s);
  }
}

}  // namespace hfta::fusion
