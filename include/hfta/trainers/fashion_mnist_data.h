// Fashion-MNIST prepared for training: normalised images, the train/validation
// split, and a batch order every model of an array shares.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "hfta/trainers/fashion_mnist.h"

namespace hfta::trainers {

/// The normalisation every model sees (the training set's mean and standard deviation).
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

/// Options of the prepared dataset.
struct FashionMnistOptions {
  std::int64_t validation_size = 10000;  ///< the last images of the training file
  bool pad_to_32 = false;                ///< for ResNet and MobileNet
  std::string dir = kFashionMnistDir;
  std::int64_t limit = 0;                ///< > 0: use only the first `limit` training images (tests)
};

/// Normalised float images [N, 1, 28, 28] (or 32x32) and labels [N].
struct Split {
  at::Tensor images;
  at::Tensor labels;
  std::int64_t size() const { return labels.size(0); }
};

/// Train, validation and test splits.
struct FashionMnistData {
  Split train, validation, test;
};

FashionMnistData load_fashion_mnist_data(const FashionMnistOptions& options = {});

/// The order of the training set in epoch `epoch`: a permutation drawn from
/// (seed, epoch) alone, so fused and unfused runs, and resumed ones, see the
/// same batches in the same order.
at::Tensor epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch);

/// Batch `index` of an epoch (the last one may be smaller).
Split batch(const Split& data, const at::Tensor& order, std::int64_t index, std::int64_t batch_size);

}  // namespace hfta::trainers
