#include "hfta/fusion/layout.h"

#include <ATen/ATen.h>

namespace hfta::fusion {

at::Tensor stack_to_conv(const at::Tensor& x) {
  // [B, N, C, ...] -> [N, B, C, ...] -> [N, B*C, ...]
  auto sizes = x.sizes().vec();
  std::vector<std::int64_t> out = {sizes[1], sizes[0] * sizes[2]};
  out.insert(out.end(), sizes.begin() + 3, sizes.end());
  return x.transpose(0, 1).reshape(out);
}

at::Tensor conv_to_stack(const at::Tensor& x, std::int64_t models) {
  auto sizes = x.sizes().vec();
  std::vector<std::int64_t> split = {sizes[0], models, sizes[1] / models};
  split.insert(split.end(), sizes.begin() + 2, sizes.end());
  return x.reshape(split).transpose(0, 1);
}

at::Tensor conv_to_matmul(const at::Tensor& x, std::int64_t models) {
  const std::int64_t n = x.size(0);
  return x.reshape({n, models, -1}).transpose(0, 1);
}

at::Tensor matmul_to_conv(const at::Tensor& x, std::int64_t channels,
                          const std::vector<std::int64_t>& spatial) {
  const std::int64_t models = x.size(0), n = x.size(1);
  std::vector<std::int64_t> out = {n, models * channels};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return x.transpose(0, 1).reshape(out);
}

at::Tensor broadcast_to_models(const at::Tensor& x, std::int64_t models) {
  auto sizes = x.sizes().vec();
  sizes.insert(sizes.begin(), models);
  return x.unsqueeze(0).expand(sizes);
}

}  // namespace hfta::fusion
