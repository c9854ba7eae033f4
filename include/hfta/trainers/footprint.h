// What one model costs in memory before it is built: parameter and activation
// counts from the model's options, for the memory model's first estimate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace hfta::trainers {

/// Sizes of one model, in numbers of float elements.
struct Footprint {
  double parameters = 0;
  double activations_per_sample = 0;  ///< kept for the backward pass
  double input_per_sample = 0;
  double macs_per_sample = 0;         ///< multiply-accumulates of one forward pass
};

/// Counts for `model` with its numeric options (booleans as 0 or 1) and its
/// text options (BERT's size); an MLP's also takes `inputs` and `classes` (a
/// table's; Fashion-MNIST's where not given); nullopt for a model without an estimate.
std::optional<Footprint> estimate_footprint(const std::string& model,
                                            const std::map<std::string, double>& options,
                                            const std::map<std::string, std::string>& texts = {});

/// Bytes each model of an array adds in float32 training with `optimizer`:
/// weights, gradients, optimizer state, and activations and their gradients.
double per_model_bytes(const Footprint& f, std::int64_t batch_size, const std::string& optimizer);

/// Bytes an array needs whatever its size: the shared input batch and workspace.
double fixed_bytes(const Footprint& f, std::int64_t batch_size);

}  // namespace hfta::trainers
