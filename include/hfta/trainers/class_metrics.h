// Class-balanced measures of B classifiers on one validation set, as
// scikit-learn computes them: macro F1, balanced accuracy, ROC AUC and
// average precision. On an
// imbalanced set, where always answering the common class scores a high
// accuracy, these weigh every class alike.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace hfta::trainers {

/// Per model and class, counted over the validation set a chunk at a time:
/// what F1 and balanced accuracy need, and no more (not B x C x C).
class ClassCounts {
 public:
  ClassCounts(std::int64_t models, std::int64_t classes, const at::Device& device);
  /// Predicted classes [B, n] (the argmax of each model's logits) and labels [n].
  void add(const at::Tensor& predicted, const at::Tensor& labels);
  /// Each model's macro F1, as sklearn's f1_score(average="macro"): the mean of
  /// 2 TP / (2 TP + FP + FN) over the classes that are labels or predictions.
  std::vector<double> macro_f1() const;
  /// Each model's balanced accuracy, as sklearn's balanced_accuracy_score: the
  /// mean recall over the classes that are labels.
  std::vector<double> balanced_accuracy() const;

 private:
  std::int64_t models_, classes_;
  at::Tensor true_positives_, predicted_, actual_;  ///< [B, C], [B, C], [C] counts (double)
};

/// Each model's ROC AUC, from class probabilities [B, n, C] and labels [n]
/// (of two classes, [B, n, 1] may hold the second's alone): with two
/// classes, sklearn's roc_auc_score(labels, p[:, 1]); with more, its
/// one-vs-rest macro average (multi_class="ovr"), over the classes that are
/// labels (sklearn refuses a set that lacks one). Tied scores count a half,
/// as the area under the ROC curve's trapezoids does. NaN where the labels
/// hold one class: no AUC is defined.
std::vector<double> roc_auc(const at::Tensor& probabilities, const at::Tensor& labels);

/// Each model's average precision (the area under the precision-recall curve
/// as a step function), from the same probabilities and labels as roc_auc:
/// with two classes, sklearn's average_precision_score(labels, p[:, 1]); with
/// more, its macro average over the one-vs-rest columns, of the classes that
/// are labels. Tied scores are one threshold. NaN where no label is positive.
std::vector<double> average_precision(const at::Tensor& probabilities, const at::Tensor& labels);

}  // namespace hfta::trainers
