// How close generated images are to real ones: the Fréchet distance between
// their feature distributions (FID, Heusel et al. 2017), with features from a
// small Fashion-MNIST classifier in place of FID's Inception network, the usual
// substitute for single-channel 28x28 datasets.
#pragma once

#include <memory>

#include <ATen/core/Tensor.h>

#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

/// Mean [D] and covariance [D, D] of features [N, D], in float64.
struct FeatureStatistics {
  at::Tensor mean, covariance;
};
FeatureStatistics feature_statistics(const at::Tensor& features);

/// ||mu_a - mu_b||^2 + Tr(S_a + S_b - 2 (S_a^1/2 S_b S_a^1/2)^1/2), through
/// symmetric eigendecompositions (exact for positive semi-definite covariances).
double frechet_distance(const FeatureStatistics& a, const FeatureStatistics& b);

/// The 64 units of the last hidden layer of an MLP (inputs-128-64-10, ReLU)
/// trained for one epoch of SGD on a training split, from a fixed seed: the same
/// network, so the same distances, in every process that trains on the same data.
class ImageFeatures {
 public:
  /// The network for `train`, trained on first use and kept for the process.
  static std::shared_ptr<const ImageFeatures> of(const Split& train);
  /// Images [N, ...] (flattened) -> features [N, 64] in float64.
  at::Tensor operator()(const at::Tensor& images) const;

 private:
  explicit ImageFeatures(const Split& train);
  at::Tensor w1_, b1_, w2_, b2_;  ///< the two hidden layers (the head only trains them)
};

}  // namespace hfta::trainers
