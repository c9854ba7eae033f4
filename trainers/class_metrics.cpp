#include "hfta/trainers/class_metrics.h"

#include <cmath>

#include <ATen/ATen.h>

namespace hfta::trainers {

ClassCounts::ClassCounts(std::int64_t models, std::int64_t classes, const at::Device& device)
    : models_(models), classes_(classes) {
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  true_positives_ = at::zeros({models, classes}, options);
  predicted_ = at::zeros({models, classes}, options);
  actual_ = at::zeros({classes}, options);
}

void ClassCounts::add(const at::Tensor& predicted, const at::Tensor& labels) {
  // Model b's class c is bin b * C + c: one bincount counts every model.
  const at::Tensor offsets = at::arange(models_, predicted.options()).mul_(classes_).unsqueeze(1);
  const at::Tensor bins = (predicted + offsets).reshape({-1});
  const at::Tensor correct = (predicted == labels.unsqueeze(0)).reshape({-1}).to(at::kDouble);
  const std::int64_t all = models_ * classes_;
  predicted_ += at::bincount(bins, {}, all).to(at::kDouble).view({models_, classes_});
  true_positives_ += at::bincount(bins, correct, all).view({models_, classes_});
  actual_ += at::bincount(labels, {}, classes_).to(at::kDouble);
}

std::vector<double> ClassCounts::macro_f1() const {
  // 2 TP + FP + FN is the class's predictions plus its labels.
  const at::Tensor tp = true_positives_.cpu(), counted = (predicted_ + actual_.unsqueeze(0)).cpu();
  std::vector<double> out;
  for (std::int64_t b = 0; b < models_; ++b) {
    double sum = 0;
    std::int64_t classes = 0;
    for (std::int64_t c = 0; c < classes_; ++c) {
      const double n = counted[b][c].item<double>();
      if (n == 0) continue;  // neither a label nor a prediction: not one of sklearn's labels
      sum += 2 * tp[b][c].item<double>() / n;
      ++classes;
    }
    out.push_back(classes ? sum / static_cast<double>(classes) : NAN);
  }
  return out;
}

std::vector<double> ClassCounts::balanced_accuracy() const {
  const at::Tensor tp = true_positives_.cpu(), actual = actual_.cpu();
  std::vector<double> out;
  for (std::int64_t b = 0; b < models_; ++b) {
    double sum = 0;
    std::int64_t classes = 0;
    for (std::int64_t c = 0; c < classes_; ++c) {
      const double n = actual[c].item<double>();
      if (n == 0) continue;  // a class only predicted has no recall (sklearn leaves it out, warning)
      sum += tp[b][c].item<double>() / n;
      ++classes;
    }
    out.push_back(classes ? sum / static_cast<double>(classes) : NAN);
  }
  return out;
}

namespace {

// Each model's AUC of scores [B, n] for the positives [n] (bool), of which
// there are `positives`, by the Mann-Whitney count: the positives' ranks,
// ties given their mean rank, less the least they could sum to.
at::Tensor auc_of(const at::Tensor& class_scores, const at::Tensor& positive, double positives) {
  const at::Tensor scores = class_scores.contiguous();  // (searchsorted copies, and warns, otherwise)
  const double n = static_cast<double>(scores.size(1)), negatives = n - positives;
  const at::Tensor sorted = std::get<0>(at::sort(scores, -1));
  const at::Tensor below = at::searchsorted(sorted, scores, /*out_int32=*/false, /*right=*/false);
  const at::Tensor up_to = at::searchsorted(sorted, scores, /*out_int32=*/false, /*right=*/true);
  const at::Tensor rank = (below + up_to + 1).to(at::kDouble) / 2;  // 1-based, ties at their mean
  const at::Tensor sum = (rank * positive.to(at::kDouble).unsqueeze(0)).sum(1);
  return (sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace

std::vector<double> roc_auc(const at::Tensor& probabilities, const at::Tensor& labels) {
  const std::int64_t models = probabilities.size(0), columns = probabilities.size(2);
  const double n = static_cast<double>(probabilities.size(1));
  const at::Tensor p = probabilities.to(at::kDouble);
  at::Tensor sum = at::zeros({models}, p.options());
  std::int64_t counted = 0;
  // Two classes: the second's probability ranks the examples (the first's
  // ranks them the other way round, to the same area); given alone, it is
  // the one column.
  const bool binary = columns <= 2;
  for (std::int64_t c = binary ? 1 : 0; c < (binary ? 2 : columns); ++c) {
    const at::Tensor positive = labels == c;
    const double positives = positive.sum().item<double>();
    if (positives == 0 || positives == n) continue;  // one-vs-rest needs both sides
    sum += auc_of(p.select(2, binary ? columns - 1 : c), positive, positives);
    ++counted;
  }
  const at::Tensor finite = at::isfinite(p).reshape({models, -1}).all(1);  // a diverged model ranks nothing
  const at::Tensor auc = at::where(finite, sum / static_cast<double>(counted), at::full_like(sum, NAN)).cpu();
  std::vector<double> out;
  for (std::int64_t b = 0; b < models; ++b) out.push_back(counted ? auc[b].item<double>() : NAN);
  return out;
}

}  // namespace hfta::trainers
