#include "hfta/fusion/batched_matmul.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "hfta/fusion/matmul_bias.h"
#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Fortran BLAS gemm: C = alpha * op(A) * op(B) + beta * C, column-major.
template <typename T>
using Gemm = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                      const T* alpha, const T* a, const int* lda, const T* b, const int* ldb, const T* beta,
                      T* c, const int* ldc);

// The gemm of the BLAS already loaded with LibTorch, found at run time: linking
// one ourselves could pick a different BLAS than LibTorch's.
template <typename T>
Gemm<T> loaded_gemm() {
  static const Gemm<T> gemm =
      reinterpret_cast<Gemm<T>>(dlsym(RTLD_DEFAULT, std::is_same_v<T, float> ? "sgemm_" : "dgemm_"));
  return gemm;
}

// One operand's matrices as BLAS reads them: rows contiguous (row-major, the
// leading dimension is the row stride) or columns contiguous (a transposed view).
struct Operand {
  at::Tensor t;
  bool row_major;
  int ld;
};

Operand operand_of(const at::Tensor& x) {
  const std::int64_t rows = x.size(1), cols = x.size(2);
  if (x.stride(2) == 1 && x.stride(1) >= std::max<std::int64_t>(1, cols) && x.stride(1) <= INT_MAX) {
    return {x, true, static_cast<int>(x.stride(1))};
  }
  if (x.stride(1) == 1 && x.stride(2) >= std::max<std::int64_t>(1, rows) && x.stride(2) <= INT_MAX) {
    return {x, false, static_cast<int>(x.stride(2))};
  }
  const at::Tensor c = x.contiguous();
  return {c, true, static_cast<int>(std::max<std::int64_t>(1, cols))};
}

// c[i] = a[i] @ b[i] + beta * c[i], row-major c. In column-major terms c^T = b^T a^T, so b
// is BLAS's first operand: a row-major matrix is, read column-major, its own
// transpose with no flag needed; a column-major one needs 'T'.
template <typename T>
void gemm_each(const Operand& a, const Operand& b, T beta, at::Tensor& c) {
  const int n = static_cast<int>(c.size(0)), m = static_cast<int>(c.size(1)), p = static_cast<int>(c.size(2));
  const int k = static_cast<int>(a.t.size(2));
  const char ta = a.row_major ? 'N' : 'T', tb = b.row_major ? 'N' : 'T';
  const T one = 1;
  const T* pa = a.t.data_ptr<T>();
  const T* pb = b.t.data_ptr<T>();
  T* pc = c.data_ptr<T>();
  const std::int64_t sa = a.t.stride(0), sb = b.t.stride(0), sc = c.stride(0);
  const Gemm<T> gemm = loaded_gemm<T>();
  for (int i = 0; i < n; ++i) {
    gemm(&tb, &ta, &p, &m, &k, &one, pb + i * sb, &b.ld, pa + i * sa, &a.ld, &beta, pc + i * sc, &p);
  }
}

// a @ b, plus bias [N, P] on every row when it is defined (copied into the
// result first, then accumulated onto, as addmm does).
at::Tensor direct_bmm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias = {}) {
  at::Tensor c = at::empty({a.size(0), a.size(1), b.size(2)}, a.options());
  if (bias.defined()) broadcast_bias_rows_cpu(bias.contiguous(), c);
  const Operand oa = operand_of(a), ob = operand_of(b);
  if (a.scalar_type() == at::kDouble) {
    gemm_each<double>(oa, ob, bias.defined() ? 1.0 : 0.0, c);
  } else {
    gemm_each<float>(oa, ob, bias.defined() ? 1.0f : 0.0f, c);
  }
  return c;
}

/// The direct loop as one autograd node: grad_a = grad @ b^T, grad_b = a^T @ grad,
/// with the transposes read in place; grad_bias sums grad over rows (sum_rows_cpu). (Two
/// nodes, with and without bias: autograd takes no undefined tensor argument.)
variable_list direct_bmm_backward(AutogradContext* ctx, const at::Tensor& grad, bool bias) {
  const auto saved = ctx->get_saved_variables();
  variable_list out(bias ? 3 : 2);
  if (ctx->needs_input_grad(0)) out[0] = direct_bmm(grad, saved[1].transpose(1, 2));
  if (ctx->needs_input_grad(1)) out[1] = direct_bmm(saved[0].transpose(1, 2), grad);
  if (bias && ctx->needs_input_grad(2)) {
    out[2] = at::empty({grad.size(0), grad.size(2)}, grad.options());
    sum_rows_cpu(grad.contiguous(), out[2]);
  }
  return out;
}

struct DirectBmm : torch::autograd::Function<DirectBmm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return direct_bmm(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return direct_bmm_backward(ctx, grads[0], false);
  }
};

struct DirectBiasBmm : torch::autograd::Function<DirectBiasBmm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& bias) {
    ctx->save_for_backward({a, b});
    return direct_bmm(a, b, bias);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return direct_bmm_backward(ctx, grads[0], true);
  }
};

bool direct_applies(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  // Under autocast bmm runs in the lower precision, as the plain modules' products do.
  if (autocast_enabled(c10::DeviceType::CPU)) return false;
  if (!a.is_cpu() || !b.is_cpu() || a.dim() != 3 || b.dim() != 3 || a.scalar_type() != b.scalar_type()) {
    return false;
  }
  if (bias.defined() && (!bias.is_cpu() || bias.scalar_type() != a.scalar_type() ||
                         bias.sizes() != at::IntArrayRef{a.size(0), b.size(2)})) {
    return false;
  }
  if (a.size(0) != b.size(0) || a.size(2) != b.size(1) || a.numel() == 0 || b.numel() == 0) return false;
  for (const std::int64_t s : {a.size(0), a.size(1), a.size(2), b.size(2)}) {
    if (s > INT_MAX) return false;
  }
  if (a.scalar_type() == at::kFloat) return loaded_gemm<float>() != nullptr;
  if (a.scalar_type() == at::kDouble) return loaded_gemm<double>() != nullptr;
  return false;
}

}  // namespace

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& bias) {
  if (direct_applies(a, b, bias)) return bias.defined() ? DirectBiasBmm::apply(a, b, bias) : DirectBmm::apply(a, b);
  return bias.defined() ? at::baddbmm(bias.unsqueeze(1), a, b) : at::bmm(a, b);
}

}  // namespace hfta::fusion
