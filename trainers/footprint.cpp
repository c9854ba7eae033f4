#include "hfta/trainers/footprint.h"

namespace hfta::trainers {
namespace {

constexpr double kFloat = 4;                       // bytes per float32
constexpr double kWorkspace = 64.0 * 1024 * 1024;  // allocator slack and kernel workspace
constexpr double kImage = 28 * 28;                 // Fashion-MNIST pixels
constexpr double kClasses = 10;

double option(const std::map<std::string, double>& options, const std::string& name, double def) {
  auto it = options.find(name);
  return it == options.end() ? def : it->second;
}

Footprint mlp(const std::map<std::string, double>& o) {
  const double depth = option(o, "depth", 2), w = option(o, "width", 256);
  Footprint f;
  f.input_per_sample = kImage;
  f.parameters = (kImage * w + w) + (depth - 1) * (w * w + w) + (w * kClasses + kClasses);
  // Per hidden layer: the linear output, the activation and the dropout mask.
  f.activations_per_sample = depth * 3 * w + 2 * kClasses;
  return f;
}

Footprint cnn(const std::map<std::string, double>& o) {
  const double m = option(o, "width", 1);
  const double c1 = 6 * m, c2 = 16 * m;
  Footprint f;
  f.input_per_sample = kImage;
  f.parameters = (25 * c1 + c1) + (25 * c1 * c2 + c2) + (25 * c2 * 120 + 120) + (120 * 84 + 84) +
                 (84 * kClasses + kClasses);
  // conv1 + activation at 28x28, pool to 14x14, conv2 + activation at 10x10, pool to 5x5, FC.
  f.activations_per_sample = 2 * 28 * 28 * c1 + 14 * 14 * c1 + 2 * 10 * 10 * c2 + 5 * 5 * c2 +
                             2 * 120 + 2 * 84 + 2 * kClasses;
  return f;
}

}  // namespace

std::optional<Footprint> estimate_footprint(const std::string& model,
                                            const std::map<std::string, double>& options) {
  if (model == "mlp") return mlp(options);
  if (model == "cnn") return cnn(options);
  return std::nullopt;
}

double per_model_bytes(const Footprint& f, std::int64_t batch_size, const std::string& optimizer) {
  // Optimizer state per parameter: SGD momentum and Adagrad keep one buffer,
  // Adam, AdamW and Adadelta two, RMSprop up to three (square average, momentum, mean).
  double state = 1;
  if (optimizer == "adam" || optimizer == "adamw" || optimizer == "adadelta") state = 2;
  if (optimizer == "rmsprop") state = 3;
  const double parameters = f.parameters * (2 + state);  // weights, gradients, state
  const double activations = 2 * f.activations_per_sample * static_cast<double>(batch_size);
  return kFloat * (parameters + activations);
}

double fixed_bytes(const Footprint& f, std::int64_t batch_size) {
  return kFloat * f.input_per_sample * static_cast<double>(batch_size) + kWorkspace;
}

}  // namespace hfta::trainers
