// Fashion-MNIST, read from the gzipped IDX files of Debian's dataset-fashion-mnist.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace hfta::trainers {

/// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// $HFTA_FASHION_MNIST_DIR when set (machines without the package, such as a GPU
/// machine the files were carried to), else kFashionMnistDir.
std::string fashion_mnist_dir();

/// "" when the four files under `dir` open, else what read_idx_gz would
/// throw for the first that does not (naming the package): said before a run
/// writes anything.
std::string fashion_mnist_missing(const std::string& dir = fashion_mnist_dir());

/// One split of Fashion-MNIST as it is on disk.
struct FashionMnistSplit {
  at::Tensor images;  ///< [N, 28, 28] uint8
  at::Tensor labels;  ///< [N] int64, classes 0..9
};

/// Reads the 60,000 training or the 10,000 test images. Throws std::runtime_error
/// naming the file and the Debian package when a file is missing or malformed.
FashionMnistSplit load_fashion_mnist(bool train, const std::string& dir = fashion_mnist_dir());

/// Reads one gzipped IDX file (magic, dimensions, uint8 data) into a uint8 tensor.
at::Tensor read_idx_gz(const std::string& path);

}  // namespace hfta::trainers
