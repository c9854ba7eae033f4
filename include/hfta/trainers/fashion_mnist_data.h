// Fashion-MNIST prepared for training: normalised images and the
// train/validation split.
#pragma once

#include <cstdint>
#include <string>

#include "hfta/trainers/classification_data.h"
#include "hfta/trainers/fashion_mnist.h"

namespace hfta::trainers {

/// The normalisation every model sees (the training set's mean and standard deviation).
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

/// Options of the prepared dataset.
struct FashionMnistOptions {
  std::int64_t validation_size = 10000;  ///< the last images of the training file
  bool pad_to_32 = false;                ///< for ResNet, MobileNet and DCGAN
  bool tanh_range = false;               ///< pixels scaled to [-1, 1] (a GAN generator's tanh), not standardised
  std::string dir = fashion_mnist_dir();
  std::int64_t limit = 0;                ///< > 0: use only the first `limit` training images (tests)
};

/// Normalised float images [N, 1, 28, 28] (or 32x32) and labels [N].
ClassificationData load_fashion_mnist_data(const FashionMnistOptions& options = {});

}  // namespace hfta::trainers
