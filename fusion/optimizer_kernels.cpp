#include "hfta/fusion/optimizer_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

// Elements per parallel task: rows are split so small models still use every thread.
constexpr std::int64_t kGrain = 1 << 14;

// Calls f(row, begin, end) over [begin, end) spans of each row, in parallel.
template <typename F>
void for_each_span(std::int64_t rows, std::int64_t n, F f) {
  at::parallel_for(0, rows * n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    while (begin < end) {
      const std::int64_t row = begin / n, stop = std::min(end, (row + 1) * n);
      f(row, begin, stop);
      begin = stop;
    }
  });
}

// The element loops below have one instance per case, so no loop holds a branch
// and the compiler vectorises each, with an AVX2 clone chosen at run time where
// the CPU has it (fusion/CMakeLists.txt builds this file with -O3 and without
// errno from sqrt, which would stop vectorisation). No FMA: every operation
// rounds as LibTorch's tensor ops do.

template <typename T, bool L2, bool Momentum, bool First, bool Nesterov>
HFTA_VECTOR_CLONES_EXACT void sgd_span(T* __restrict p, const T* __restrict g, T* __restrict buf, std::int64_t count,
                               T wd, T m, T one_minus_damp, T neg_lr) {
  for (std::int64_t i = 0; i < count; ++i) {
    T d = L2 ? g[i] + wd * p[i] : g[i];  // grad.add(p, weight_decay)
    if (Momentum) {
      const T b = First ? d : buf[i] * m + one_minus_damp * d;  // mul_(momentum).add_(d_p, 1 - dampening)
      buf[i] = b;
      d = Nesterov ? d + m * b : b;
    }
    p[i] = p[i] + neg_lr * d;  // add_(d_p, -lr)
  }
}

template <typename T, bool L2, bool Decoupled, bool AmsGrad>
HFTA_VECTOR_CLONES_EXACT void adam_span(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                                T* __restrict vmax, std::int64_t count, T b1, T b2, T one_minus_b1, T one_minus_b2,
                                T eps, T wd, T decay, T neg_step, T sqrt_bc2) {
  for (std::int64_t i = 0; i < count; ++i) {
    T pi = p[i];
    if (Decoupled) pi = pi * decay;                   // AdamW: mul_(1 - lr * weight_decay)
    const T gi = L2 ? g[i] + wd * pi : g[i];          // Adam: grad.add(p, weight_decay)
    const T mi = m[i] * b1 + one_minus_b1 * gi;       // mul_(beta1).add_(grad, 1 - beta1)
    const T vi = v[i] * b2 + one_minus_b2 * gi * gi;  // mul_(beta2).addcmul_(grad, grad, 1 - beta2)
    T second = vi;
    if (AmsGrad) second = vmax[i] = vmax[i] > vi ? vmax[i] : vi;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + neg_step * (mi / (std::sqrt(second) / sqrt_bc2 + eps));  // addcdiv_(exp_avg, denom, -step)
  }
}

// Picks the instance for a row's flags (each template flag from one boolean).
template <typename T, bool... Fixed>
struct SgdCase {
  static void run(const std::vector<bool>& flags, T* p, const T* g, T* buf, std::int64_t count, T wd, T m, T omd,
                  T neg_lr) {
    if constexpr (sizeof...(Fixed) == 4) {
      sgd_span<T, Fixed...>(p, g, buf, count, wd, m, omd, neg_lr);
    } else if (flags[sizeof...(Fixed)]) {
      SgdCase<T, Fixed..., true>::run(flags, p, g, buf, count, wd, m, omd, neg_lr);
    } else {
      SgdCase<T, Fixed..., false>::run(flags, p, g, buf, count, wd, m, omd, neg_lr);
    }
  }
};

template <typename T, bool... Fixed>
struct AdamCase {
  template <typename... Args>
  static void run(const std::vector<bool>& flags, Args... args) {
    if constexpr (sizeof...(Fixed) == 3) {
      adam_span<T, Fixed...>(args...);
    } else if (flags[sizeof...(Fixed)]) {
      AdamCase<T, Fixed..., true>::run(flags, args...);
    } else {
      AdamCase<T, Fixed..., false>::run(flags, args...);
    }
  }
};

std::atomic<bool> kernels_enabled{true};

}  // namespace

void set_cpu_kernels_enabled(bool enabled) { kernels_enabled = enabled; }

bool cpu_kernel_applies(const std::vector<at::Tensor>& tensors) {
  if (!kernels_enabled) return false;
  for (const auto& t : tensors) {
    if (!t.defined()) continue;
    if (!t.device().is_cpu() || !t.is_contiguous() || t.scalar_type() != tensors.front().scalar_type()) return false;
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kDouble) return false;
  }
  return true;
}

void sgd_rows(at::Tensor& param, const at::Tensor& grad, at::Tensor& momentum_buffer,
              const std::vector<SgdRow>& rows) {
  const std::int64_t k = param.size(0), n = param.numel() / std::max<std::int64_t>(k, 1);
  AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "sgd_rows", [&] {
    using T = scalar_t;
    T* p = param.data_ptr<T>();
    const T* g = grad.data_ptr<T>();
    T* buf = momentum_buffer.defined() ? momentum_buffer.data_ptr<T>() : nullptr;
    for_each_span(k, n, [&](std::int64_t row, std::int64_t begin, std::int64_t end) {
      const SgdRow& h = rows[static_cast<std::size_t>(row)];
      const bool momentum = h.momentum != 0 && buf;
      // Scalars in the tensor's dtype, as LibTorch's ops take them.
      SgdCase<T>::run({h.weight_decay != 0, momentum, h.first_step, h.nesterov}, p + begin, g + begin,
                      buf ? buf + begin : nullptr, end - begin, static_cast<T>(h.weight_decay),
                      static_cast<T>(h.momentum), static_cast<T>(1 - h.dampening), static_cast<T>(-h.lr));
    });
  });
}

void adam_rows(at::Tensor& param, const at::Tensor& grad, at::Tensor& exp_avg, at::Tensor& exp_avg_sq,
               at::Tensor& max_exp_avg_sq, const std::vector<AdamRow>& rows) {
  const std::int64_t k = param.size(0), n = param.numel() / std::max<std::int64_t>(k, 1);
  AT_DISPATCH_FLOATING_TYPES(param.scalar_type(), "adam_rows", [&] {
    using T = scalar_t;
    T* p = param.data_ptr<T>();
    const T* g = grad.data_ptr<T>();
    T* m = exp_avg.data_ptr<T>();
    T* v = exp_avg_sq.data_ptr<T>();
    T* vmax = max_exp_avg_sq.defined() ? max_exp_avg_sq.data_ptr<T>() : nullptr;
    for_each_span(k, n, [&](std::int64_t row, std::int64_t begin, std::int64_t end) {
      const AdamRow& h = rows[static_cast<std::size_t>(row)];
      const bool decoupled = h.decay != 1;
      AdamCase<T>::run({!decoupled && h.weight_decay != 0, decoupled, h.amsgrad && vmax}, p + begin, g + begin,
                       m + begin, v + begin, vmax ? vmax + begin : nullptr, end - begin, static_cast<T>(h.beta1),
                       static_cast<T>(h.beta2), static_cast<T>(1 - h.beta1), static_cast<T>(1 - h.beta2),
                       static_cast<T>(h.eps), static_cast<T>(h.weight_decay), static_cast<T>(h.decay),
                       static_cast<T>(-h.step_size), static_cast<T>(h.sqrt_bias_correction2));
    });
  });
}

}  // namespace hfta::fusion
