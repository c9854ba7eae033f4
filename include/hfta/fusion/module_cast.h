// Casting a module's floating-point tensors alone, as PyTorch's Module.to(dtype)
// does: LibTorch's Module::to(dtype) casts every parameter and buffer, so a
// batch norm's num_batches_tracked (int64) became a float, and state dicts
// that PyTorch reads carried it so.
#pragma once

#include <optional>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>

namespace hfta::fusion {

/// Casts the floating-point parameters and buffers of `module` (and its
/// submodules) to `dtype`, and moves every one to `device` where given;
/// integer buffers keep their type.
void to_floating(torch::nn::Module& module, at::ScalarType dtype, std::optional<at::Device> device = std::nullopt);

}  // namespace hfta::fusion
