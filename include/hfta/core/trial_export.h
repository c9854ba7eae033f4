// A trial's trained weights as files anyone can load without hfta-tune:
//   weights.pt     the plain LibTorch module (torch::nn::Sequential), for C++:
//                  build the same Sequential, then torch::load(model, path);
//   state_dict.pt  its state dict, for Python: torch.load(path) gives a dict
//                  of tensors under the names of the equivalent torch.nn model
//                  (documented per model in the README), for load_state_dict.
#pragma once

#include <cstdint>
#include <string>

#include <torch/nn/modules/container/sequential.h>

namespace hfta::core {

inline constexpr const char* kWeightsFile = "weights.pt";
inline constexpr const char* kStateDictFile = "state_dict.pt";

/// The CRC-32 of each file as written: trial.json records them, so that a
/// file changed since is found before the test split is scored with it.
struct ExportedWeights {
  std::uint32_t weights_crc = 0, state_dict_crc = 0;
};

/// Writes both files into `dir`, each atomically.
ExportedWeights export_weights(const torch::nn::Sequential& model, const std::string& dir);

/// Reads `dir`/weights.pt into `model` (built with the trial's shape).
void import_weights(torch::nn::Sequential& model, const std::string& dir);

}  // namespace hfta::core
