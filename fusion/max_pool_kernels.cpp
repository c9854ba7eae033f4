// Loops of the direct max-pooling kernels; see max_pool.h. Built without the
// torch header, at -O3 (CMakeLists.txt).
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "hfta/fusion/max_pool.h"

namespace hfta::fusion {
namespace {

struct Plane {
  std::int64_t planes, h, w, oh, ow;
};

Plane plane_of(const at::Tensor& x, std::int64_t k) {
  const std::int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  return {n * c, h, w, h / k, w / k};
}

template <typename T>
void forward(const T* in, T* out, std::uint8_t* winner, const Plane& p, std::int64_t k) {
  for (std::int64_t plane = 0; plane < p.planes; ++plane) {
    const T* src = in + plane * p.h * p.w;
    for (std::int64_t i = 0; i < p.oh; ++i) {
      for (std::int64_t j = 0; j < p.ow; ++j) {
        // at::max_pool2d's rule: replace on a greater value or on NaN; the
        // window's first position stands when nothing beats -inf.
        T best = -std::numeric_limits<T>::infinity();
        std::uint8_t at = 0;
        for (std::int64_t r = 0; r < k; ++r) {
          const T* row = src + (i * k + r) * p.w + j * k;
          for (std::int64_t s = 0; s < k; ++s) {
            const T v = row[s];
            if (v > best || std::isnan(v)) {
              best = v;
              at = static_cast<std::uint8_t>(r * k + s);
            }
          }
        }
        *out++ = best;
        *winner++ = at;
      }
    }
  }
}

template <typename T>
void backward(const T* grad_out, const std::uint8_t* winner, T* grad_in, const Plane& p,
              std::int64_t k) {
  for (std::int64_t plane = 0; plane < p.planes; ++plane) {
    T* dst = grad_in + plane * p.h * p.w;
    // Floor mode leaves the last rows and columns out of every window.
    std::memset(static_cast<void*>(dst), 0, sizeof(T) * p.h * p.w);
    for (std::int64_t i = 0; i < p.oh; ++i) {
      for (std::int64_t j = 0; j < p.ow; ++j) {
        const std::uint8_t at = *winner++;
        dst[(i * k + at / k) * p.w + j * k + at % k] = *grad_out++;
      }
    }
  }
}

void check(const at::Tensor& t, const char* what) {
  if (!t.is_cpu() || !t.is_contiguous() || t.dim() != 4)
    throw std::invalid_argument(std::string("max_pool2d kernel: ") + what +
                                " must be a contiguous 4-D CPU tensor");
}

}  // namespace

void max_pool2d_forward_cpu(const at::Tensor& x, std::int64_t kernel, at::Tensor& out,
                            at::Tensor& winner) {
  check(x, "input");
  check(out, "output");
  check(winner, "winner");
  const Plane p = plane_of(x, kernel);
  auto* w = winner.data_ptr<std::uint8_t>();
  if (x.scalar_type() == at::kFloat) {
    forward(x.data_ptr<float>(), out.data_ptr<float>(), w, p, kernel);
  } else if (x.scalar_type() == at::kDouble) {
    forward(x.data_ptr<double>(), out.data_ptr<double>(), w, p, kernel);
  } else {
    throw std::invalid_argument("max_pool2d kernel: float or double only");
  }
}

void max_pool2d_backward_cpu(const at::Tensor& grad_out, const at::Tensor& winner,
                             std::int64_t kernel, at::Tensor& grad_in) {
  check(grad_out, "gradient");
  check(grad_in, "input gradient");
  const Plane p = plane_of(grad_in, kernel);
  const auto* w = winner.data_ptr<std::uint8_t>();
  if (grad_in.scalar_type() == at::kFloat) {
    backward(grad_out.data_ptr<float>(), w, grad_in.data_ptr<float>(), p, kernel);
  } else {
    backward(grad_out.data_ptr<double>(), w, grad_in.data_ptr<double>(), p, kernel);
  }
}

}  // namespace hfta::fusion
