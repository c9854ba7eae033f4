// Imbalanced classes: balanced class weights train each model of an array as
// PyTorch's CrossEntropyLoss(weight=) trains it alone, and the array measures
// macro F1, balanced accuracy, ROC AUC and average precision as counted from
// each plain model.
#include "train_alone.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "hfta/trainers/class_metrics.h"

namespace hfta::trainers {
namespace {

// Fashion-MNIST with classes 0 to 4 cut to a tenth, in training and validation.
const ClassificationData& imbalanced() {
  static const ClassificationData d = [] {
    auto cut = [](const Split& s) {
      const at::Tensor keep = (s.labels >= 5) | (at::arange(s.size()) % 10 == 0);
      return Split{s.images.index({keep}), s.labels.index({keep})};
    };
    ClassificationData out = data();
    out.train = cut(out.train);
    out.validation = cut(out.validation);
    return out;
  }();
  return d;
}

TEST(ClassWeights, EachModelsLossIsPyTorchsWeightedCrossEntropy) {
  at::manual_seed(7);
  for (at::ScalarType type : {at::kFloat, at::kDouble}) {
    const at::Tensor logits = at::randn({3, 50, 4}, type);
    const at::Tensor labels = at::randint(0, 4, {50}, at::kLong);
    const at::Tensor weights = balanced_class_weights(labels, 4);
    const std::vector<double> smoothing = {0.0, 0.1, 0.2};
    const at::Tensor weighted = at::tensor(std::vector<std::int64_t>{1, 0, 1}, at::kLong).to(at::kBool);
    const at::Tensor got = per_model_cross_entropy(logits, labels, smoothing, false, weights, weighted);
    const at::Tensor unweighted = per_model_cross_entropy(logits, labels, smoothing);
    for (std::int64_t b = 0; b < 3; ++b) {
      const bool w = b != 1;
      const at::Tensor want = at::cross_entropy_loss(logits[b], labels, w ? weights.to(type) : at::Tensor(),
                                                     at::Reduction::Mean, -100, smoothing[b]);
      EXPECT_LE(relative(got[b].item<double>(), want.item<double>()), type == at::kFloat ? 1e-6 : 1e-12) << "model " << b;
    }
    // A model that weighs nothing gets the unweighted loss, bit for bit.
    EXPECT_EQ(got[1].item<double>(), unweighted[1].item<double>());
  }
}

TEST(ClassWeights, BalancedWeightsAreScikitLearnsWithAbsentClassesAtOne) {
  // sklearn: compute_class_weight("balanced", classes=[0, 1, 2], y=[0, 0, 0, 1, 2, 2]) = [2/3, 2, 1].
  const at::Tensor w = balanced_class_weights(at::tensor(std::vector<std::int64_t>{0, 0, 0, 1, 2, 2}, at::kLong), 4);
  EXPECT_NEAR(w[0].item<double>(), 2.0 / 3.0, 1e-15);
  EXPECT_EQ(w[1].item<double>(), 2.0);
  EXPECT_EQ(w[2].item<double>(), 1.0);
  EXPECT_EQ(w[3].item<double>(), 1.0);
}

void expect_balanced_weights_as_alone(const at::Device& device) {
  // Trials 0 and 1 differ only in their weights; 2 smooths its weighted labels.
  std::vector<SlotTrial> trials = {{0, 11, 0.05, 0.9}, {1, 11, 0.05, 0.9}, {2, 13, 0.02, 0.5}, {3, 14, 0.1, 0.0}};
  trials[0].balanced_class_weight = 1;
  trials[2].balanced_class_weight = 1;
  trials[2].label_smoothing = 0.1;
  ArrayTrainerOptions o;
  o.batch_size = 32;
  o.data_seed = 6;
  const ClassificationData d = on(device, imbalanced());
  auto model = std::make_shared<FusedMlp>(4, 784, 1, 32, "relu", 0.0, 10,
                                          at::TensorOptions().dtype(at::kDouble).device(device));
  expect_same_as_alone(model, trials, o, 60, d);
  // The weights change the training: the twins part at the first step.
  ArrayTrainer twins(model->resized(2), {trials[0], trials[1]}, o, d);
  const auto losses = twins.train(1);
  EXPECT_GT(relative(losses[0][0], losses[0][1]), 1e-3);
}

TEST(ArrayTrainer, BalancedClassWeightsTrainEachTrialAsAloneOnAnImbalancedSet) {
  expect_balanced_weights_as_alone(at::kCPU);
}

TEST(ArrayTrainer, BalancedClassWeightsTrainEachTrialAsAloneOnAnImbalancedSetOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_balanced_weights_as_alone(at::kCUDA);
}

// Each model's F1, balanced accuracy and AUC counted plainly from its own
// outputs: a confusion matrix, and every (positive, negative) pair of each
// class (a tie counting a half).
struct Counted {
  double f1 = 0, balanced = 0, auc = 0, ap = 0;
};

Counted count_plainly(torch::nn::Sequential plain, const Split& validation, std::int64_t classes) {
  torch::NoGradGuard no_grad;
  plain->eval();
  const at::Tensor p = at::softmax(plain->forward(validation.images.to(at::kDouble)), -1).cpu();
  const at::Tensor y = validation.labels.cpu(), predicted = p.argmax(-1);
  Counted out;
  for (std::int64_t c = 0; c < classes; ++c) {
    const double tp = ((predicted == c) & (y == c)).sum().item<double>();
    const double said = (predicted == c).sum().item<double>(), is = (y == c).sum().item<double>();
    out.f1 += 2 * tp / (said + is);
    out.balanced += tp / is;
    const at::Tensor pos = p.select(1, c).index({y == c}), neg = p.select(1, c).index({y != c});
    const at::Tensor above = pos.unsqueeze(1) > neg.unsqueeze(0), tied = pos.unsqueeze(1) == neg.unsqueeze(0);
    out.auc += (above.sum().item<double>() + 0.5 * tied.sum().item<double>()) / (is * neg.size(0));
    // Average precision: down the rows by score, at the end of each run of
    // equal scores, the precision so far times the recall the run added.
    std::vector<std::pair<double, bool>> ranked;
    for (std::int64_t i = 0; i < y.size(0); ++i) ranked.emplace_back(p[i][c].item<double>(), y[i].item<std::int64_t>() == c);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    double found = 0, found_before = 0;
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      found += ranked[k].second;
      if (k + 1 == ranked.size() || ranked[k + 1].first != ranked[k].first) {
        out.ap += (found - found_before) / is * found / static_cast<double>(k + 1);
        found_before = found;
      }
    }
  }
  out.f1 /= classes, out.balanced /= classes, out.auc /= classes, out.ap /= classes;
  return out;
}

void expect_class_measures_as_counted(const at::Device& device) {
  std::vector<SlotTrial> trials = {{0, 21, 0.05, 0.9}, {1, 22, 0.01}, {2, 23, 0.1, 0.5}};
  trials[1].balanced_class_weight = 1;
  ArrayTrainerOptions o;
  o.batch_size = 64;
  o.class_metrics = true;
  o.auc = true;
  o.average_precision = true;
  const ClassificationData d = on(device, imbalanced());
  ArrayTrainer trainer(std::make_shared<FusedMlp>(3, 784, 1, 32, "relu", 0.0, 10,
                                                  at::TensorOptions().dtype(at::kDouble).device(device)),
                       trials, o, d);
  trainer.train(40);
  const auto metrics = trainer.evaluate();
  ASSERT_EQ(metrics.size(), 3u);
  for (const auto& m : metrics) {
    SCOPED_TRACE("trial " + std::to_string(m.trial_id));
    const Counted want = count_plainly(trainer.extract(m.trial_id), d.validation, 10);
    EXPECT_NEAR(m.val_f1, want.f1, 1e-12);
    EXPECT_NEAR(m.val_balanced_accuracy, want.balanced, 1e-12);
    EXPECT_NEAR(m.val_auc, want.auc, 1e-12);
    EXPECT_NEAR(m.val_average_precision, want.ap, 1e-12);
    // On these classes the share of examples right is not the mean recall.
    EXPECT_GT(std::abs(m.val_accuracy - m.val_balanced_accuracy), 1e-3);
  }
  // Without asking, neither is measured.
  ArrayTrainer plain(std::make_shared<FusedMlp>(1, 784, 1, 8, "relu", 0.0), {trials[0]}, ArrayTrainerOptions{}, data());
  const auto m = plain.evaluate().front();
  EXPECT_TRUE(std::isnan(m.val_f1) && std::isnan(m.val_auc));
}

TEST(ArrayTrainer, MeasuresF1BalancedAccuracyAndAucAsCountedFromEachPlainModel) {
  expect_class_measures_as_counted(at::kCPU);
}

// ClassCounts' bincounts and the AUC's sort and searchsorted, on the GPU.
TEST(ArrayTrainer, MeasuresF1BalancedAccuracyAndAucAsCountedFromEachPlainModelOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_class_measures_as_counted(at::kCUDA);
}

}  // namespace
}  // namespace hfta::trainers
