// Helpers shared by the model zoo: the plain modules a fused model mirrors,
// and copying slots in and out of them. Private to trainers/.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/utils.h>

#include "hfta/fusion/fused_activation.h"

namespace hfta::trainers {

using fusion::activation_from_name;

/// The plain module of an activation, for the plain form of a model.
torch::nn::AnyModule plain_activation(const std::string& name);

/// Applies the named activation to a fused tensor of any layout.
at::Tensor activate(const std::string& name, const at::Tensor& x);

/// The plain model's layers of one type (Linear, Conv2d, ...), in order.
template <typename Module>
std::vector<std::shared_ptr<Module>> layers_of(const torch::nn::Sequential& plain) {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& m : plain->modules(/*include_self=*/false)) {
    if (auto p = std::dynamic_pointer_cast<Module>(m)) out.push_back(p);
  }
  return out;
}

/// Copies every parameter of `from` into the same-named one of `to` (any device).
inline void copy_parameters(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.named_parameters();
  for (auto& p : to.named_parameters()) p.value().copy_(source[p.key()]);
}

/// Copies a fused layer's slot into a plain layer: weight and bias.
template <typename Fused, typename Plain>
void copy_out(const Fused& fused, std::int64_t slot, Plain& plain) {
  const auto from = fused->extract_slot(slot);
  torch::NoGradGuard no_grad;
  plain.weight.copy_(from->weight);
  if (plain.bias.defined()) plain.bias.copy_(from->bias);
}

/// Copies a fused batch norm's slot into a plain one: parameters and running statistics.
template <typename Fused, typename Plain>
void copy_out_batch_norm(const Fused& fused, std::int64_t slot, Plain& plain) {
  const auto from = fused->extract_slot(slot);
  torch::NoGradGuard no_grad;
  plain.weight.copy_(from->weight);
  plain.bias.copy_(from->bias);
  plain.running_mean.copy_(from->running_mean);
  plain.running_var.copy_(from->running_var);
  plain.num_batches_tracked.copy_(from->num_batches_tracked);
}

/// Loads slot `slot` of each fused layer from the plain model's layers of type
/// `Plain` (a holder: torch::nn::Conv2d, torch::nn::BatchNorm2d, ...), in order.
template <typename Plain, typename Fused>
void load_layers(std::vector<Fused> fused, const torch::nn::Sequential& plain, std::int64_t slot) {  // handles: copies share the layers
  const auto layers = layers_of<typename Plain::Impl>(plain);
  for (std::size_t i = 0; i < fused.size(); ++i) fused[i]->load_slot(slot, Plain(layers.at(i)));
}

/// Copies slot `slot` of each fused layer into the plain model's layers of type
/// `Plain`, in order (batch norms with their running statistics).
template <typename Plain, typename Fused>
void extract_layers(const std::vector<Fused>& fused, const torch::nn::Sequential& plain, std::int64_t slot) {
  const auto layers = layers_of<typename Plain::Impl>(plain);
  for (std::size_t i = 0; i < fused.size(); ++i) {
    if constexpr (std::is_same_v<Plain, torch::nn::BatchNorm1d> || std::is_same_v<Plain, torch::nn::BatchNorm2d>) {
      copy_out_batch_norm(fused[i], slot, *layers.at(i));
    } else {
      copy_out(fused[i], slot, *layers.at(i));
    }
  }
}

}  // namespace hfta::trainers
