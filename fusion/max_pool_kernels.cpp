// Loops of the direct max-pooling kernels; see max_pool.h. Built without the
// torch header, at -O3 (CMakeLists.txt).
#include <algorithm>
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

// The general rule, for any window. K > 0: the kernel size known at compile
// time (3); K == 0: `k`. The selection is written as selects rather than
// branches (on real activations the comparisons are unpredictable: a branchy
// first version ran at LibTorch's speed, 7x slower than a plain max loop);
// this still keeps a serial chain per window, so 2x2 windows take forward2.
template <typename T, int K>
void forward(const T* in, T* out, std::uint8_t* winner, const Plane& p, std::int64_t k_runtime) {
  const std::int64_t k = K > 0 ? K : k_runtime;
  for (std::int64_t plane = 0; plane < p.planes; ++plane) {
    const T* src = in + plane * p.h * p.w;
    for (std::int64_t i = 0; i < p.oh; ++i) {
      const T* top = src + i * k * p.w;
      for (std::int64_t j = 0; j < p.ow; ++j) {
        // at::max_pool2d's rule: replace on a greater value or on NaN. Starting
        // from the window's first value is the same as starting from -inf with
        // the first position standing.
        T best = top[j * k];
        std::uint8_t at = 0;
        for (std::int64_t r = 0; r < k; ++r) {
          const T* row = top + r * p.w + j * k;
          for (std::int64_t s = (r == 0 ? 1 : 0); s < k; ++s) {
            const T v = row[s];
            const bool take = (v > best) | (v != v);
            best = take ? v : best;
            at = take ? static_cast<std::uint8_t>(r * k + s) : at;
          }
        }
        *out++ = best;
        *winner++ = at;
      }
    }
  }
}

template <typename T, int K>
void backward(const T* grad_out, const std::uint8_t* winner, T* grad_in, const Plane& p, std::int64_t k_runtime) {
  const std::int64_t k = K > 0 ? K : k_runtime;
  for (std::int64_t plane = 0; plane < p.planes; ++plane) {
    T* dst = grad_in + plane * p.h * p.w;
    // Zeros, then each window's winner gets its gradient (faster here than
    // writing every window whole); floor mode leaves the last rows and columns
    // out of every window.
    std::fill(dst, dst + p.h * p.w, T(0));
    for (std::int64_t i = 0; i < p.oh; ++i) {
      for (std::int64_t j = 0; j < p.ow; ++j) {
        const std::int64_t at = *winner++;
        const T g = *grad_out++;
        if (at != kNoWinner) dst[(i * k + at / k) * p.w + j * k + at % k] = g;
      }
    }
  }
}

// 2x2 windows, the LeNet case: the maximum by comparisons the compiler turns
// into max instructions, and the first position holding it by arithmetic on
// the comparisons (a branch per window, unpredictable on real activations, cost
// 4x). A row with a NaN (rare) is redone by the general rule.
template <typename T>
void forward2(const T* in, T* out, std::uint8_t* winner, const Plane& p) {
  const std::int64_t w = p.w, ow = p.ow, oh = p.oh, plane_size = p.h * p.w;
  for (std::int64_t plane = 0; plane < p.planes; ++plane) {
    const T* src = in + plane * plane_size;
    for (std::int64_t i = 0; i < oh; ++i, out += ow, winner += ow) {
      const T* r0 = src + 2 * i * w;
      const T* r1 = r0 + w;
      int nan = 0;
      for (std::int64_t j = 0; j < ow; ++j) {
        const T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
        const T ab = a < b ? b : a, cd = c < d ? d : c;
        const T m = ab < cd ? cd : ab;
        const int na = a != m, nb = b != m, nc = c != m;
        out[j] = m;
        winner[j] = static_cast<std::uint8_t>(na + (na & nb) + (na & nb & nc));
        nan |= (a != a) | (b != b) | (c != c) | (d != d);
      }
      if (nan) forward<T, 2>(r0, out, winner, Plane{1, 2, w, 1, ow}, 2);
    }
  }
}

template <typename T>
void forward_any(const T* in, T* out, std::uint8_t* winner, const Plane& p, std::int64_t k) {
  if (k == 2) return forward2<T>(in, out, winner, p);
  if (k == 3) return forward<T, 3>(in, out, winner, p, k);
  forward<T, 0>(in, out, winner, p, k);
}

template <typename T>
void backward_any(const T* grad_out, const std::uint8_t* winner, T* grad_in, const Plane& p, std::int64_t k) {
  if (k == 2) return backward<T, 2>(grad_out, winner, grad_in, p, k);
  if (k == 3) return backward<T, 3>(grad_out, winner, grad_in, p, k);
  backward<T, 0>(grad_out, winner, grad_in, p, k);
}

// ReLU after the pooling, as at::relu and its backward (threshold_backward)
// do it: a value at most 0 becomes 0 and passes no gradient; NaN stays NaN and
// passes its gradient.
template <typename T>
void relu(T* out, std::uint8_t* winner, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const bool cut = out[i] <= 0;
    out[i] = cut ? T(0) : out[i];
    winner[i] = cut ? kNoWinner : winner[i];
  }
}

void check(const at::Tensor& t, const char* what) {
  if (!t.is_cpu() || !t.is_contiguous() || t.dim() != 4)
    throw std::invalid_argument(std::string("max_pool2d kernel: ") + what +
                                " must be a contiguous 4-D CPU tensor");
}

}  // namespace

void max_pool2d_forward_cpu(const at::Tensor& x, std::int64_t kernel, at::Tensor& out,
                            at::Tensor& winner, bool with_relu) {
  check(x, "input");
  check(out, "output");
  check(winner, "winner");
  const Plane p = plane_of(x, kernel);
  auto* w = winner.data_ptr<std::uint8_t>();
  if (x.scalar_type() == at::kFloat) {
    forward_any(x.data_ptr<float>(), out.data_ptr<float>(), w, p, kernel);
    if (with_relu) relu(out.data_ptr<float>(), w, out.numel());
  } else if (x.scalar_type() == at::kDouble) {
    forward_any(x.data_ptr<double>(), out.data_ptr<double>(), w, p, kernel);
    if (with_relu) relu(out.data_ptr<double>(), w, out.numel());
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
    backward_any(grad_out.data_ptr<float>(), w, grad_in.data_ptr<float>(), p, kernel);
  } else {
    backward_any(grad_out.data_ptr<double>(), w, grad_in.data_ptr<double>(), p, kernel);
  }
}

}  // namespace hfta::fusion
