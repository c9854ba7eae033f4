#include "hfta/fusion/pointwise_conv.h"

#include <vector>

#include <ATen/ATen.h>

#include "hfta/fusion/batched_matmul.h"
#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {

bool pointwise_applies(const at::Tensor& x) {
  return x.is_cpu() && (x.dim() == 3 || x.dim() == 4) && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble) &&
         !autocast_enabled(c10::DeviceType::CPU);
}

at::Tensor pointwise_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            std::int64_t models) {
  const std::int64_t n = x.size(0), in = x.size(1) / models, out = weight.size(0) / models;
  const auto spatial = x.sizes().slice(2);
  // [N, B*C, *S] -> [N, *S, B*C] -> [B, N*S, C]: model b's pixels as rows, a
  // row B*C apart. A view where the input is channels-last already (or has one
  // pixel), else one copy.
  std::vector<std::int64_t> to_last{0};
  for (std::int64_t d = 2; d < x.dim(); ++d) to_last.push_back(d);
  to_last.push_back(1);
  const at::Tensor rows = x.permute(to_last).reshape({-1, models, in}).transpose(0, 1);
  // weight [B*O, C, 1...] -> [B, C, O], read transposed in place.
  const at::Tensor w_t = weight.view({models, out, in}).transpose(1, 2);
  const at::Tensor y = batched_matmul(rows, w_t, bias.defined() ? bias.view({models, out}) : bias);
  // [B, N*S, O] -> [B, N, *S, O] -> [N, B, O, *S] -> [N, B*O, *S], one copy.
  std::vector<std::int64_t> split{models, n}, to_conv{1, 0, x.dim()}, conv{n, models * out};
  for (std::size_t d = 0; d < spatial.size(); ++d) {
    split.push_back(spatial[d]), to_conv.push_back(static_cast<std::int64_t>(d) + 2), conv.push_back(spatial[d]);
  }
  split.push_back(out);
  return y.view(split).permute(to_conv).reshape(conv).contiguous();
}

}  // namespace hfta::fusion
