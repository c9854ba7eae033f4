// The array training loop: B classifiers trained together on the same batches,
// each with its own hyperparameters, metrics and early stopping.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hfta/fusion/fused_optimizer.h"
#include "hfta/fusion/lr_schedule.h"
#include "hfta/fusion/mixed_precision.h"
#include "hfta/trainers/array_classifier.h"
#include "hfta/trainers/batch_stream.h"
#include "hfta/trainers/dcgan.h"
#include "hfta/trainers/fashion_mnist_data.h"

namespace hfta::trainers {

struct GanEvaluation;  // gan_evaluation.h

/// One trial placed in a slot: who it is and its numeric hyperparameters.
struct SlotTrial {
  std::int64_t trial_id = 0;
  std::uint64_t seed = 0;  ///< initialises the slot as the plain model after manual_seed(seed)
  double lr = 0.01, momentum = 0, weight_decay = 0, dropout = 0;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;  ///< every optimizer but SGD; PyTorch's default is 1e-10 for Adagrad, 1e-6 for Adadelta: set it
  double dampening = 0, nesterov = 0, amsgrad = 0;       ///< SGD, Adam (booleans as 0/1)
  double alpha = 0.99, centered = 0, rho = 0.9, lr_decay = 0;  ///< RMSprop, Adadelta, Adagrad
  double label_smoothing = 0;
  /// 1: each class's examples weigh n / (classes * their count) in the training
  /// loss, as sklearn's class_weight="balanced" given to PyTorch's CrossEntropyLoss(weight=).
  double balanced_class_weight = 0;
  double grad_clip = 0;                  ///< > 0: clip the model's gradient norm (clip_grad_norm_)
  fusion::ScheduleOptions schedule;      ///< the learning-rate schedule, in training steps
};

/// What every slot shares.
struct ArrayTrainerOptions {
  std::string optimizer = "sgd";  ///< sgd, adam, adamw, rmsprop, adagrad or adadelta
  /// cross_entropy; or, on regression data (a table's numeric target), mse,
  /// l1 or huber (PyTorch's MSELoss, L1Loss, HuberLoss with delta 1).
  std::string loss = "cross_entropy";
  std::int64_t batch_size = 64;
  std::int64_t least_batch = 1;   ///< an epoch's last batch is topped up to it (batch(), least_batch in model_zoo.h)
  std::uint64_t data_seed = 0;    ///< batch order: a function of (data_seed, epoch) only
  Augmentation augmentation;      ///< training images' random flips and crops, drawn from (data_seed, step)
  std::int64_t patience = 0;      ///< > 0: early stopping on validation accuracy
  double min_delta = 0;
  double divergence = 0;          ///< > 0: a training loss above it counts as diverged
  std::string metric = "val_accuracy";  ///< what early stopping watches (a SlotMetrics field)
  bool maximize = true;
  /// Classifiers: also measure val_f1 and val_balanced_accuracy (class_metrics.h),
  /// and, with `auc`, val_auc, with `average_precision`, val_average_precision
  /// (each ranks every validation example for every class).
  bool class_metrics = false;
  bool auc = false;
  bool average_precision = false;
  /// Rebuild the array without its stopped models once at least this fraction
  /// of its slots has stopped (0: never), so they cost nothing more. The
  /// default rebuilds at the first stop: rebuilding moves a few tensors, while a
  /// stopped model left in place costs a full model's compute every step.
  double compact_fraction = 1e-9;
  /// The array's op strategies (ArrayClassifier::strategies); empty: measured
  /// on the first batch when the array is built (at B = 1 only where an op has
  /// a choice of layout, strategy.h).
  std::vector<fusion::Strategy> strategies;
  /// train() returns every step's losses; false returns none, so a GPU never
  /// waits for the host between steps.
  bool record_losses = true;
  /// What the forward pass computes in: fp32, or autocast to bf16 or fp16
  /// (parameters, gradients and optimizer state stay float32).
  fusion::Precision precision = fusion::Precision::kFloat32;
  /// > 0: per-model dynamic loss scaling starting at this scale; 0: on at
  /// 65536 for fp16 only, as torch.cuda.amp's GradScaler. Scales are powers of
  /// two, so in fp32 or fp64 scaling changes no number unless a model overflows.
  double loss_scale = 0;
  /// Training batches a background thread prepares ahead (batch_stream.h). 0:
  /// the dataset moves to the array's device once and each batch is cut there
  /// when needed; > 0: the dataset stays where it is given (the host) and each
  /// batch is cut there, ahead, and copied asynchronously from pinned memory.
  /// The batches, and so every number, are the same either way.
  std::int64_t prefetch = 0;
};

/// A trial's state in the array.
enum class SlotStatus { kRunning, kStopped, kDiverged };

/// One evaluation of one slot.
struct SlotMetrics {
  std::int64_t trial_id = 0;
  std::int64_t step = 0;
  double train_loss = 0;  ///< mean over the steps since the previous scheduled evaluation
  double val_loss = 0;
  double val_accuracy = 0;    ///< of classes, or of next tokens for language models
  double val_perplexity = 0;  ///< exp(val_loss): the language models' measure
  // GANs: train_loss is the generator's loss; val_loss and val_accuracy are the
  // discriminator's, telling validation images from samples of fixed noise.
  double d_loss = NAN;   ///< the discriminator's mean training loss (real + fake)
  double val_fid = NAN;  ///< Fréchet distance of samples to validation images (frechet_distance.h)
  // Regression (val_accuracy NaN): errors in the target's own units, and the
  // coefficient of determination (sklearn's r2_score: 1 - SSE / SST).
  double val_rmse = NAN, val_mae = NAN, val_r2 = NAN;
  // Classifiers, where asked (ArrayTrainerOptions::class_metrics, auc,
  // average_precision): macro F1, balanced accuracy, ROC AUC and average
  // precision, as sklearn's (class_metrics.h).
  double val_f1 = NAN, val_balanced_accuracy = NAN, val_auc = NAN, val_average_precision = NAN;
  SlotStatus status = SlotStatus::kRunning;
};

/// What a running trial's early stopping and reduce-on-plateau schedule have
/// seen in its trainer: with its model and optimizer state, enough to continue
/// it elsewhere, from an evaluation point, exactly as if it had not stopped.
struct SlotProgress {
  double best = -INFINITY;       ///< the best watched metric (larger is better)
  std::int64_t bad_evals = 0;    ///< evaluations since it last improved
  fusion::LrSchedule::PlateauState plateau;
  /// Training losses since the last scheduled evaluation (a GAN's generator's,
  /// and its discriminator's) and their count: what the next one averages.
  double loss_sum = 0, d_loss_sum = 0;
  std::int64_t loss_steps = 0;
};

class ArrayTrainer {
 public:
  /// Slots start from their trial's seed; `initialise` false leaves the model and
  /// optimizer as they are, for trials loaded from where they stopped.
  ArrayTrainer(std::shared_ptr<ArrayClassifier> model, std::vector<SlotTrial> trials,
               ArrayTrainerOptions options, const ClassificationData& data, bool initialise = true);
  ~ArrayTrainer();

  /// Starts the shared data stream after `steps` batches (where the array's
  /// trials stopped: promoted trials continue the data, not restart it).
  void seek(std::int64_t steps);

  /// Trains `steps` batches (continuing the shared data stream); returns each
  /// step's per-model training loss [steps][B] (empty without record_losses).
  std::vector<std::vector<double>> train(std::int64_t steps);

  /// Evaluates every running slot on the validation set and applies early
  /// stopping and divergence: stopped slots are frozen (they change no more),
  /// and once enough have stopped the array is compacted. Returns the metrics
  /// of the trials that were running, in slot order, keyed by trial id.
  /// `scheduled` false: an evaluation between the regular ones (a rung that
  /// ends mid-epoch) that only looks: a non-finite loss still stops a slot,
  /// but the divergence bound, early-stopping patience, reduce-on-plateau and
  /// the training-loss average go on as if it had not happened, so where rungs
  /// end changes no trajectory.
  std::vector<SlotMetrics> evaluate(bool scheduled = true);

  /// The trials in the array's slots, in slot order (compaction removes stopped ones).
  std::vector<std::int64_t> trial_ids() const;
  /// A trial's model as its plain module, and its optimizer state, wherever it
  /// is: in a slot, or removed by compaction.
  torch::nn::Sequential extract(std::int64_t trial_id) const;
  fusion::SlotState export_optimizer(std::int64_t trial_id) const;
  /// Puts a trial's optimizer state (as export_optimizer gives it) into slot b.
  void import_optimizer(std::int64_t slot, const fusion::SlotState& state);
  /// A trial's progress (it must be in a slot), and its restoration into a slot.
  SlotProgress progress(std::int64_t trial_id) const;
  void restore_progress(std::int64_t slot, const SlotProgress& progress);

  ArrayClassifier& model() { return *model_; }
  fusion::FusedOptimizer& optimizer() { return *optimizer_; }
  SlotStatus status(std::int64_t slot) const { return status_.at(static_cast<std::size_t>(slot)); }
  std::int64_t step() const { return step_; }
  /// Whether any slot still trains (when none does, the rest of a rung is waste).
  bool any_running() const;
  /// The per-model loss scales, when loss scaling is on (else null).
  fusion::PerModelLossScaler* loss_scaler() { return scaler_.get(); }

 private:
  std::shared_ptr<ArrayClassifier> model_;
  std::vector<SlotTrial> trials_;
  ArrayTrainerOptions options_;
  at::Device device_;                 ///< where the model is: batches are cut there
  ClassificationData device_copy_;    ///< the data on device_, when batches are cut there off the CPU
  const ClassificationData& data_;    ///< the data batches are cut from (device_copy_, or as given)
  std::unique_ptr<BatchStream> batches_;
  std::unique_ptr<fusion::FusedOptimizer> optimizer_;  ///< a GAN's: the discriminator's
  FusedDcgan* gan_ = nullptr;  ///< the model, when it is a GAN (adversarial steps, two optimizers)
  std::unique_ptr<fusion::FusedOptimizer> generator_optimizer_;  ///< a GAN's second optimizer
  std::unique_ptr<GanEvaluation> gan_evaluation_;  ///< made at a GAN's first evaluation
  at::Tensor d_loss_sum_;  ///< [B]: a GAN's discriminator losses since the last scheduled evaluation
  std::unique_ptr<fusion::FusedLrScheduler> scheduler_;
  std::unique_ptr<fusion::PerModelLossScaler> scaler_;  ///< per-model loss scales (fp16, or asked for)
  std::vector<SlotStatus> status_;
  std::vector<double> best_;
  at::Tensor loss_sum_;  ///< [B] on device_: training losses since the last scheduled evaluation
  std::vector<std::int64_t> bad_evals_;
  std::vector<std::int64_t> loss_steps_;  ///< per slot: steps in loss_sum_
  std::int64_t step_ = 0;
  std::vector<double> smoothing_;
  /// The training labels' balanced class weights [classes] on device_, and
  /// which slots [B] weigh by them; undefined where none does.
  at::Tensor class_weights_, weighted_;
  bool masked_ = false;  ///< labels hold kIgnoreLabel (masked language models)
  bool regression_ = false;  ///< labels are numeric targets (ClassificationData::regression)
  std::map<std::int64_t, torch::nn::Sequential> frozen_;  ///< stopped slots as they stopped

  // A trial compaction removed: how it stopped.
  struct Departed {
    torch::nn::Sequential model;
    fusion::SlotState optimizer;
  };
  std::map<std::int64_t, Departed> departed_;

  double watched(const SlotMetrics& m) const;
  std::vector<SlotMetrics> classifier_metrics();  ///< validation metrics of every slot
  std::vector<SlotMetrics> regression_metrics();  ///< classifier_metrics() of a regression
  at::Tensor per_model_loss(const at::Tensor& outputs, const at::Tensor& labels) const;  ///< [B]
  void weigh_classes();  ///< sets class_weights_ from trials_
  at::Tensor running_mask() const;  ///< [B] bool: which slots still train
  at::Tensor classifier_step(const Split& batch);  ///< returns the per-model loss [B]
  at::Tensor gan_step(const Split& batch);         ///< returns the generator's loss [B]
  std::vector<SlotMetrics> gan_metrics();          ///< evaluate() of a GAN: unfilled status
  void clip_gradients(const std::vector<at::Tensor>& params);
  void step_unless_overflowed(const std::vector<bool>& overflowed);
  void make_scaler();
  void sync_generator_lr();
  fusion::SlotState export_state(std::int64_t slot) const;
  void build_optimizer(std::vector<fusion::LrSchedule> schedules);
  void reseed_dropout();
  void compact();
  std::int64_t slot_of(std::int64_t trial_id) const;  ///< -1: not in a slot
};

/// Per-model mean cross-entropy of logits [B, N, C] against labels [N] (or
/// [N, T] with N*T rows of logits): a [B] tensor; `smoothing` (one per model, or
/// empty) is PyTorch's label_smoothing. `masked`: labels may be kIgnoreLabel,
/// and the mean is over the others, as PyTorch's ignore_index. `weights` [C]
/// (or undefined: none) weigh the classes as PyTorch's cross_entropy(weight=)
/// does, for the models `weighted` [B] (bool) names (undefined: every model);
/// the others' losses are the unweighted ones.
at::Tensor per_model_cross_entropy(const at::Tensor& logits, const at::Tensor& labels,
                                   const std::vector<double>& smoothing = {}, bool masked = false,
                                   const at::Tensor& weights = {}, const at::Tensor& weighted = {});

/// sklearn's compute_class_weight("balanced") of labels [N] over `classes`:
/// n / (present classes * count) for each class present, 1 for any absent.
at::Tensor balanced_class_weights(const at::Tensor& labels, std::int64_t classes);

/// Per-model mean regression loss ("mse", "l1" or "huber") of outputs
/// [B, N, 1] against targets [N]: a [B] tensor, each model's as PyTorch's
/// MSELoss, L1Loss or HuberLoss (delta 1) gives it alone.
at::Tensor per_model_regression_loss(const at::Tensor& outputs, const at::Tensor& targets, const std::string& loss);

}  // namespace hfta::trainers
