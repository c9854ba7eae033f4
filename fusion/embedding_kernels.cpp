// Loops of the direct embedding kernels; see embedding.h. Built without the
// torch header, at -O3 (CMakeLists.txt).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "hfta/fusion/embedding.h"
#include "hfta/fusion/vector_clones.h"

namespace hfta::fusion {
namespace {

struct Lookup {
  std::int64_t models, count, num, dim;
  const std::int64_t* index;
  std::int64_t model_stride, count_stride;

  std::int64_t at(std::int64_t b, std::int64_t n) const { return index[b * model_stride + n * count_stride]; }
};

Lookup lookup_of(const at::Tensor& weight, const at::Tensor& indices) {
  return {indices.size(0), indices.size(1), weight.size(1), weight.size(2),
          indices.data_ptr<std::int64_t>(), indices.stride(0), indices.stride(1)};
}

template <typename T>
void forward(const T* weight, T* out, const Lookup& l) {
  for (std::int64_t b = 0; b < l.models; ++b) {
    const T* table = weight + b * l.num * l.dim;
    for (std::int64_t n = 0; n < l.count; ++n, out += l.dim) {
      std::memcpy(out, table + l.at(b, n) * l.dim, sizeof(T) * l.dim);
    }
  }
}

template <typename T>
void backward(const T* __restrict__ grad_out, T* __restrict__ grad_weight, std::int64_t padding_idx,
              const Lookup& l) {
  for (std::int64_t b = 0; b < l.models; ++b) {
    // One model's table at a time: zeroed just before its rows are summed into
    // it, so both happen in cache.
    T* table = grad_weight + b * l.num * l.dim;
    std::fill(table, table + l.num * l.dim, T(0));
    for (std::int64_t n = 0; n < l.count; ++n, grad_out += l.dim) {
      const std::int64_t i = l.at(b, n);
      if (i == padding_idx) continue;
      T* __restrict__ row = table + i * l.dim;
      for (std::int64_t d = 0; d < l.dim; ++d) row[d] += grad_out[d];
    }
  }
}

void check_range(const Lookup& l) {
  for (std::int64_t b = 0; b < l.models; ++b) {
    for (std::int64_t n = 0; n < l.count; ++n) {
      const std::int64_t i = l.at(b, n);
      if (i < 0 || i >= l.num) {
        throw std::out_of_range("embedding index " + std::to_string(i) + " is outside the table of " +
                                std::to_string(l.num) + " rows");
      }
    }
  }
}

}  // namespace

HFTA_VECTOR_CLONES
void embedding_forward_cpu(const at::Tensor& weight, const at::Tensor& indices, at::Tensor& out) {
  const Lookup l = lookup_of(weight, indices);
  check_range(l);
  if (weight.scalar_type() == at::kDouble) {
    forward(weight.data_ptr<double>(), out.data_ptr<double>(), l);
  } else {
    forward(weight.data_ptr<float>(), out.data_ptr<float>(), l);
  }
}

HFTA_VECTOR_CLONES
void embedding_backward_cpu(const at::Tensor& grad_out, const at::Tensor& indices,
                            std::int64_t padding_idx, at::Tensor& grad_weight) {
  const Lookup l = lookup_of(grad_weight, indices);
  if (grad_weight.scalar_type() == at::kDouble) {
    backward(grad_out.data_ptr<double>(), grad_weight.data_ptr<double>(), padding_idx, l);
  } else {
    backward(grad_out.data_ptr<float>(), grad_weight.data_ptr<float>(), padding_idx, l);
  }
}

}  // namespace hfta::fusion
