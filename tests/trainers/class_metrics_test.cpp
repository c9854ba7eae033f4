// Macro F1, balanced accuracy, ROC AUC and average precision of B models at once, against
// scikit-learn's values for small sets (computed once, below), and against a
// plain count, model by model, on random sets with many ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/ATen.h>

#include "hfta/trainers/class_metrics.h"

namespace hfta::trainers {
namespace {

// Ten examples of three classes and two models' probabilities, with ties
// (rows of equal maxima, equal scores across examples); model 1 never
// predicts class 1. sklearn 1.2.1 gave, for each model,
//   f1_score(y, p.argmax(1), average="macro"), balanced_accuracy_score(y, p.argmax(1)),
//   roc_auc_score(y, p, multi_class="ovr"):
// 0.8857142857142857, 0.8888888888888888, 1.0; and
// 0.29523809523809524, 0.3611111111111111, 0.7311507936507936; and
// average_precision_score(label_binarize(y, classes=[0, 1, 2]), p, average="macro"):
// 1.0 and 0.653042328042328.
const std::vector<std::int64_t> kLabels = {0, 0, 1, 2, 2, 2, 1, 0, 2, 1};
const std::vector<double> kProbabilities = {
    .5, .25, .25, .6, .2,  .2,  .2, .5, .3,  .1, .2,  .7, .25, .25, .5, .3, .3, .4, .4, .4, .2, .5, .25, .25, .2, .3, .5, .1, .6, .3,
    .7, .1,  .2,  .2, .3,  .5,  .4, .3, .3,  .3, .2,  .5, .6,  .1,  .3, .2, .2, .6, .5, .25, .25, .25, .25, .5, .1, .1, .8, .3, .3, .4};

TEST(ClassMetrics, EqualScikitLearnsOnThreeClassesWithTies) {
  const at::Tensor p = at::tensor(kProbabilities, at::kDouble).view({2, 10, 3});
  const at::Tensor y = at::tensor(kLabels, at::kLong);
  ClassCounts counts(2, 3, at::kCPU);
  counts.add(p.argmax(-1), y);
  const auto f1 = counts.macro_f1(), balanced = counts.balanced_accuracy();
  const auto auc = roc_auc(p, y);
  EXPECT_NEAR(f1[0], 0.8857142857142857, 1e-15);
  EXPECT_NEAR(balanced[0], 0.8888888888888888, 1e-15);
  EXPECT_NEAR(auc[0], 1.0, 1e-15);
  EXPECT_NEAR(f1[1], 0.29523809523809524, 1e-15);
  EXPECT_NEAR(balanced[1], 0.3611111111111111, 1e-15);
  EXPECT_NEAR(auc[1], 0.7311507936507936, 1e-15);
  const auto ap = average_precision(p, y);
  EXPECT_NEAR(ap[0], 1.0, 1e-15);
  EXPECT_NEAR(ap[1], 0.653042328042328, 1e-15);
}

TEST(ClassMetrics, EqualScikitLearnsOnTwoClasses) {
  // sklearn: roc_auc_score(y, p[:, 1]) 0.84375, f1_score(..., average="macro")
  // 0.7333333333333334, balanced_accuracy_score 0.75, average_precision_score
  // 0.8303571428571428.
  const at::Tensor p = at::tensor(std::vector<double>{.2, .8, .6, .4, .6, .4, .3, .7, .6, .4, .9, .1, .5, .5, .5, .5},
                                  at::kDouble).view({1, 8, 2});
  const at::Tensor y = at::tensor(std::vector<std::int64_t>{1, 0, 0, 1, 1, 0, 1, 0}, at::kLong);
  ClassCounts counts(1, 2, at::kCPU);
  counts.add(p.argmax(-1), y);
  EXPECT_NEAR(roc_auc(p, y)[0], 0.84375, 1e-15);
  EXPECT_NEAR(roc_auc(p.narrow(2, 1, 1), y)[0], 0.84375, 1e-15);  // the second class's probability alone
  EXPECT_NEAR(average_precision(p, y)[0], 0.8303571428571428, 1e-15);
  EXPECT_NEAR(average_precision(p.narrow(2, 1, 1), y)[0], 0.8303571428571428, 1e-15);
  EXPECT_NEAR(counts.macro_f1()[0], 0.7333333333333334, 1e-15);
  EXPECT_NEAR(counts.balanced_accuracy()[0], 0.75, 1e-15);
}

// A plain count for one model: the confusion matrix, and every (positive,
// negative) pair of each class, a tie counting a half.
struct Plain {
  double f1, balanced, auc, ap;
};

Plain plain_metrics(const at::Tensor& p, const at::Tensor& y) {  // p [n, C]
  const std::int64_t n = p.size(0), classes = p.size(1);
  const at::Tensor predicted = p.argmax(1);
  double f1 = 0, balanced = 0, auc = 0, ap = 0;
  int f1_classes = 0, balanced_classes = 0, auc_classes = 0, ap_classes = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    double tp = 0, fp = 0, fn = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const bool is = y[i].item<std::int64_t>() == c, said = predicted[i].item<std::int64_t>() == c;
      tp += is && said, fp += !is && said, fn += is && !said;
    }
    if (tp + fp + fn > 0) f1 += 2 * tp / (2 * tp + fp + fn), ++f1_classes;
    if (tp + fn > 0) balanced += tp / (tp + fn), ++balanced_classes;
    if (classes == 2 && c == 0) continue;  // two classes: the second's score alone
    double pairs = 0, wins = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        if (y[i].item<std::int64_t>() != c || y[j].item<std::int64_t>() == c) continue;
        const double a = p[i][c].item<double>(), b = p[j][c].item<double>();
        pairs += 1;
        wins += a > b ? 1 : a == b ? 0.5 : 0;
      }
    }
    if (pairs > 0) auc += wins / pairs, ++auc_classes;
    // Average precision: at each distinct score, highest first, the precision
    // of everything scored at least that, times the recall it adds.
    std::vector<double> thresholds;
    for (std::int64_t i = 0; i < n; ++i) thresholds.push_back(p[i][c].item<double>());
    std::sort(thresholds.rbegin(), thresholds.rend());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    double positives = 0, recall_before = 0, sum = 0;
    for (std::int64_t i = 0; i < n; ++i) positives += y[i].item<std::int64_t>() == c;
    for (double t : thresholds) {
      double tp = 0, chosen = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        if (p[i][c].item<double>() >= t) chosen += 1, tp += y[i].item<std::int64_t>() == c;
      }
      sum += (tp / positives - recall_before) * tp / chosen;
      recall_before = tp / positives;
    }
    if (positives > 0) ap += sum, ++ap_classes;
  }
  return {f1 / f1_classes, balanced / balanced_classes, auc / auc_classes, ap / ap_classes};
}

TEST(ClassMetrics, EveryModelsEqualsAPlainCountOnRandomSetsCountedInChunks) {
  at::manual_seed(3);
  for (std::int64_t classes : {2, 3, 7}) {
    const std::int64_t models = 4, n = 90;
    // Scores on a coarse grid: many ties, across examples and within rows.
    const at::Tensor logits = at::randint(0, 4, {models, n, classes}, at::kDouble);
    const at::Tensor p = at::softmax(logits, -1);
    // Class 1 is rare; with 7 classes, class 6 is never a label.
    at::Tensor y = at::randint(0, classes == 7 ? 6 : classes, {n}, at::kLong);
    y.masked_fill_((y == 1) & (at::rand({n}) < 0.8), 0);
    ClassCounts counts(models, classes, at::kCPU);
    for (std::int64_t start = 0; start < n; start += 32) {
      const std::int64_t count = std::min<std::int64_t>(32, n - start);
      counts.add(p.narrow(1, start, count).argmax(-1), y.narrow(0, start, count));
    }
    const auto f1 = counts.macro_f1(), balanced = counts.balanced_accuracy(), auc = roc_auc(p, y);
    const auto ap = average_precision(p, y);
    for (std::int64_t b = 0; b < models; ++b) {
      const Plain want = plain_metrics(p[b], y);
      SCOPED_TRACE("classes " + std::to_string(classes) + ", model " + std::to_string(b));
      EXPECT_NEAR(f1[b], want.f1, 1e-12);
      EXPECT_NEAR(balanced[b], want.balanced, 1e-12);
      EXPECT_NEAR(auc[b], want.auc, 1e-12);
      EXPECT_NEAR(ap[b], want.ap, 1e-12);
    }
  }
}

TEST(ClassMetrics, AucIsUndefinedForOneClassAndForADivergedModel) {
  const at::Tensor y = at::zeros({6}, at::kLong);
  at::Tensor p = at::softmax(at::randn({2, 6, 3}, at::kDouble), -1);
  for (double v : roc_auc(p, y)) EXPECT_TRUE(std::isnan(v));
  // Every label is class 0: its precision is perfect; the others have no positive to find.
  for (double v : average_precision(p, y)) EXPECT_EQ(v, 1.0);
  const at::Tensor two = at::tensor(std::vector<std::int64_t>{0, 1, 2, 0, 1, 2}, at::kLong);
  p[1][2][0] = NAN;
  const auto auc = roc_auc(p, two);
  EXPECT_TRUE(std::isfinite(auc[0]));
  EXPECT_TRUE(std::isnan(auc[1]));
}

}  // namespace
}  // namespace hfta::trainers
