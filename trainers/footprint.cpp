#include "hfta/trainers/footprint.h"

#include "hfta/trainers/bert.h"
#include "hfta/trainers/mobilenet_v3.h"

namespace hfta::trainers {
namespace {

constexpr double kFloat = 4;                       // bytes per float32
constexpr double kWorkspace = 64.0 * 1024 * 1024;  // allocator slack and kernel workspace
constexpr double kImage = 28 * 28;                 // Fashion-MNIST pixels
constexpr double kClasses = 10;
constexpr double kByteVocabulary = 256;            // a character model's largest vocabulary

double option(const std::map<std::string, double>& options, const std::string& name, double def) {
  auto it = options.find(name);
  return it == options.end() ? def : it->second;
}

Footprint mlp(const std::map<std::string, double>& o) {
  const double depth = option(o, "depth", 2), w = option(o, "width", 256);
  const double in = option(o, "inputs", kImage), k = option(o, "classes", kClasses);  // a table's, or the images'
  Footprint f;
  f.input_per_sample = in;
  f.parameters = (in * w + w) + (depth - 1) * (w * w + w) + (w * k + k);
  // Per hidden layer: the linear output, the activation and the dropout mask.
  f.activations_per_sample = depth * 3 * w + 2 * k;
  f.macs_per_sample = in * w + (depth - 1) * w * w + w * k;
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
  f.macs_per_sample = 28 * 28 * 25 * c1 + 10 * 10 * 25 * c1 * c2 + 25 * c2 * 120 + 120 * 84 + 84 * kClasses;
  return f;
}

// A T-Net of size k on `points` points (pointnet.h): per-point k-64-128-1024 and
// 1024-512-256-k*k, batch norm and ReLU after all but the last, then the transform applied.
Footprint point_transform(double points, double k) {
  Footprint f;
  f.parameters = (k * 64 + 64) + (64 * 128 + 128) + (128 * 1024 + 1024) + (1024 * 512 + 512) + (512 * 256 + 256) +
                 (256 * k * k + k * k) + 2 * (64 + 128 + 1024 + 512 + 256);
  f.activations_per_sample = points * (3 * 64 + 3 * 128 + 3 * 1024) + 3 * 512 + 3 * 256 + k * k + points * k;
  f.macs_per_sample = points * (k * 64 + 64 * 128 + 128 * 1024) + 1024 * 512 + 512 * 256 + 256 * k * k + points * k * k;
  return f;
}

Footprint pointnet(const std::map<std::string, double>& o) {
  const double points = option(o, "points", 1024), k = 8;
  Footprint f;
  f.input_per_sample = 3 * points;
  // Per-point 3-64-128-1024 and classifier 1024-512-256-k, batch norms after all but the last.
  f.parameters = (3 * 64 + 64) + (64 * 128 + 128) + (128 * 1024 + 1024) + 2 * (64 + 128 + 1024) +
                 (1024 * 512 + 512) + (512 * 256 + 256) + (256 * k + k) + 2 * (512 + 256);
  // Per point: each layer's output, its batch norm and ReLU (the last has none).
  f.activations_per_sample = points * (3 * 64 + 3 * 128 + 2 * 1024) + 3 * 512 + 4 * 256 + 2 * k;
  f.macs_per_sample = points * (3 * 64 + 64 * 128 + 128 * 1024) + 1024 * 512 + 512 * 256 + 256 * k;
  for (const auto& [name, size] : {std::pair<const char*, double>{"input_transform", 3}, {"feature_transform", 64}}) {
    if (option(o, name, 0) == 0) continue;
    const Footprint t = point_transform(points, size);
    f.parameters += t.parameters;
    f.activations_per_sample += t.activations_per_sample;
    f.macs_per_sample += t.macs_per_sample;
  }
  return f;
}

Footprint resnet18(const std::map<std::string, double>& o) {
  const double w = option(o, "width", 64);
  const bool small = option(o, "small_input", 1) != 0;
  double side = small ? 32 : 16;  // after the stem, on 32x32 inputs
  Footprint f;
  f.input_per_sample = 32 * 32;
  // A convolution without bias and its batch norm; output, normalised and ReLU maps kept.
  auto conv = [&](double in, double out, double kernel, double out_side) {
    f.parameters += in * out * kernel * kernel + 2 * out;
    f.activations_per_sample += 3 * out * out_side * out_side;
    f.macs_per_sample += in * out * kernel * kernel * out_side * out_side;
  };
  conv(1, w, small ? 3 : 7, side);
  if (!small) side /= 2;  // max-pool
  double in = w;
  const double stages[4][2] = {{1, 1}, {2, 2}, {4, 2}, {8, 2}};
  for (const auto& stage : stages) {
    for (int b = 0; b < 2; ++b) {
      const double out = w * stage[0], stride = b == 0 ? stage[1] : 1;
      side /= stride;
      conv(in, out, 3, side);
      conv(out, out, 3, side);
      if (stride != 1 || in != out) conv(in, out, 1, side);
      in = out;
    }
  }
  f.parameters += in * kClasses + kClasses;
  f.activations_per_sample += in + 2 * kClasses;
  f.macs_per_sample += in * kClasses;
  return f;
}

Footprint transformer_lm(const std::map<std::string, double>& o) {
  const double d = option(o, "d_model", 256), heads = option(o, "heads", 4), layers = option(o, "layers", 2);
  const double ff = option(o, "ff", 1024), t = option(o, "seq_len", 128);
  const double vocab = option(o, "vocab", kByteVocabulary);
  Footprint f;
  f.input_per_sample = 2 * t;  // int64 token ids
  const double layer = (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d) + 4 * d;
  f.parameters = vocab * d + t * d + layers * layer + (d * vocab + vocab);
  // Per layer: q, k, v, context, projection, two residual sums and norms (about
  // 12 T d), scores, softmax and its dropout (3 heads T^2), the feed-forward
  // hidden layer, its activation and dropout (3 T ff); then the logits and softmax.
  f.activations_per_sample = 2 * t * d + layers * (12 * t * d + 3 * heads * t * t + 3 * t * ff) + 2 * t * vocab;
  f.macs_per_sample = layers * (4 * t * d * d + 2 * t * t * d + 2 * t * d * ff) + t * d * vocab;
  return f;
}

// DCGAN at 32x32 (dcgan.h): 4x4 kernels, no biases; generator 1 -> 4 -> 8 -> 16
// -> 32 pixels a side, discriminator 32 -> 16 -> 8 -> 4 -> 1. A step runs the
// generator once and the discriminator three times (real, fake, fake for the
// generator), so the counts weigh the discriminator three times over.
Footprint dcgan(const std::map<std::string, double>& o) {
  const double nz = option(o, "nz", 100), g = option(o, "ngf", 64), d = option(o, "ndf", 64);
  Footprint f;
  f.input_per_sample = 32 * 32;
  const double g_weights = 16 * (nz * 4 * g + 4 * g * 2 * g + 2 * g * g + g);
  const double d_weights = 16 * (d + d * 2 * d + 2 * d * 4 * d + 4 * d);
  f.parameters = g_weights + 2 * (4 * g + 2 * g + g) + d_weights + 2 * (2 * d + 4 * d);
  // Each convolution's output, with its batch norm and activation where it has them.
  const double g_maps = 3 * (4 * g * 16 + 2 * g * 64 + g * 256) + 2 * 1024;
  const double d_maps = 2 * d * 256 + 3 * (2 * d * 64 + 4 * d * 16) + 1;
  f.activations_per_sample = g_maps + 3 * d_maps;
  // Multiply-accumulates: in x out x 16 per input pixel (transposed) or output pixel.
  const double g_macs = 16 * (nz * 4 * g + 16 * 4 * g * 2 * g + 64 * 2 * g * g + 256 * g);
  const double d_macs = 16 * (256 * d + 64 * d * 2 * d + 16 * 2 * d * 4 * d + 4 * d);
  f.macs_per_sample = g_macs + 3 * d_macs;
  return f;
}

// BERT (bert.h): token and position embeddings with a layer norm, post-norm
// GELU encoder layers with a 4H feed-forward, and the masked-LM head.
Footprint bert(const std::map<std::string, double>& o, const std::map<std::string, std::string>& texts) {
  const auto size = texts.find("size");
  const BertShape shape = bert_shape(size == texts.end() ? "medium" : size->second,
                                     static_cast<std::int64_t>(option(o, "seq_len", 128)));
  const auto h = static_cast<double>(shape.hidden), t = static_cast<double>(shape.seq_len);
  const auto layers = static_cast<double>(shape.layers), heads = static_cast<double>(shape.heads);
  const double vocab = option(o, "vocab", kByteVocabulary), ff = 4 * h;
  Footprint f;
  f.input_per_sample = 2 * t;  // int64 token ids
  const double layer = (3 * h * h + 3 * h) + (h * h + h) + (h * ff + ff) + (ff * h + h) + 4 * h;
  f.parameters = vocab * h + t * h + 2 * h + layers * layer + (h * h + h) + 2 * h + (h * vocab + vocab);
  // As the Transformer LM's layers, plus the head's transform, GELU and norm.
  f.activations_per_sample = 3 * t * h + layers * (12 * t * h + 3 * heads * t * t + 3 * t * ff) + 3 * t * h +
                             2 * t * vocab;
  f.macs_per_sample = layers * (4 * t * h * h + 2 * t * t * h + 2 * t * h * ff) + t * h * h + t * h * vocab;
  return f;
}

}  // namespace

std::optional<Footprint> estimate_footprint(const std::string& model,
                                            const std::map<std::string, double>& options,
                                            const std::map<std::string, std::string>& texts) {
  if (model == "mlp") return mlp(options);
  if (model == "cnn") return cnn(options);
  if (model == "pointnet") return pointnet(options);
  if (model == "dcgan") return dcgan(options);
  if (model == "resnet18") return resnet18(options);
  if (model == "transformer_lm") return transformer_lm(options);
  if (model == "mobilenet_v3_small") return mobilenet_v3_small_footprint(option(options, "width_mult", 1.0));
  if (model == "bert") return bert(options, texts);
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
