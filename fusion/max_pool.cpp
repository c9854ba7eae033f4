#include "hfta/fusion/max_pool.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The direct kernels as one autograd node (with ReLU after the pooling, or
/// without); the winners (one byte per output) are all the backward keeps.
struct DirectMaxPool : torch::autograd::Function<DirectMaxPool> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, std::int64_t kernel, bool relu) {
    const at::Tensor in = x.contiguous();
    at::Tensor out = at::empty({in.size(0), in.size(1), in.size(2) / kernel, in.size(3) / kernel},
                               in.options());
    at::Tensor winner = at::empty(out.sizes(), in.options().dtype(at::kByte));
    max_pool2d_forward_cpu(in, kernel, out, winner, relu);
    ctx->saved_data["kernel"] = kernel;
    ctx->saved_data["input_sizes"] = in.sizes();
    ctx->save_for_backward({winner});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const std::int64_t kernel = ctx->saved_data["kernel"].toInt();
    const at::Tensor winner = ctx->get_saved_variables()[0];
    const at::Tensor grad_out = grads[0].contiguous();
    at::Tensor grad_in = at::empty(ctx->saved_data["input_sizes"].toIntVector(), grad_out.options());
    max_pool2d_backward_cpu(grad_out, winner, kernel, grad_in);
    return {grad_in, at::Tensor(), at::Tensor()};
  }
};

bool direct_kernel_applies(const at::Tensor& x, std::int64_t kernel) {
  return x.is_cpu() && x.dim() == 4 && kernel >= 1 && kernel <= 15 &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble) &&
         x.size(2) >= kernel && x.size(3) >= kernel && x.numel() > 0;
}

}  // namespace

at::Tensor max_pool2d(const at::Tensor& x, std::int64_t kernel) {
  if (!direct_kernel_applies(x, kernel)) return at::max_pool2d(x, {kernel, kernel});
  return DirectMaxPool::apply(x, kernel, false);
}

at::Tensor relu_max_pool2d(const at::Tensor& x, std::int64_t kernel) {
  if (!direct_kernel_applies(x, kernel)) return at::relu(at::max_pool2d(x, {kernel, kernel}));
  return DirectMaxPool::apply(x, kernel, true);
}

}  // namespace hfta::fusion
