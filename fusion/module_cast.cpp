#include "hfta/fusion/module_cast.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

namespace hfta::fusion {

void to_floating(torch::nn::Module& module, at::ScalarType dtype, std::optional<at::Device> device) {
  torch::NoGradGuard no_grad;
  auto cast = [&](at::Tensor& t) {
    if (!t.defined()) return;
    const at::Device to = device.value_or(t.device());
    t.set_data(at::isFloatingType(t.scalar_type()) ? t.to(to, dtype) : t.to(to));
  };
  for (auto& p : module.parameters()) cast(p);
  for (auto& b : module.buffers()) cast(b);
}

}  // namespace hfta::fusion
