#include "hfta/trainers/array_trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include "gan_evaluation.h"
#include "hfta/trainers/catalog.h"
#include "hfta/trainers/class_metrics.h"
#include "hfta/fusion/host_allocator.h"

namespace hfta::trainers {
namespace {
constexpr const char* kLossScaleKey = "loss_scale";  ///< [scale, growth tracker] in a SlotState

// Each model's cross-entropy with the classes weighted by `weights` [C], as
// PyTorch's cross_entropy(weight=, label_smoothing=) gives it: the labels'
// weighted mean of (1 - e) NLL + e / C * sum over classes of -weight * log p.
at::Tensor weighted_cross_entropy(const at::Tensor& logits, const at::Tensor& labels, const std::vector<double>& smoothing,
                                  const at::Tensor& weights) {
  const std::int64_t models = logits.size(0), n = logits.size(1), classes = logits.size(2);
  const bool reduced = logits.scalar_type() == at::kBFloat16 || logits.scalar_type() == at::kHalf;
  const at::Tensor logp = at::log_softmax(reduced ? logits.to(at::kFloat) : logits, -1);
  const at::Tensor w = weights.to(logp.options());
  const at::Tensor row_weight = w.index_select(0, labels).view({1, n});
  const at::Tensor nll = -logp.gather(-1, labels.view({1, n, 1}).expand({models, n, 1})).squeeze(-1);
  const at::Tensor total = row_weight.sum();
  at::Tensor loss = (nll * row_weight).sum(1) / total;
  if (std::any_of(smoothing.begin(), smoothing.end(), [](double e) { return e != 0; })) {
    const at::Tensor smooth = -(logp * w.view({1, 1, classes})).sum(-1).sum(1) / total;
    const at::Tensor e = at::tensor(smoothing, at::kDouble).to(logp.options());
    loss = (1 - e) * loss + e / static_cast<double>(classes) * smooth;
  }
  return loss;
}

}  // namespace

at::Tensor balanced_class_weights(const at::Tensor& labels, std::int64_t classes) {
  const at::Tensor counts = at::bincount(labels.reshape({-1}).cpu(), {}, classes).to(at::kDouble);
  const double present = (counts > 0).sum().item<double>();
  return at::where(counts > 0, static_cast<double>(labels.numel()) / (present * counts), at::ones_like(counts));
}

at::Tensor per_model_cross_entropy(const at::Tensor& logits, const at::Tensor& targets,
                                   const std::vector<double>& smoothing, bool masked, const at::Tensor& weights,
                                   const at::Tensor& weighted) {
  const at::Tensor labels = targets.reshape({-1});  // a language model's [N, T] targets, one per row of logits
  const std::int64_t models = logits.size(0), n = logits.size(1);
  if (weights.defined()) {
    if (masked) throw std::invalid_argument("class weights weigh classes, not masked tokens");
    const at::Tensor plain = per_model_cross_entropy(logits, targets, smoothing);
    const at::Tensor weighed = weighted_cross_entropy(logits, labels, smoothing, weights).to(plain.scalar_type());
    return weighted.defined() ? at::where(weighted.to(plain.device()), weighed, plain) : weighed;
  }
  // Masked: ignored rows count 0 and the mean is over the counted ones.
  const at::Tensor counted = masked ? (labels != kIgnoreLabel) : at::Tensor();
  auto mean = [&](const at::Tensor& per_row) {  // [models, n] -> [models]
    return masked ? per_row.sum(1) / counted.sum().to(per_row.scalar_type()) : per_row.mean(1);
  };
  if (std::all_of(smoothing.begin(), smoothing.end(), [](double e) { return e == 0; })) {
    const at::Tensor all = at::cross_entropy_loss(logits.reshape({models * n, -1}), labels.repeat({models}),
                                                  {}, at::Reduction::None, kIgnoreLabel);
    return mean(all.view({models, n}));
  }
  // PyTorch's label smoothing: (1 - e) * NLL + e * mean over classes of -log p.
  // In at least float32, as autocast runs cross entropy: a model with e = 0
  // then gets the loss it gets above, whatever its mates' smoothing.
  const bool reduced = logits.scalar_type() == at::kBFloat16 || logits.scalar_type() == at::kHalf;
  const at::Tensor logp = at::log_softmax(reduced ? logits.to(at::kFloat) : logits, -1);
  const at::Tensor index = masked ? labels.clamp_min(0) : labels;
  const at::Tensor nll = -logp.gather(-1, index.view({1, n, 1}).expand({models, n, 1})).squeeze(-1);
  const at::Tensor uniform = -logp.mean(-1);
  const at::Tensor e = at::tensor(smoothing, at::kDouble).to(logp.options()).view({models, 1});
  at::Tensor per_row = (1 - e) * nll + e * uniform;
  if (masked) per_row = per_row * counted.to(per_row.scalar_type());
  return mean(per_row);
}

at::Tensor per_model_regression_loss(const at::Tensor& outputs, const at::Tensor& targets, const std::string& loss) {
  const std::int64_t models = outputs.size(0), n = outputs.size(1);
  // In at least float32, as autocast runs these losses: bfloat16 outputs are
  // widened, and the target is never rounded to 8 bits of mantissa.
  const at::ScalarType type = at::promote_types(outputs.scalar_type(), at::kFloat);
  const at::Tensor predicted = outputs.reshape({models, n}).to(type);
  const at::Tensor wanted = targets.reshape({1, n}).to(type).expand({models, n});
  at::Tensor per_row;
  if (loss == "mse") {
    per_row = at::mse_loss(predicted, wanted, at::Reduction::None);
  } else if (loss == "l1") {
    per_row = at::l1_loss(predicted, wanted, at::Reduction::None);
  } else if (loss == "huber") {
    per_row = at::huber_loss(predicted, wanted, at::Reduction::None, 1.0);
  } else {
    throw std::invalid_argument("no regression loss is called " + loss + " (mse, l1 or huber)");
  }
  return per_row.mean(1);
}

ArrayTrainer::ArrayTrainer(std::shared_ptr<ArrayClassifier> model, std::vector<SlotTrial> trials,
                           ArrayTrainerOptions options, const ClassificationData& data, bool initialise)
    : model_(std::move(model)), trials_(std::move(trials)), options_(std::move(options)),
      device_(model_->parameters().front().device()),
      // Unless batches are prepared ahead, the whole dataset moves to the device
      // once (Fashion-MNIST is 190 MB; a copy already there is not copied again):
      // batches are then cut where they are used, with no copy per step.
      device_copy_(device_.is_cpu() || options_.prefetch > 0 ? ClassificationData{} : to_device(data, device_)),
      data_(device_.is_cpu() || options_.prefetch > 0 ? data : device_copy_),
      batches_(std::make_unique<BatchStream>(data_.train, options_.batch_size, options_.data_seed, device_,
                                             options_.prefetch, options_.augmentation, options_.least_batch)),
      gan_(dynamic_cast<FusedDcgan*>(model_.get())) {
  // hfta-tune's main installs the caching host allocator at start-up; a program
  // that trains arrays through this library gets it here. Without it, an array's
  // steps page-fault through fresh heap memory: a CNN array of 4 measured 0.68x
  // of its speed with it (111,704 page faults in 40 steps, against none).
  static const bool host_allocator = fusion::configure_host_allocator();
  (void)host_allocator;
  const auto b = static_cast<std::int64_t>(trials_.size());
  if (b != model_->models()) throw std::invalid_argument("one trial per slot is needed");
  auto each = [this](double SlotTrial::*field) {
    std::vector<double> out;
    for (const auto& t : trials_) out.push_back(t.*field);
    return out;
  };
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& t = trials_[static_cast<std::size_t>(i)];
    if (initialise) model_->init_slot(i, t.seed);
    model_->set_dropout(i, t.dropout);
  }
  smoothing_ = each(&SlotTrial::label_smoothing);
  regression_ = data_.regression();
  if (regression_ != is_regression_loss(options_.loss)) {
    throw std::invalid_argument(regression_ ? "a regression's numeric targets train with mse, l1 or huber, not " + options_.loss
                                            : "classes train with cross_entropy, not " + options_.loss);
  }
  masked_ = !regression_ && (data_.train.labels == kIgnoreLabel).any().item<bool>();
  weigh_classes();
  // A class-balanced measure that early stopping watches is measured, whatever the options say.
  const std::string& m = options_.metric;
  options_.auc = options_.auc || m == "val_auc";
  options_.average_precision = options_.average_precision || m == "val_average_precision";
  options_.class_metrics = options_.class_metrics || options_.auc || options_.average_precision || m == "val_f1" ||
                           m == "val_balanced_accuracy";
  std::vector<fusion::LrSchedule> schedules;
  for (const auto& t : trials_) {
    // Reduce-on-plateau watches the metric early stopping does, in its direction.
    fusion::ScheduleOptions s = t.schedule;
    s.maximize = options_.maximize;
    schedules.emplace_back(t.lr, s);
  }
  build_optimizer(std::move(schedules));
  make_scaler();
  if (!options_.strategies.empty()) {
    model_->set_strategies(options_.strategies);
  } else {  // at B = 1 only a layout is chosen, where an op has a choice
    model_->tune_strategies(batches_->at(0).images);
  }
  status_.assign(static_cast<std::size_t>(b), SlotStatus::kRunning);
  best_.assign(static_cast<std::size_t>(b), -INFINITY);
  loss_sum_ = at::zeros({b}, at::TensorOptions().dtype(at::kDouble).device(device_));
  d_loss_sum_ = at::zeros_like(loss_sum_);
  loss_steps_.assign(static_cast<std::size_t>(b), 0);
  bad_evals_.assign(static_cast<std::size_t>(b), 0);
  seek(0);
}

ArrayTrainer::~ArrayTrainer() = default;

// The optimizer over the current model's parameters, with every slot's
// hyperparameters, and the schedules driving its learning rates.
void ArrayTrainer::build_optimizer(std::vector<fusion::LrSchedule> schedules) {
  auto each = [this](double SlotTrial::*field) {
    std::vector<double> out;
    for (const auto& t : trials_) out.push_back(t.*field);
    return out;
  };
  const auto& opt = options_.optimizer;
  const auto b = static_cast<std::int64_t>(trials_.size());
  auto make = [&](const std::vector<at::Tensor>& params) -> std::unique_ptr<fusion::FusedOptimizer> {
  if (opt == "sgd") {
    fusion::FusedSgdOptions o;
    o.lr = each(&SlotTrial::lr), o.momentum = each(&SlotTrial::momentum), o.weight_decay = each(&SlotTrial::weight_decay);
    o.dampening = each(&SlotTrial::dampening), o.nesterov = each(&SlotTrial::nesterov);
    return std::make_unique<fusion::FusedSgd>(params, b, o);
  } else if (opt == "adam" || opt == "adamw") {
    fusion::FusedAdamOptions o;
    o.lr = each(&SlotTrial::lr), o.beta1 = each(&SlotTrial::beta1), o.beta2 = each(&SlotTrial::beta2);
    o.eps = each(&SlotTrial::eps), o.weight_decay = each(&SlotTrial::weight_decay), o.amsgrad = each(&SlotTrial::amsgrad);
    o.decoupled_weight_decay = opt == "adamw";
    return std::make_unique<fusion::FusedAdam>(params, b, o);
  } else if (opt == "rmsprop") {
    fusion::FusedRmspropOptions o;
    o.lr = each(&SlotTrial::lr), o.alpha = each(&SlotTrial::alpha), o.eps = each(&SlotTrial::eps);
    o.weight_decay = each(&SlotTrial::weight_decay), o.momentum = each(&SlotTrial::momentum);
    o.centered = each(&SlotTrial::centered);
    return std::make_unique<fusion::FusedRmsprop>(params, b, o);
  } else if (opt == "adagrad") {
    fusion::FusedAdagradOptions o;
    o.lr = each(&SlotTrial::lr), o.lr_decay = each(&SlotTrial::lr_decay), o.weight_decay = each(&SlotTrial::weight_decay);
    o.eps = each(&SlotTrial::eps);
    return std::make_unique<fusion::FusedAdagrad>(params, b, o);
  } else if (opt == "adadelta") {
    fusion::FusedAdadeltaOptions o;
    o.lr = each(&SlotTrial::lr), o.rho = each(&SlotTrial::rho), o.weight_decay = each(&SlotTrial::weight_decay);
    o.eps = each(&SlotTrial::eps);
    return std::make_unique<fusion::FusedAdadelta>(params, b, o);
  } else {
    throw std::invalid_argument("unknown optimizer " + opt);
  }
  };
  // A GAN's two optimizers (discriminator, generator) share each trial's hyperparameters.
  const auto groups = model_->optimizer_groups();
  optimizer_ = make(groups.front());
  generator_optimizer_ = groups.size() > 1 ? make(groups[1]) : nullptr;
  scheduler_ = std::make_unique<fusion::FusedLrScheduler>(*optimizer_, std::move(schedules));
  sync_generator_lr();
}

// The schedules drive the first optimizer; a GAN's generator follows its learning rates.
void ArrayTrainer::sync_generator_lr() {
  if (generator_optimizer_) generator_optimizer_->lr() = optimizer_->lr();
}

void ArrayTrainer::seek(std::int64_t steps) {
  // Schedules count the trial's own steps, wherever it trained before.
  for (std::int64_t b = 0; b < model_->models(); ++b) scheduler_->set_steps(b, steps);
  sync_generator_lr();
  step_ = steps;
  batches_->seek(steps);
}

void ArrayTrainer::reseed_dropout() {
  // Dropout masks follow each trial's seed and the step, nothing else: seeded
  // at every step (about a microsecond per model and layer), a trial draws the
  // same masks whether it trained on, moved to another slot or array, or
  // resumed from a checkpoint taken at any step, and wherever evaluations fell.
  for (std::size_t i = 0; i < trials_.size(); ++i) {
    model_->seed_dropout(static_cast<std::int64_t>(i),
                         trials_[i].seed ^ (static_cast<std::uint64_t>(step_) * 0x9e3779b97f4a7c15ULL));
  }
}

std::vector<std::vector<double>> ArrayTrainer::train(std::int64_t steps) {
  model_->train();
  std::vector<std::vector<double>> losses;
  for (std::int64_t s = 0; s < steps; ++s) {
    const Split b = batches_->next();
    reseed_dropout();
    const at::Tensor per_model = gan_ ? gan_step(b) : classifier_step(b);
    scheduler_->step();
    sync_generator_lr();
    ++step_;
    const at::Tensor values = per_model.detach().to(at::kDouble);
    loss_sum_ += values;
    for (auto& n : loss_steps_) ++n;
    if (options_.record_losses) {
      const at::Tensor host = values.cpu();
      losses.emplace_back(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
    }
  }
  // A frozen model's batch-norm statistics moved with the batches it still saw: put them back.
  for (const auto& [slot, plain] : frozen_) model_->load_slot(slot, plain);
  return losses;
}

at::Tensor ArrayTrainer::running_mask() const {
  std::vector<double> active;
  for (auto st : status_) active.push_back(st == SlotStatus::kRunning ? 1.0 : 0.0);
  return at::tensor(active, at::kDouble).to(device_) > 0;
}

void ArrayTrainer::make_scaler() {
  scaler_ = nullptr;
  if (options_.loss_scale <= 0 && options_.precision != fusion::Precision::kFloat16) return;
  if (gan_) throw std::invalid_argument("loss scaling (precision fp16) is not available for GANs: use bf16 or fp32");
  fusion::PerModelLossScaler::Options o;
  if (options_.loss_scale > 0) o.init_scale = options_.loss_scale;
  scaler_ = std::make_unique<fusion::PerModelLossScaler>(model_->models(), o);
}

at::Tensor ArrayTrainer::classifier_step(const Split& b) {
  optimizer_->zero_grad();
  at::Tensor per_model;
  {
    // Autocast covers the forward pass and the loss only, as torch.autocast is
    // meant to be used: the backward runs in the dtypes the forward chose.
    fusion::AutocastScope autocast(options_.precision, device_);
    per_model = per_model_loss(model_->forward(model_->input(b.images)), b.labels);
    if (const at::Tensor extra = model_->regularization(); extra.defined()) per_model = per_model + extra;
  }
  // Each model's gradient is exactly its own loss's: the sum's derivative is 1 per term.
  // Stopped models are left out, so a diverged one's NaN cannot reach anything.
  at::Tensor objective = frozen_.empty() ? per_model : at::where(running_mask(), per_model, at::zeros_like(per_model));
  if (scaler_) objective = scaler_->scale(objective);
  objective.sum().backward();
  if (!scaler_) {
    clip_gradients(model_->parameters());
    optimizer_->step();
    return per_model;
  }
  const std::vector<bool> overflowed = scaler_->unscale(model_->parameters());
  clip_gradients(model_->parameters());
  step_unless_overflowed(overflowed);
  scaler_->update(overflowed);
  return per_model;
}

// GradScaler's step for each model alone: a model whose gradients overflowed
// skips this step (its weights and optimizer state, its step count included,
// stay as they are); the others step as usual.
void ArrayTrainer::step_unless_overflowed(const std::vector<bool>& overflowed) {
  std::vector<std::int64_t> skipped;
  for (std::size_t i = 0; i < overflowed.size(); ++i) {
    const auto slot = static_cast<std::int64_t>(i);
    if (overflowed[i] && !optimizer_->frozen(slot)) {
      optimizer_->freeze(slot);
      skipped.push_back(slot);
    }
  }
  optimizer_->step();
  for (auto slot : skipped) optimizer_->unfreeze(slot);
}

void ArrayTrainer::clip_gradients(const std::vector<at::Tensor>& params) {
  std::vector<double> clip;
  for (const auto& t : trials_) clip.push_back(t.grad_clip);
  if (std::all_of(clip.begin(), clip.end(), [](double c) { return c <= 0; })) return;
  torch::NoGradGuard no_grad;
  const std::int64_t b = model_->models();
  // Each model's total gradient norm over all its rows, as clip_grad_norm_ computes it alone.
  at::Tensor squares = at::zeros({b}, at::TensorOptions().dtype(at::kDouble).device(device_));
  for (const auto& p : params) {
    if (p.grad().defined()) squares += p.grad().reshape({b, -1}).to(at::kDouble).pow(2).sum(1);
  }
  // min(1, clip / (norm + 1e-6)) where clipping is on, else 1: on the device, no host round trip.
  const at::Tensor limit = at::tensor(clip, at::kDouble).to(device_);
  const at::Tensor scale =
      at::where(limit > 0, at::clamp_max(limit / (squares.sqrt() + 1e-6), 1.0), at::ones_like(limit));
  for (auto p : params) {
    if (!p.grad().defined()) continue;
    p.mutable_grad().view({b, -1}).mul_(scale.to(p.grad().options()).view({b, 1}));
  }
}

at::Tensor ArrayTrainer::per_model_loss(const at::Tensor& outputs, const at::Tensor& labels) const {
  return regression_ ? per_model_regression_loss(outputs, labels, options_.loss)
                     : per_model_cross_entropy(outputs, labels, smoothing_, masked_, class_weights_, weighted_);
}

void ArrayTrainer::weigh_classes() {
  class_weights_ = weighted_ = at::Tensor();
  std::vector<bool> weighted;
  for (const auto& t : trials_) weighted.push_back(t.balanced_class_weight != 0);
  if (std::none_of(weighted.begin(), weighted.end(), [](bool w) { return w; })) return;
  if (regression_ || data_.train.labels.dim() != 1) {
    throw std::invalid_argument("balanced class weights weigh a classifier's classes, not a regression's targets nor tokens");
  }
  class_weights_ = balanced_class_weights(data_.train.labels, data_.classes).to(device_);
  std::vector<std::int64_t> flags(weighted.begin(), weighted.end());
  weighted_ = at::tensor(flags, at::kLong).to(at::kBool).to(device_);
}

double ArrayTrainer::watched(const SlotMetrics& m) const {
  // Early stopping looks for increases: a metric to minimise is negated.
  const double v = options_.metric == "val_loss"         ? m.val_loss
                   : options_.metric == "val_perplexity" ? m.val_perplexity
                   : options_.metric == "val_rmse"       ? m.val_rmse
                   : options_.metric == "val_mae"        ? m.val_mae
                   : options_.metric == "val_r2"         ? m.val_r2
                   : options_.metric == "val_f1"         ? m.val_f1
                   : options_.metric == "val_balanced_accuracy" ? m.val_balanced_accuracy
                   : options_.metric == "val_auc"        ? m.val_auc
                   : options_.metric == "val_average_precision" ? m.val_average_precision
                   : options_.metric == "train_loss" || options_.metric == "g_loss" ? m.train_loss
                   : options_.metric == "d_loss"         ? m.d_loss
                   : options_.metric == "val_fid"        ? m.val_fid
                                                     : m.val_accuracy;
  return options_.maximize ? v : -v;
}

std::vector<SlotMetrics> ArrayTrainer::regression_metrics() {
  torch::NoGradGuard no_grad;
  fusion::AutocastScope autocast(options_.precision, device_);  // evaluated as trained
  model_->eval();
  const std::int64_t b = model_->models(), n = data_.validation.size();
  const std::int64_t chunk = std::min<std::int64_t>(1000, 4 * options_.batch_size);
  const auto on_device = at::TensorOptions().dtype(at::kDouble).device(device_);
  // Sums per model: the loss, squared and absolute errors (standardised units).
  at::Tensor loss_sum = at::zeros({b}, on_device), squares = at::zeros({b}, on_device), absolute = at::zeros({b}, on_device);
  for (std::int64_t start = 0; start < n; start += chunk) {
    const std::int64_t count = std::min<std::int64_t>(chunk, n - start);
    const at::Tensor x = model_->input(data_.validation.images.narrow(0, start, count).to(device_));
    const at::Tensor y = data_.validation.labels.narrow(0, start, count).to(device_);
    const at::Tensor outputs = model_->forward(x);
    // In float64, as the errors below: a far target's squared error (1e19 standard
    // deviations out, in a validation row) is finite there, not an infinity that
    // would call the trial diverged.
    loss_sum += per_model_loss(outputs.to(at::kDouble), y) * static_cast<double>(count);
    const at::Tensor error = outputs.reshape({b, count}).to(at::kDouble) - y.to(at::kDouble).unsqueeze(0);
    squares += error.pow(2).sum(1);
    absolute += error.abs().sum(1);
  }
  model_->train();
  const at::Tensor y = data_.validation.labels.to(at::kDouble);
  const double total = (y - y.mean()).pow(2).sum().item<double>();
  loss_sum = loss_sum.cpu(), squares = squares.cpu(), absolute = absolute.cpu();
  const double scale = data_.target_scale;
  std::vector<SlotMetrics> out(static_cast<std::size_t>(b));
  for (std::int64_t i = 0; i < b; ++i) {
    SlotMetrics& m = out[static_cast<std::size_t>(i)];
    const double sse = squares[i].item<double>();
    m.val_loss = loss_sum[i].item<double>() / static_cast<double>(n);
    m.val_accuracy = m.val_perplexity = NAN;
    m.val_rmse = std::sqrt(sse / static_cast<double>(n)) * scale;
    m.val_mae = absolute[i].item<double>() / static_cast<double>(n) * scale;
    // As sklearn's r2_score where the validation targets are all equal: 1 for
    // a perfect fit, else 0; a non-finite error stays non-finite.
    m.val_r2 = total > 0 ? 1 - sse / total : !std::isfinite(sse) ? NAN : sse == 0 ? 1.0 : 0.0;
  }
  return out;
}

std::vector<SlotMetrics> ArrayTrainer::classifier_metrics() {
  torch::NoGradGuard no_grad;
  fusion::AutocastScope autocast(options_.precision, device_);  // evaluated as trained
  model_->eval();
  // Predictions per example, or per (masked) position for language models.
  const std::int64_t b = model_->models(), n = (data_.validation.labels != kIgnoreLabel).sum().item<std::int64_t>();
  // Chunks a few training batches large: fewer calls, and memory near training's.
  const std::int64_t chunk = std::min<std::int64_t>(1000, 4 * options_.batch_size);
  const auto on_device = at::TensorOptions().dtype(at::kDouble).device(device_);
  at::Tensor loss_sum = at::zeros({b}, on_device), correct = at::zeros({b}, on_device);
  std::optional<ClassCounts> counts;
  // For the AUC and average precision, every example's probabilities [B,
  // examples, C] (of two classes, the second's alone), filled a chunk at a time.
  const bool ranked = options_.auc || options_.average_precision;
  at::Tensor scores;
  const std::int64_t examples = data_.validation.size();
  for (std::int64_t start = 0; start < examples; start += chunk) {
    const std::int64_t count = std::min<std::int64_t>(chunk, examples - start);
    // On the device already, unless the data stays on the host (prefetch).
    const at::Tensor x = model_->input(data_.validation.images.narrow(0, start, count).to(device_));
    const at::Tensor y = data_.validation.labels.narrow(0, start, count).reshape({-1}).to(device_);
    const at::Tensor counted = y != kIgnoreLabel;
    const auto rows = counted.sum().item<std::int64_t>();
    if (rows == 0) continue;
    const at::Tensor logits = model_->forward(x);
    loss_sum += per_model_cross_entropy(logits, y, {}, masked_).to(at::kDouble) * static_cast<double>(rows);
    const at::Tensor predicted = logits.argmax(-1);
    correct += ((predicted == y.unsqueeze(0)) & counted.unsqueeze(0)).sum(1).to(at::kDouble);
    if (options_.class_metrics) {
      if (!counts) counts.emplace(b, logits.size(-1), device_);
      counts->add(predicted, y);
    }
    if (ranked) {
      at::Tensor p = at::softmax(logits.to(at::kDouble), -1);
      if (p.size(-1) == 2) p = p.narrow(-1, 1, 1);
      if (!scores.defined()) scores = at::empty({b, examples, p.size(-1)}, p.options());
      scores.narrow(1, start, count).copy_(p);
    }
  }
  model_->train();
  loss_sum = loss_sum.cpu(), correct = correct.cpu();
  std::vector<double> f1, balanced, auc, precision;
  if (counts) f1 = counts->macro_f1(), balanced = counts->balanced_accuracy();
  const at::Tensor labels = ranked ? data_.validation.labels.to(device_) : at::Tensor();
  if (options_.auc) auc = roc_auc(scores, labels);
  if (options_.average_precision) precision = average_precision(scores, labels);
  std::vector<SlotMetrics> out(static_cast<std::size_t>(b));
  for (std::int64_t i = 0; i < b; ++i) {
    const auto k = static_cast<std::size_t>(i);
    SlotMetrics& m = out[k];
    m.val_loss = loss_sum[i].item<double>() / static_cast<double>(n);
    m.val_accuracy = correct[i].item<double>() / static_cast<double>(n);
    m.val_perplexity = std::exp(m.val_loss);
    if (counts) m.val_f1 = f1[k], m.val_balanced_accuracy = balanced[k];
    if (options_.auc) m.val_auc = auc[k];
    if (options_.average_precision) m.val_average_precision = precision[k];
  }
  return out;
}

std::vector<SlotMetrics> ArrayTrainer::evaluate(bool scheduled) {
  std::vector<SlotMetrics> all = gan_ ? gan_metrics() : regression_ ? regression_metrics() : classifier_metrics();
  const at::Tensor train_loss = loss_sum_.cpu(), d_loss = d_loss_sum_.cpu();
  std::vector<SlotMetrics> out;
  for (std::int64_t i = 0; i < model_->models(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (status_[k] != SlotStatus::kRunning) continue;  // stopped before: its metrics are final
    SlotMetrics m = all[k];
    m.trial_id = trials_[k].trial_id;
    m.step = step_;
    const std::int64_t n = loss_steps_[k];
    const double steps = static_cast<double>(n);
    m.train_loss = n ? train_loss[i].item<double>() / steps : NAN;
    if (gan_) m.d_loss = n ? d_loss[i].item<double>() / steps : NAN;
    if (status_[k] == SlotStatus::kRunning) {
      // The bound is on the average over an interval of evaluation: a look's
      // shorter window (early, noisy steps) is not held to it.
      const bool diverged = !std::isfinite(m.train_loss) || !std::isfinite(m.val_loss) ||
                            (gan_ && !std::isfinite(m.d_loss)) ||
                            (scheduled && options_.divergence > 0 && m.train_loss > options_.divergence);
      if (diverged) {
        status_[k] = SlotStatus::kDiverged;
      } else if (!scheduled) {
        // Only looks: patience counts the regular evaluations alone.
      } else if (watched(m) > best_[k] + options_.min_delta) {
        best_[k] = watched(m);
        bad_evals_[k] = 0;
      } else if (options_.patience > 0 && ++bad_evals_[k] >= options_.patience) {
        status_[k] = SlotStatus::kStopped;
      }
      if (status_[k] != SlotStatus::kRunning) {
        optimizer_->freeze(i);
        if (generator_optimizer_) generator_optimizer_->freeze(i);
        frozen_.emplace(i, model_->extract_slot(i));
      }
    }
    if (scheduled && status_[k] == SlotStatus::kRunning && std::isfinite(m.val_loss)) {
      // Reduce-on-plateau schedules watch the same metric as early stopping, as
      // it is (a relative threshold on a negated metric would work backwards).
      scheduler_->observe(i, options_.maximize ? watched(m) : -watched(m));
    }
    m.status = status_[k];
    out.push_back(m);
  }
  if (scheduled) {
    loss_sum_.zero_();
    d_loss_sum_.zero_();
    std::fill(loss_steps_.begin(), loss_steps_.end(), 0);
  }
  compact();
  sync_generator_lr();  // a plateau's new rate, and compaction's rebuilt optimizers
  return out;
}

void ArrayTrainer::compact() {
  std::vector<std::size_t> survivors;
  for (std::size_t k = 0; k < status_.size(); ++k) {
    if (status_[k] == SlotStatus::kRunning) survivors.push_back(k);
  }
  const double stopped = static_cast<double>(status_.size() - survivors.size());
  if (options_.compact_fraction <= 0 || survivors.empty() || stopped == 0 ||
      stopped < options_.compact_fraction * static_cast<double>(status_.size())) {
    return;
  }
  for (const auto& [slot, plain] : frozen_) {
    departed_[trials_[static_cast<std::size_t>(slot)].trial_id] = {plain, export_state(slot)};
  }
  // The survivors move, with their optimizer state, schedules and per-slot
  // bookkeeping, into a new array of just them.
  auto next = model_->resized(static_cast<std::int64_t>(survivors.size()));
  next->set_strategies(model_->strategies());  // the measured choice, not a new timing: same numbers
  std::vector<SlotTrial> trials;
  std::vector<fusion::LrSchedule> schedules;
  std::vector<fusion::SlotState> states;
  std::vector<std::int64_t> steps;
  std::vector<double> best, smoothing;
  std::vector<std::int64_t> bad;
  for (std::size_t i = 0; i < survivors.size(); ++i) {
    const auto k = survivors[i];
    const auto slot = static_cast<std::int64_t>(k);
    next->load_slot(static_cast<std::int64_t>(i), model_->extract_slot(slot));
    next->set_dropout(static_cast<std::int64_t>(i), trials_[k].dropout);
    trials.push_back(trials_[k]);
    schedules.push_back(scheduler_->schedule(slot));
    states.push_back(export_state(slot));
    steps.push_back(scheduler_->steps(slot));
    best.push_back(best_[k]);
    bad.push_back(bad_evals_[k]);
    smoothing.push_back(smoothing_[k]);
  }
  model_ = next;
  gan_ = dynamic_cast<FusedDcgan*>(model_.get());
  trials_ = std::move(trials);
  build_optimizer(std::move(schedules));
  make_scaler();
  for (std::size_t i = 0; i < trials_.size(); ++i) {
    const auto slot = static_cast<std::int64_t>(i);
    import_optimizer(slot, states[i]);
    scheduler_->set_steps(slot, steps[i]);
  }
  status_.assign(trials_.size(), SlotStatus::kRunning);
  best_ = std::move(best);
  bad_evals_ = std::move(bad);
  smoothing_ = std::move(smoothing);
  weigh_classes();
  // Training losses since the last scheduled evaluation move with their slots
  // (an evaluation that only looks leaves them summing).
  std::vector<std::int64_t> kept(survivors.begin(), survivors.end());
  const at::Tensor rows = at::tensor(kept, at::TensorOptions().dtype(at::kLong)).to(loss_sum_.device());
  loss_sum_ = loss_sum_.index_select(0, rows);
  d_loss_sum_ = d_loss_sum_.index_select(0, rows);
  std::vector<std::int64_t> loss_steps;
  for (const auto k : survivors) loss_steps.push_back(loss_steps_[k]);
  loss_steps_ = std::move(loss_steps);
  frozen_.clear();
}

SlotProgress ArrayTrainer::progress(std::int64_t trial_id) const {
  const std::int64_t slot = slot_of(trial_id);
  if (slot < 0) throw std::invalid_argument("trial " + std::to_string(trial_id) + " is not in a slot");
  const auto k = static_cast<std::size_t>(slot);
  SlotProgress p{best_[k], bad_evals_[k], scheduler_->schedule(slot).plateau()};
  p.loss_sum = loss_sum_[slot].item<double>();
  p.d_loss_sum = d_loss_sum_[slot].item<double>();
  p.loss_steps = loss_steps_[k];
  return p;
}

void ArrayTrainer::restore_progress(std::int64_t slot, const SlotProgress& progress) {
  const auto k = static_cast<std::size_t>(slot);
  best_.at(k) = progress.best;
  bad_evals_.at(k) = progress.bad_evals;
  scheduler_->schedule(slot).set_plateau(progress.plateau);
  loss_sum_[slot].fill_(progress.loss_sum);
  d_loss_sum_[slot].fill_(progress.d_loss_sum);
  loss_steps_.at(k) = progress.loss_steps;
}

bool ArrayTrainer::any_running() const {
  return std::any_of(status_.begin(), status_.end(), [](SlotStatus s) { return s == SlotStatus::kRunning; });
}

std::int64_t ArrayTrainer::slot_of(std::int64_t trial_id) const {
  for (std::size_t k = 0; k < trials_.size(); ++k) {
    if (trials_[k].trial_id == trial_id) return static_cast<std::int64_t>(k);
  }
  return -1;
}

std::vector<std::int64_t> ArrayTrainer::trial_ids() const {
  std::vector<std::int64_t> out;
  for (const auto& t : trials_) out.push_back(t.trial_id);
  return out;
}

torch::nn::Sequential ArrayTrainer::extract(std::int64_t trial_id) const {
  if (auto it = departed_.find(trial_id); it != departed_.end()) return it->second.model;
  const std::int64_t slot = slot_of(trial_id);
  if (slot < 0) throw std::out_of_range("trial " + std::to_string(trial_id) + " is not in this array");
  if (auto it = frozen_.find(slot); it != frozen_.end()) return it->second;
  return model_->extract_slot(slot);
}

fusion::SlotState ArrayTrainer::export_optimizer(std::int64_t trial_id) const {
  if (auto it = departed_.find(trial_id); it != departed_.end()) return it->second.optimizer;
  const std::int64_t slot = slot_of(trial_id);
  if (slot < 0) throw std::out_of_range("trial " + std::to_string(trial_id) + " is not in this array");
  return export_state(slot);
}

// A GAN's two optimizer states as one: the same step count (both step every
// training step), and the discriminator's buffers followed by the generator's.
// With loss scaling, the model's scale and growth count follow as one more
// entry, so a trial keeps its scale wherever it moves or resumes.
fusion::SlotState ArrayTrainer::export_state(std::int64_t slot) const {
  fusion::SlotState state = optimizer_->export_slot(slot);
  if (generator_optimizer_) {
    auto generator = generator_optimizer_->export_slot(slot);
    state.buffers.insert(state.buffers.end(), generator.buffers.begin(), generator.buffers.end());
  }
  if (scaler_) {
    const std::vector<double> scale = {scaler_->scale_of(slot), static_cast<double>(scaler_->growth_tracker(slot))};
    state.buffers.push_back({{kLossScaleKey, at::tensor(scale, at::kDouble)}});
  }
  return state;
}

void ArrayTrainer::import_optimizer(std::int64_t slot, const fusion::SlotState& given) {
  fusion::SlotState state = given;
  if (!state.buffers.empty() && state.buffers.back().count(kLossScaleKey)) {
    const at::Tensor scale = state.buffers.back().at(kLossScaleKey).to(at::kDouble).cpu();
    if (scaler_) scaler_->set(slot, scale[0].item<double>(), static_cast<std::int64_t>(scale[1].item<double>()));
    state.buffers.pop_back();
  }
  if (!generator_optimizer_) return optimizer_->import_slot(slot, state);
  const auto split = state.buffers.begin() + static_cast<std::ptrdiff_t>(model_->optimizer_groups().front().size());
  optimizer_->import_slot(slot, {state.step, {state.buffers.begin(), split}});
  generator_optimizer_->import_slot(slot, {state.step, {split, state.buffers.end()}});
}

}  // namespace hfta::trainers
