// Loops of matmul_bias.h. Built without the torch header, at -O3 (CMakeLists.txt).
#include <algorithm>
#include <cstring>
#include <vector>

#include "hfta/fusion/matmul_bias.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

template <typename T>
void broadcast(const T* bias, T* c, std::int64_t n, std::int64_t m, std::int64_t p) {
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t r = 0; r < m; ++r) std::memcpy(c + (i * m + r) * p, bias + i * p, sizeof(T) * p);
  }
}

// Each column's sum runs over the rows in order; the columns go side by side
// in vector lanes, which leaves every sum's order as it is.
template <typename T>
void sum_rows(const T* __restrict__ grad, T* __restrict__ out, std::int64_t n, std::int64_t m, std::int64_t p) {
  std::vector<double> acc(static_cast<std::size_t>(p));
  double* __restrict__ a = acc.data();
  for (std::int64_t i = 0; i < n; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t r = 0; r < m; ++r) {
      const T* __restrict__ row = grad + (i * m + r) * p;
      for (std::int64_t j = 0; j < p; ++j) a[j] += static_cast<double>(row[j]);
    }
    for (std::int64_t j = 0; j < p; ++j) out[i * p + j] = static_cast<T>(a[j]);
  }
}

}  // namespace

void broadcast_bias_rows_cpu(const at::Tensor& bias, at::Tensor& c) {
  if (c.scalar_type() == at::kDouble) {
    broadcast(bias.data_ptr<double>(), c.data_ptr<double>(), c.size(0), c.size(1), c.size(2));
  } else {
    broadcast(bias.data_ptr<float>(), c.data_ptr<float>(), c.size(0), c.size(1), c.size(2));
  }
}

HFTA_VECTOR_CLONES
void sum_rows_cpu(const at::Tensor& grad, at::Tensor& out) {
  if (grad.scalar_type() == at::kDouble) {
    sum_rows(grad.data_ptr<double>(), out.data_ptr<double>(), grad.size(0), grad.size(1), grad.size(2));
  } else {
    sum_rows(grad.data_ptr<float>(), out.data_ptr<float>(), grad.size(0), grad.size(1), grad.size(2));
  }
}

}  // namespace hfta::fusion
