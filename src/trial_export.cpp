#include "hfta/core/trial_export.h"

#include <sstream>

#include <ATen/core/Dict.h>
#include <torch/serialize.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/trial_store.h"

namespace hfta::core {

ExportedWeights export_weights(const torch::nn::Sequential& model, const std::string& dir) {
  std::ostringstream module_bytes;
  torch::serialize::OutputArchive archive;
  model->save(archive);
  archive.save_to(module_bytes);
  write_atomically(dir + "/" + kWeightsFile, module_bytes.str());

  // Parameters, then buffers, in module order: what torch.nn's state_dict() lists.
  c10::Dict<std::string, at::Tensor> state;
  for (const auto& p : model->named_parameters()) state.insert(p.key(), p.value().detach().cpu().contiguous());
  for (const auto& b : model->named_buffers()) state.insert(b.key(), b.value().detach().cpu().contiguous());
  const std::vector<char> bytes = torch::pickle_save(state);
  const std::string state_bytes(bytes.begin(), bytes.end());
  write_atomically(dir + "/" + kStateDictFile, state_bytes);
  return {crc32_of(module_bytes.str()), crc32_of(state_bytes)};
}

void import_weights(torch::nn::Sequential& model, const std::string& dir) {
  torch::serialize::InputArchive archive;
  archive.load_from(dir + "/" + kWeightsFile);
  model->load(archive);
}

}  // namespace hfta::core
