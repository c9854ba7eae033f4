#include "hfta/fusion/prelu.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace hfta::fusion {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct DirectPReLU : torch::autograd::Function<DirectPReLU> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& slopes) {
    const at::Tensor in = x.contiguous(), a = slopes.contiguous();
    at::Tensor y = at::empty_like(in);
    prelu_forward_cpu(in, a, y);
    ctx->save_for_backward({in, a});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor grad_y = grads[0].contiguous();
    at::Tensor grad_x = at::empty_like(saved[0]);
    at::Tensor grad_slopes = at::zeros_like(saved[1]);
    prelu_backward_cpu(saved[0], saved[1], grad_y, grad_x, grad_slopes);
    return {grad_x, grad_slopes};
  }
};

bool direct_kernel_applies(const at::Tensor& x, const at::Tensor& slopes) {
  return x.is_cpu() && slopes.is_cpu() && x.dim() >= 2 && x.numel() > 0 && slopes.dim() == 1 &&
         slopes.size(0) == x.size(1) && x.scalar_type() == slopes.scalar_type() &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
}

}  // namespace

at::Tensor prelu(const at::Tensor& x, const at::Tensor& slopes) {
  if (!direct_kernel_applies(x, slopes)) return at::prelu(x, slopes);
  return DirectPReLU::apply(x, slopes);
}

}  // namespace hfta::fusion
