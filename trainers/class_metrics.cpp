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
at::Tensor auc_of(const at::Tensor& scores, const at::Tensor& positive, double positives) {
  const double n = static_cast<double>(scores.size(1)), negatives = n - positives;
  const at::Tensor sorted = std::get<0>(at::sort(scores, -1));
  const at::Tensor below = at::searchsorted(sorted, scores, /*out_int32=*/false, /*right=*/false);
  const at::Tensor up_to = at::searchsorted(sorted, scores, /*out_int32=*/false, /*right=*/true);
  const at::Tensor rank = (below + up_to + 1).to(at::kDouble) / 2;  // 1-based, ties at their mean
  const at::Tensor sum = (rank * positive.to(at::kDouble).unsqueeze(0)).sum(1);
  return (sum - positives * (positives + 1) / 2) / (positives * negatives);
}

// Each model's `measure` (scores [B, n], positives [n], their count) of each
// column the probabilities [B, n, C] rank by, averaged over the classes that
// `counts` (positives, n) says to: with two classes the second's column alone
// ([B, n, 1] holds it alone). NaN for a model whose scores are not finite.
template <typename Measure>
std::vector<double> per_class_mean(const at::Tensor& probabilities, const at::Tensor& labels, Measure measure,
                                   bool (*counts)(double positives, double n)) {
  const std::int64_t models = probabilities.size(0), columns = probabilities.size(2);
  const double n = static_cast<double>(probabilities.size(1));
  const at::Tensor p = probabilities.to(at::kDouble);
  at::Tensor sum = at::zeros({models}, p.options());
  std::int64_t counted = 0;
  // Two classes: the second's probability ranks the examples (the first's
  // ranks them the other way round, to the same area).
  const bool binary = columns <= 2;
  for (std::int64_t c = binary ? 1 : 0; c < (binary ? 2 : columns); ++c) {
    const at::Tensor positive = labels == c;
    const double positives = positive.sum().item<double>();
    if (!counts(positives, n)) continue;
    // (Contiguous: searchsorted copies, and warns, otherwise.)
    sum += measure(p.select(2, binary ? columns - 1 : c).contiguous(), positive, positives);
    ++counted;
  }
  const at::Tensor finite = at::isfinite(p).reshape({models, -1}).all(1);  // a diverged model ranks nothing
  const at::Tensor mean = at::where(finite, sum / static_cast<double>(counted), at::full_like(sum, NAN)).cpu();
  std::vector<double> out;
  for (std::int64_t b = 0; b < models; ++b) out.push_back(counted ? mean[b].item<double>() : NAN);
  return out;
}

// sklearn's average precision of scores [B, n] for the positives [n]: over
// the distinct scores, highest first, the sum of each one's precision times
// the recall it adds. A run of tied scores is one threshold: only its last
// place counts, with every positive of the run.
at::Tensor average_precision_of(const at::Tensor& scores, const at::Tensor& positive, double positives) {
  const std::int64_t models = scores.size(0), n = scores.size(1);
  const auto [sorted, order] = at::sort(scores, -1, /*descending=*/true);
  const at::Tensor hits = positive.to(at::kDouble).unsqueeze(0).expand({models, n}).gather(1, order);
  const at::Tensor found = hits.cumsum(1);  // true positives down to each place
  at::Tensor last = at::ones_like(sorted, at::kBool);  // the last place of its run of ties
  last.narrow(1, 0, n - 1).copy_(sorted.narrow(1, 0, n - 1) != sorted.narrow(1, 1, n - 1));
  // The true positives at the run before each place: the largest count at an earlier run's end.
  const at::Tensor at_ends = at::where(last, found, at::zeros_like(found));
  const at::Tensor before = std::get<0>(at::cummax(at::cat({at::zeros({models, 1}, found.options()),
                                                           at_ends.narrow(1, 0, n - 1)}, 1), 1));
  const at::Tensor places = at::arange(1, n + 1, found.options());
  const at::Tensor added = at::where(last, (found - before) * found / places, at::zeros_like(found));
  return added.sum(1) / positives;
}

}  // namespace

std::vector<double> roc_auc(const at::Tensor& probabilities, const at::Tensor& labels) {
  // One-vs-rest needs both sides.
  return per_class_mean(probabilities, labels, auc_of, [](double positives, double n) { return positives > 0 && positives < n; });
}

std::vector<double> average_precision(const at::Tensor& probabilities, const at::Tensor& labels) {
  return per_class_mean(probabilities, labels, average_precision_of, [](double positives, double) { return positives > 0; });
}

}  // namespace hfta::trainers
