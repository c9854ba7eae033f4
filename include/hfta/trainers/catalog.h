// What a sweep can ask the trainers for: datasets, models and their options,
// losses, metrics, and the training hyperparameters every model understands.
// Plain data without tensors, so the config loader can validate a sweep
// without pulling in LibTorch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hfta::trainers {

/// The type of an option's value.
enum class OptionType { kBool, kInt, kReal, kString };

/// "boolean", "integer", "number" or "string".
const char* option_type_name(OptionType type);

/// One named option of a model, or one training hyperparameter.
struct OptionSpec {
  std::string name;
  OptionType type = OptionType::kReal;
  std::string default_value;             ///< as written in YAML ("256", "relu", "true")
  bool structural = false;               ///< changes the model's shape, kernels or input: never fused across values
  bool shapes_data = false;              ///< shapes the dataset every trial shares: task.options only, never a parameter
  bool augments = false;                 ///< structural, of the training batches (flip, crop): not the model's size
  double min = -1e300;                   ///< numeric range, inclusive unless *_open
  double max = 1e300;
  bool min_open = false;
  bool max_open = false;
  std::vector<std::string> allowed;      ///< kString: the accepted values
  bool fractions = false;                ///< kString: instead, an increasing list of fractions in (0, 1), "0.5,0.75"
  std::string help;
  /// A training hyperparameter that only some values of another one read
  /// (rho: optimizer adadelta); empty when every trial reads it. A sweep
  /// whose `read_with` never takes one of `read_with_values` is refused: the
  /// parameter would be sampled and recorded, and change nothing.
  std::string read_with;
  std::vector<std::string> read_with_values;

  /// True when the number is inside [min, max] (or the open ends).
  bool in_range(double v) const;
  /// "in [0, 1)", "> 0", "one of relu, gelu" for messages.
  std::string range_text() const;
};

/// "0.5,0.75" as {0.5, 0.75}: comma-separated, strictly increasing, each in
/// (0, 1); nullopt for anything else (the format of `fractions` options).
std::optional<std::vector<double>> parse_fractions(const std::string& text);

/// The kind of learning problem a sweep solves; fixes its losses and metrics.
/// A model's own kind, but regression where a classifier learns a table's
/// numeric target (task.loss mse, l1 or huber).
enum class TaskKind { kClassification, kLanguageModel, kMaskedLanguageModel, kGan, kRegression };

/// A model a sweep can tune.
struct ModelSpec {
  std::string name;
  std::string dataset;   ///< the dataset it trains on by default
  std::vector<std::string> datasets;  ///< every dataset it accepts
  TaskKind kind = TaskKind::kClassification;
  std::vector<OptionSpec> options;
  std::string help;

  const OptionSpec* find_option(const std::string& name) const;
  std::vector<std::string> option_names() const;
};

/// Every model, in a stable order.
const std::vector<ModelSpec>& models();
/// The model with that name, or nullptr.
const ModelSpec* find_model(const std::string& name);
std::vector<std::string> model_names();

/// Every dataset name ("fashion_mnist", "point_clouds", "text", "csv": a table of the user's own).
std::vector<std::string> dataset_names();

/// Losses a task kind can train with; the first is the default.
std::vector<std::string> loss_names(TaskKind kind);

/// Losses `model` can train with on `dataset`: its kind's, and on a table
/// (csv) the regression losses too.
std::vector<std::string> loss_names(const ModelSpec& model, const std::string& dataset);

/// A table's integer labels of more classes than this may be a measurement
/// (a count, a price): where they fail as classes, and plan's notes, say how
/// to predict the number instead.
inline constexpr long kManyIntegerClasses = 20;

/// True for a loss that learns a number rather than a class (mse, l1, huber).
bool is_regression_loss(const std::string& loss);

/// What `model` trained with `loss` solves: the model's kind, or regression.
TaskKind task_kind(const ModelSpec& model, const std::string& loss);

/// Metrics a task kind reports at each evaluation point.
std::vector<std::string> metric_names(TaskKind kind);

/// Why `model` cannot train in `precision` ("fp32", "bf16", "fp16"), or "" where it can.
std::string precision_refusal(const ModelSpec& model, const std::string& precision);

/// Hyperparameters every model understands (optimizer, lr, schedule, ...).
const std::vector<OptionSpec>& training_hyperparameters();
/// The training hyperparameter with that name, or nullptr.
const OptionSpec* find_training_hyperparameter(const std::string& name);

/// The fewest examples a training batch of `model` may hold: 2 where a batch
/// norm normalises a channel over the batch alone (PointNet's classifier,
/// MobileNetV3's last 1x1 maps, ResNet-18's without small_input at 32x32),
/// whose variance over one value PyTorch refuses ("Expected more than 1
/// value per channel when training") and whose running variance would be
/// NaN; else 1.
std::int64_t least_batch(const std::string& model, const std::map<std::string, std::string>& options);

}  // namespace hfta::trainers
