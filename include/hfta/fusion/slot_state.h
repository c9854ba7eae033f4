// One model's state out of a fused op, under the names and shapes of the plain
// LibTorch module: what export and checkpoints of single trials use.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/ordered_dict.h>

namespace hfta::fusion {

/// Parameters and buffers of a plain module, detached copies, by name.
torch::OrderedDict<std::string, at::Tensor> state_dict_of(const torch::nn::Module& plain);

/// Slot b of any fused op, as the state dict of its plain module.
template <typename FusedModule>
torch::OrderedDict<std::string, at::Tensor> slot_state_dict(const FusedModule& fused,
                                                            std::int64_t slot) {
  return state_dict_of(*fused.extract_slot(slot));
}

}  // namespace hfta::fusion
