#include "hfta/fusion/slot_state.h"

namespace hfta::fusion {

torch::OrderedDict<std::string, at::Tensor> state_dict_of(const torch::nn::Module& plain) {
  torch::OrderedDict<std::string, at::Tensor> out;
  for (const auto& p : plain.named_parameters()) out.insert(p.key(), p.value().detach().clone());
  for (const auto& b : plain.named_buffers()) out.insert(b.key(), b.value().detach().clone());
  return out;
}

}  // namespace hfta::fusion
