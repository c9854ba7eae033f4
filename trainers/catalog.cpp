#include "hfta/trainers/catalog.h"

#include <cmath>
#include <limits>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

namespace hfta::trainers {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Small builders keep the tables below one line per option.
OptionSpec integer(const std::string& name, long def, double lo, double hi, bool structural,
                   const std::string& help) {
  OptionSpec o;
  o.name = name;
  o.type = OptionType::kInt;
  o.default_value = std::to_string(def);
  o.min = lo;
  o.max = hi;
  o.structural = structural;
  o.help = help;
  return o;
}

OptionSpec real(const std::string& name, const std::string& def, double lo, bool lo_open,
                double hi, bool hi_open, bool structural, const std::string& help) {
  OptionSpec o;
  o.name = name;
  o.type = OptionType::kReal;
  o.default_value = def;
  o.min = lo;
  o.min_open = lo_open;
  o.max = hi;
  o.max_open = hi_open;
  o.structural = structural;
  o.help = help;
  return o;
}

OptionSpec boolean(const std::string& name, bool def, bool structural, const std::string& help) {
  OptionSpec o;
  o.name = name;
  o.type = OptionType::kBool;
  o.default_value = def ? "true" : "false";
  o.structural = structural;
  o.help = help;
  return o;
}

OptionSpec text(const std::string& name, const std::string& def, std::vector<std::string> allowed,
                bool structural, const std::string& help) {
  OptionSpec o;
  o.name = name;
  o.type = OptionType::kString;
  o.default_value = def;
  o.allowed = std::move(allowed);
  o.structural = structural;
  o.help = help;
  return o;
}

const std::vector<std::string> kActivations = {"relu", "leaky_relu", "gelu",   "silu",
                                               "hardswish", "tanh",   "sigmoid"};

OptionSpec dropout(const std::string& def) {
  return real("dropout", def, 0, false, 1, true, false, "dropout probability (per model)");
}

// An option of the dataset every trial of a sweep shares (a cloud's points, a
// sequence's tokens, the share of them masked).
OptionSpec shapes_data(OptionSpec o) {
  o.shapes_data = true;
  return o;
}

// Random flips and crops of the training images (trainers/augmentation.h):
// structural, since an array's models share each augmented batch.
std::vector<OptionSpec> augmentation() {
  std::vector<OptionSpec> out = {boolean("flip", false, true, "mirror each training image left to right, half the time "
                                       "(torchvision's RandomHorizontalFlip)"),
          integer("crop", 0, 0, 8, true, "pad the training images by this many pixels a side and cut them back out at "
                                         "a random place (torchvision's RandomCrop(size, padding=crop)); 0: none")};
  for (auto& o : out) o.augments = true;
  return out;
}

// `options` with the augmentation options after them.
std::vector<OptionSpec> augmented(std::vector<OptionSpec> options) {
  for (auto& o : augmentation()) options.push_back(std::move(o));
  return options;
}

std::vector<ModelSpec> build_models() {
  const std::vector<std::string> images = {"fashion_mnist"};
  return {
      {"mlp", "fashion_mnist", {"fashion_mnist", "csv"}, TaskKind::kClassification,
       {integer("depth", 2, 1, 64, true, "hidden layers"),
        integer("width", 256, 1, 1 << 20, true, "units per hidden layer"),
        text("activation", "relu", kActivations, true, "hidden activation"), dropout("0")},
       "multi-layer perceptron"},
      {"cnn", "fashion_mnist", images, TaskKind::kClassification,
       augmented({integer("width", 1, 1, 64, true, "channel multiplier of LeNet-5's 6 and 16 channels"),
                  text("activation", "relu", kActivations, true, "activation"), dropout("0")}),
       "LeNet-5 style convolutional network"},
      {"pointnet", "point_clouds", {"point_clouds"}, TaskKind::kClassification,
       {shapes_data(integer("points", 1024, 16, 1 << 16, true, "points per cloud")),
        boolean("input_transform", false, true, "learn a 3x3 input transform (T-Net)"),
        boolean("feature_transform", false, true, "learn a 64x64 feature transform (T-Net, regularised)"),
        dropout("0.3")},
       "PointNet classification"},
      {"dcgan", "fashion_mnist", images, TaskKind::kGan,
       {integer("nz", 100, 1, 4096, true, "latent size"),
        integer("ngf", 64, 1, 4096, true, "generator features"),
        integer("ndf", 64, 1, 4096, true, "discriminator features")},
       "DCGAN generator and discriminator"},
      {"resnet18", "fashion_mnist", images, TaskKind::kClassification,
       augmented({boolean("small_input", true, true, "3x3 stem without max-pool, for 32x32 inputs"),
                  integer("width", 64, 1, 1024, true, "channels of the first stage")}),
       "ResNet-18"},
      {"mobilenet_v3_small", "fashion_mnist", images, TaskKind::kClassification,
       augmented({real("width_mult", "1.0", 0, true, 4, false, true, "channel width multiplier"), dropout("0.2")}),
       "MobileNetV3-Small"},
      {"transformer_lm", "text", {"text"}, TaskKind::kLanguageModel,
       {integer("d_model", 256, 8, 1 << 14, true, "embedding size"),
        integer("heads", 4, 1, 256, true, "attention heads"),
        integer("layers", 2, 1, 128, true, "encoder layers"),
        integer("ff", 1024, 1, 1 << 16, true, "feed-forward size"),
        shapes_data(integer("seq_len", 128, 2, 1 << 16, true, "tokens per sequence")), dropout("0.1")},
       "Transformer encoder language model"},
      {"bert", "text", {"text"}, TaskKind::kMaskedLanguageModel,
       {text("size", "medium", {"tiny", "mini", "small", "medium"}, true,
             "BERT size (medium: 8 layers, 512 hidden, 8 heads)"),
        shapes_data(integer("seq_len", 128, 2, 1 << 16, true, "tokens per sequence")),
        shapes_data(real("mask_prob", "0.15", 0, true, 1, true, true, "fraction of tokens masked")),
        dropout("0.1")},
       "BERT-style encoder with masked-language-model loss"},
  };
}

// A hyperparameter only the given values of `other` read.
OptionSpec read_with(OptionSpec o, const std::string& other, std::vector<std::string> values) {
  o.read_with = other;
  o.read_with_values = std::move(values);
  return o;
}

OptionSpec milestones() {
  OptionSpec o = text("milestones", "0.5,0.75", {}, false,
                      "multistep schedule: where, as fractions of the full budget, the learning rate is multiplied by gamma");
  o.fractions = true;
  return o;
}

std::vector<OptionSpec> build_training_hyperparameters() {
  const std::string opt = "optimizer", sched = "schedule";
  return {
      text("optimizer", "sgd", {"sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta"}, true,
           "the optimizer, in lower case"),
      // One-cycle runs from max_lr alone, as PyTorch's OneCycleLR.
      read_with(real("lr", "0.01", 0, true, kInf, false, false, "learning rate"), sched,
                {"constant", "step", "multistep", "exponential", "linear", "cosine", "cosine_restarts", "plateau"}),
      read_with(real("momentum", "0", 0, false, 1, true, false, "SGD/RMSprop momentum"), opt, {"sgd", "rmsprop"}),
      read_with(real("dampening", "0", 0, false, 1, false, false, "SGD dampening"), opt, {"sgd"}),
      read_with(boolean("nesterov", false, false, "SGD Nesterov momentum"), opt, {"sgd"}),
      real("weight_decay", "0", 0, false, kInf, false, false, "weight decay"),
      read_with(real("beta1", "0.9", 0, false, 1, true, false, "Adam beta1"), opt, {"adam", "adamw"}),
      read_with(real("beta2", "0.999", 0, false, 1, true, false, "Adam beta2"), opt, {"adam", "adamw"}),
      read_with(real("eps", "1e-8", 0, true, kInf, false, false, "numerical epsilon"), opt,
                {"adam", "adamw", "rmsprop", "adagrad", "adadelta"}),
      read_with(boolean("amsgrad", false, false, "Adam AMSGrad"), opt, {"adam", "adamw"}),
      read_with(real("alpha", "0.99", 0, false, 1, true, false, "RMSprop smoothing"), opt, {"rmsprop"}),
      read_with(boolean("centered", false, false, "RMSprop centered"), opt, {"rmsprop"}),
      read_with(real("rho", "0.9", 0, false, 1, false, false, "Adadelta decay"), opt, {"adadelta"}),
      read_with(real("lr_decay", "0", 0, false, kInf, false, false, "Adagrad lr decay"), opt, {"adagrad"}),
      text("schedule", "constant",
           {"constant", "step", "multistep", "exponential", "linear", "cosine", "cosine_restarts",
            "one_cycle", "plateau"},
           false, "learning-rate schedule"),
      read_with(milestones(), sched, {"multistep"}),
      read_with(integer("step_size", 1, 1, 1e12, false, "step schedule period, in training steps"), sched, {"step"}),
      read_with(real("gamma", "0.1", 0, true, 1, false, false, "step/exponential decay factor, per period or per training step"), sched,
                {"step", "multistep", "exponential"}),
      read_with(integer("t_max", 0, 0, 1e12, false,
                        "cosine period or linear decay length, in training steps (0: the sweep's full budget)"),
                sched, {"cosine", "linear"}),
      read_with(integer("t_0", 1, 1, 1e12, false, "first cosine-restart period, in training steps"), sched, {"cosine_restarts"}),
      read_with(integer("t_mult", 1, 1, 1e6, false, "cosine-restart period multiplier"), sched, {"cosine_restarts"}),
      read_with(real("eta_min", "0", 0, false, kInf, false, false, "cosine minimum, or linear final, learning rate"),
                sched, {"linear", "cosine", "cosine_restarts"}),
      read_with(integer("warmup", 0, 0, 1e12, false, "linear warm-up length, in training steps"), sched,
                {"constant", "step", "multistep", "exponential", "linear", "cosine", "cosine_restarts", "plateau"}),
      read_with(real("warmup_ratio", "0", 0, false, 1, true, false,
                     "linear warm-up length as a fraction of the full budget, as transformers' warmup_ratio"),
                sched, {"constant", "step", "multistep", "exponential", "linear", "cosine", "cosine_restarts", "plateau"}),
      read_with(real("max_lr", "0.1", 0, true, kInf, false, false, "one-cycle peak learning rate"), sched,
                {"one_cycle"}),
      read_with(real("pct_start", "0.3", 0, true, 1, true, false, "one-cycle rising fraction"), sched, {"one_cycle"}),
      read_with(real("plateau_factor", "0.1", 0, true, 1, true, false, "reduce-on-plateau factor"), sched,
                {"plateau"}),
      read_with(integer("plateau_patience", 10, 0, 1e12, false, "reduce-on-plateau patience"), sched, {"plateau"}),
      real("label_smoothing", "0", 0, false, 1, true, false, "cross-entropy label smoothing"),
      text("class_weight", "none", {"none", "balanced"}, false,
           "cross-entropy class weights: balanced weighs each class n / (classes * its count), as sklearn's"),
      real("grad_clip", "0", 0, false, kInf, false, false, "gradient-norm clip (0: off)"),
      integer("batch_size", 64, 1, 1 << 20, true, "examples per batch"),
  };
}

std::string format_number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

}  // namespace

const char* option_type_name(OptionType type) {
  switch (type) {
    case OptionType::kBool: return "boolean";
    case OptionType::kInt: return "integer";
    case OptionType::kReal: return "number";
    case OptionType::kString: return "string";
  }
  return "?";
}

bool OptionSpec::in_range(double v) const {
  if (std::isnan(v)) return false;
  const bool above = min_open ? v > min : v >= min;
  const bool below = max_open ? v < max : v <= max;
  return above && below;
}

std::optional<std::vector<double>> parse_fractions(const std::string& text) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(' '));  // "0.5, 0.75" as YAML lists are written
    item.erase(item.find_last_not_of(' ') + 1);
    double v = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || !(v > 0 && v < 1) ||
        (!out.empty() && v <= out.back())) {
      return std::nullopt;
    }
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

std::string OptionSpec::range_text() const {
  if (type == OptionType::kString && fractions) {
    return "an increasing list of fractions in (0, 1), as [0.5, 0.75] or \"0.5,0.75\"";
  }
  if (type == OptionType::kString) {
    std::string out = "one of ";
    for (size_t i = 0; i < allowed.size(); ++i) out += (i ? ", " : "") + allowed[i];
    return out;
  }
  if (type == OptionType::kBool) return "true or false";
  // An integer's bounds as integers (1000000000000, not 1e+12).
  auto bound = [&](double v) {
    return type == OptionType::kInt && std::abs(v) < 9e18 ? std::to_string(static_cast<std::int64_t>(v)) : format_number(v);
  };
  if (max >= 1e299 || std::isinf(max)) {
    return (min_open ? "> " : ">= ") + bound(min);
  }
  return std::string("in ") + (min_open ? "(" : "[") + bound(min) + ", " + bound(max) + (max_open ? ")" : "]");
}

const OptionSpec* ModelSpec::find_option(const std::string& option) const {
  for (const auto& o : options) {
    if (o.name == option) return &o;
  }
  return nullptr;
}

std::vector<std::string> ModelSpec::option_names() const {
  std::vector<std::string> names;
  for (const auto& o : options) names.push_back(o.name);
  return names;
}

const std::vector<ModelSpec>& models() {
  static const std::vector<ModelSpec> all = build_models();
  return all;
}

const ModelSpec* find_model(const std::string& name) {
  for (const auto& m : models()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : models()) names.push_back(m.name);
  return names;
}

std::vector<std::string> dataset_names() { return {"fashion_mnist", "point_clouds", "text", "csv"}; }

std::vector<std::string> loss_names(TaskKind kind) {
  if (kind == TaskKind::kGan) return {"bce_with_logits"};
  // PyTorch's MSELoss, L1Loss and HuberLoss (delta 1), on standardised targets.
  if (kind == TaskKind::kRegression) return {"mse", "l1", "huber"};
  return {"cross_entropy"};
}

std::vector<std::string> loss_names(const ModelSpec& model, const std::string& dataset) {
  std::vector<std::string> out = loss_names(model.kind);
  if (dataset == "csv" && model.kind == TaskKind::kClassification) {
    for (const auto& loss : loss_names(TaskKind::kRegression)) out.push_back(loss);
  }
  return out;
}

bool is_regression_loss(const std::string& loss) {
  const auto names = loss_names(TaskKind::kRegression);
  return std::find(names.begin(), names.end(), loss) != names.end();
}

TaskKind task_kind(const ModelSpec& model, const std::string& loss) {
  return model.kind == TaskKind::kClassification && is_regression_loss(loss) ? TaskKind::kRegression : model.kind;
}

std::vector<std::string> metric_names(TaskKind kind) {
  switch (kind) {
    // F1 (macro), balanced accuracy, ROC AUC and average precision weigh every class alike (class_metrics.h).
    case TaskKind::kClassification:
      return {"val_accuracy", "val_loss", "train_loss", "val_f1", "val_balanced_accuracy", "val_auc", "val_average_precision"};
    case TaskKind::kLanguageModel:
    case TaskKind::kMaskedLanguageModel: return {"val_perplexity", "val_loss", "train_loss"};
    case TaskKind::kGan: return {"val_fid", "g_loss", "d_loss"};
    // In the target's own units (r2: 1 is perfect, 0 predicts the mean).
    case TaskKind::kRegression: return {"val_rmse", "val_mae", "val_r2", "val_loss", "train_loss"};
  }
  return {};
}

std::string precision_refusal(const ModelSpec& model, const std::string& precision) {
  if (precision == "fp32" || model.kind != TaskKind::kGan) return "";
  return model.name + " trains in fp32 only (its two optimizers step between forward passes, outside one autocast "
                      "region)";
}

const std::vector<OptionSpec>& training_hyperparameters() {
  static const std::vector<OptionSpec> all = build_training_hyperparameters();
  return all;
}

const OptionSpec* find_training_hyperparameter(const std::string& name) {
  for (const auto& o : training_hyperparameters()) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

std::int64_t least_batch(const std::string& model, const std::map<std::string, std::string>& options) {
  if (model == "pointnet" || model == "mobilenet_v3_small") return 2;
  if (model == "resnet18") return options.count("small_input") && options.at("small_input") == "false" ? 2 : 1;
  return 1;
}

}  // namespace hfta::trainers
