// One model's fused optimizer state as the plain LibTorch optimizer keeps it,
// and back: for exporting a trial, or bringing a plain run into an array.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <torch/optim/optimizer.h>

#include "hfta/fusion/fused_optimizer.h"

namespace hfta::fusion {

/// How model b's row of fused parameter i maps to the plain parameter's layout.
struct SlotLayout {
  std::function<at::Tensor(std::size_t param, const at::Tensor& row)> to_plain;
  std::function<at::Tensor(std::size_t param, const at::Tensor& plain)> to_row;
};

/// The layout of every fused op whose slot holds the plain tensor as it is (all
/// but FusedLinear's weight, which is stored transposed: see linear_layout).
SlotLayout same_layout(const std::vector<at::Tensor>& plain_params);

/// For parameters in FusedLinear's order (weight, bias) of a plain Linear.
SlotLayout linear_layout(const std::vector<at::Tensor>& plain_params);

/// Writes model b's state into `plain`, an optimizer over that model's plain
/// parameters (one group, in the fused optimizer's parameter order), with the
/// step count and moments LibTorch would hold after the same steps.
/// SGD, Adam, AdamW, RMSprop and Adagrad; Adadelta has no LibTorch counterpart.
void export_to_plain(const FusedOptimizer& fused, std::int64_t model, torch::optim::Optimizer& plain,
                     const SlotLayout& layout);

/// Reads a plain optimizer's state (same kinds) into slot b.
void import_from_plain(FusedOptimizer& fused, std::int64_t model, torch::optim::Optimizer& plain,
                       const SlotLayout& layout);

}  // namespace hfta::fusion
