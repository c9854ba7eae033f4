#include "hfta/fusion/pointwise_conv.h"

#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "hfta/fusion/batched_matmul.h"
#include "hfta/fusion/mixed_precision.h"

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// [N, B*C, *S] -> [B, N*S, C], model b's pixels as rows, in one copy; its
// gradient comes back in the conv layout, contiguous. Not a permuted view of
// the gradient: the ops before (squeeze-and-excitation's sum over the pixels)
// sum a channels-last gradient along B*C channels differently for different
// B, so a model's gradients changed with the size of its array.
struct PixelRows : torch::autograd::Function<PixelRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, std::int64_t models) {
    std::vector<std::int64_t> split{x.size(0), models, x.size(1) / models}, to_rows{1, 0};
    for (std::int64_t d = 2; d < x.dim(); ++d) split.push_back(x.size(d)), to_rows.push_back(d + 1);
    to_rows.push_back(2);
    ctx->saved_data["sizes"] = x.sizes().vec();
    ctx->saved_data["models"] = models;
    return x.view(split).permute(to_rows).contiguous().view({models, -1, split[2]});
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    const std::int64_t models = ctx->saved_data["models"].toInt(), dims = static_cast<std::int64_t>(sizes.size());
    // [B, N*S, C] -> [B, N, *S, C] -> [N, B, C, *S] -> [N, B*C, *S]
    std::vector<std::int64_t> split{models, sizes[0]}, to_conv{1, 0, dims};
    for (std::int64_t d = 2; d < dims; ++d) split.push_back(sizes[d]), to_conv.push_back(d);
    split.push_back(sizes[1] / models);
    return {grads[0].contiguous().view(split).permute(to_conv).contiguous().view(sizes), at::Tensor()};
  }
};

}  // namespace

bool pointwise_applies(const at::Tensor& x) {
  return x.is_cpu() && (x.dim() == 3 || x.dim() == 4) && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble) &&
         !autocast_enabled(c10::DeviceType::CPU);
}

at::Tensor pointwise_conv(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            std::int64_t models) {
  const std::int64_t n = x.size(0), out = weight.size(0) / models;
  const auto spatial = x.sizes().slice(2);
  const at::Tensor rows = PixelRows::apply(x, models);
  // weight [B*O, C, 1...] -> [B, C, O], read transposed in place.
  const at::Tensor w_t = weight.view({models, out, -1}).transpose(1, 2);
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
