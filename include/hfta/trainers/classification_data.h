// A classification dataset in memory: inputs and labels split three ways, and
// the batch order every model of an array shares. Fashion-MNIST images and
// point clouds both arrive in this form.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace hfta::trainers {

/// A label that no loss or accuracy counts (PyTorch's default ignore_index):
/// the unmasked positions of a masked-language-model sequence.
inline constexpr std::int64_t kIgnoreLabel = -100;

/// Inputs [N, ...] (images [N, 1, 28, 28], point clouds [N, 3, P], token
/// sequences [N, T]) and labels [N], or [N, T] for sequences.
struct Split {
  at::Tensor images;
  at::Tensor labels;
  std::int64_t size() const { return labels.size(0); }
};

/// Train, validation and test splits.
struct ClassificationData {
  Split train, validation, test;
  std::int64_t classes = 10;  ///< a regression's: 1, its one output
  /// > 0: a regression, whose labels are float targets standardised by this
  /// scale; its validation errors (RMSE, MAE) are reported in the target's units.
  double target_scale = 0;
  bool regression() const { return target_scale > 0; }
};

/// The bytes of every split's tensors.
double data_bytes(const ClassificationData& data);

/// A copy of `data` on `device`.
ClassificationData to_device(const ClassificationData& data, const at::Device& device);

/// The order of the training set in epoch `epoch`: a permutation drawn from
/// (seed, epoch) alone, so fused and unfused runs, and resumed ones, see the
/// same batches in the same order.
at::Tensor epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch);

/// Batch `index` of an epoch (the last one may be smaller). A last batch of
/// fewer than `least` rows is topped up with the epoch's first rows (as
/// PyTorch's DistributedSampler pads an epoch with its first examples): a
/// model whose batch norm normalises a channel over the batch alone cannot
/// train on one example (least_batch, model_zoo.h).
Split batch(const Split& data, const at::Tensor& order, std::int64_t index, std::int64_t batch_size,
            std::int64_t least = 1);

}  // namespace hfta::trainers
