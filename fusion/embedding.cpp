#include "hfta/fusion/embedding.h"

#include <stdexcept>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The direct kernels as one autograd node; the indices are all the backward keeps.
struct DirectEmbedding : torch::autograd::Function<DirectEmbedding> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& weight, const at::Tensor& indices,
                            std::int64_t padding_idx) {
    const at::Tensor w = weight.contiguous();
    at::Tensor out = at::empty({indices.size(0), indices.size(1), w.size(2)}, w.options());
    embedding_forward_cpu(w, indices, out);
    ctx->saved_data["padding_idx"] = padding_idx;
    ctx->saved_data["weight_sizes"] = w.sizes();
    ctx->saved_data["indices"] = indices;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor grad_out = grads[0].contiguous();
    at::Tensor grad_weight = at::empty(ctx->saved_data["weight_sizes"].toIntVector(), grad_out.options());
    embedding_backward_cpu(grad_out, ctx->saved_data["indices"].toTensor(),
                           ctx->saved_data["padding_idx"].toInt(), grad_weight);
    return {grad_weight, at::Tensor(), at::Tensor()};
  }
};

/// One index_select over the stacked tables (model b's rows are b * num + index)
/// for devices and dtypes the direct kernel does not take. Its backward is one
/// index_add; at::embedding's sorts the indices once there are more than a few
/// thousand, which made large arrays 0.5x of B plain embeddings.
at::Tensor gather_stacked(const at::Tensor& weight, const at::Tensor& indices, std::int64_t padding_idx) {
  const std::int64_t models = weight.size(0), num = weight.size(1);
  const at::Tensor offsets = at::arange(models, indices.options()).mul_(num).view({models, 1});
  at::Tensor out = at::index_select(weight.view({models * num, -1}), 0, (indices + offsets).reshape({-1}))
                       .view({models, indices.size(1), weight.size(2)});
  // The padding row's value, but no gradient to it.
  if (padding_idx >= 0) out = at::where((indices == padding_idx).unsqueeze(-1), out.detach(), out);
  return out;
}

}  // namespace

at::Tensor embed(const at::Tensor& weight, const at::Tensor& indices, std::int64_t padding_idx) {
  if (indices.dim() < 1 || indices.size(0) != weight.size(0)) {
    throw std::invalid_argument("fused embedding: indices " + c10::str(indices.sizes()) + " are not [" +
                                std::to_string(weight.size(0)) + ", N...] for " +
                                std::to_string(weight.size(0)) + " tables");
  }
  auto out_shape = indices.sizes().vec();
  out_shape.push_back(weight.size(2));
  const at::Tensor flat = indices.to(at::kLong).reshape({weight.size(0), -1});
  const bool direct = weight.is_cpu() && indices.is_cpu() &&
                      (weight.scalar_type() == at::kFloat || weight.scalar_type() == at::kDouble);
  const at::Tensor out = direct ? DirectEmbedding::apply(weight, flat, padding_idx)
                                : gather_stacked(weight, flat, padding_idx);
  return out.view(out_shape);
}

}  // namespace hfta::fusion
