// The precisions a sweep may train in (task.precision), without LibTorch's
// headers, so the sweep loader can check them cheaply.
#pragma once

#include <string>
#include <vector>

namespace hfta::fusion {

/// What the forward pass computes in: float32 (autocast off), or autocast to
/// bfloat16 or float16. Parameters, gradients and optimizer state stay float32.
enum class Precision { kFloat32, kBFloat16, kFloat16 };

/// "fp32", "bf16", "fp16"; throws std::invalid_argument naming the choices.
Precision precision_from_name(const std::string& name);
const char* precision_name(Precision p);
/// The names precision_from_name takes.
const std::vector<std::string>& precision_names();

}  // namespace hfta::fusion
