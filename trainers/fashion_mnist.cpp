#include "hfta/trainers/fashion_mnist.h"

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

namespace hfta::trainers {

std::string fashion_mnist_dir() {
  const char* dir = std::getenv("HFTA_FASHION_MNIST_DIR");
  return dir && *dir ? dir : kFashionMnistDir;
}

namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

void read_exact(gzFile file, void* out, size_t bytes, const std::string& path) {
  auto* p = static_cast<char*>(out);
  while (bytes > 0) {
    // gzread takes an unsigned int count, so read large files in chunks.
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes, 1u << 30));
    const int got = gzread(file, p, chunk);
    if (got <= 0) {
      int err = 0;
      const char* msg = gzerror(file, &err);
      throw std::runtime_error(path + ": truncated or corrupt IDX file (" +
                               (err ? std::string(msg) : std::string("unexpected end")) + ")");
    }
    p += got;
    bytes -= static_cast<size_t>(got);
  }
}

std::uint32_t big_endian(const unsigned char* b) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) |
         std::uint32_t(b[3]);
}

std::string cannot_open(const std::string& path) {
  return path + ": cannot open (install the Debian package dataset-fashion-mnist, or set HFTA_FASHION_MNIST_DIR to a "
                "directory holding its four IDX files)";
}

}  // namespace

std::string fashion_mnist_missing(const std::string& dir) {
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                           "t10k-labels-idx1-ubyte.gz"}) {
    const std::string path = dir + "/" + name;
    if (!GzFile(gzopen(path.c_str(), "rb"))) return cannot_open(path);
  }
  return "";
}

at::Tensor read_idx_gz(const std::string& path) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw std::runtime_error(cannot_open(path));
  unsigned char header[4];
  read_exact(file.get(), header, 4, path);
  // IDX magic: two zero bytes, the element type (0x08 = unsigned byte), the rank.
  if (header[0] != 0 || header[1] != 0 || header[2] != 0x08 || header[3] == 0 || header[3] > 4) {
    throw std::runtime_error(path + ": not an unsigned-byte IDX file (bad magic number)");
  }
  std::vector<int64_t> sizes(header[3]);
  int64_t total = 1;
  for (auto& size : sizes) {
    unsigned char b[4];
    read_exact(file.get(), b, 4, path);
    size = big_endian(b);
    total *= size;
  }
  at::Tensor data = at::empty(sizes, at::kByte);
  read_exact(file.get(), data.data_ptr<std::uint8_t>(), static_cast<size_t>(total), path);
  char extra;
  if (gzread(file.get(), &extra, 1) != 0) {
    throw std::runtime_error(path + ": trailing bytes after the IDX data");
  }
  return data;
}

FashionMnistSplit load_fashion_mnist(bool train, const std::string& dir) {
  const std::string prefix = dir + "/" + (train ? "train" : "t10k");
  FashionMnistSplit split;
  split.images = read_idx_gz(prefix + "-images-idx3-ubyte.gz");
  split.labels = read_idx_gz(prefix + "-labels-idx1-ubyte.gz").to(at::kLong);
  if (split.images.dim() != 3 || split.labels.dim() != 1 ||
      split.images.size(0) != split.labels.size(0)) {
    throw std::runtime_error(prefix + ": images and labels do not match (" +
                             std::to_string(split.images.size(0)) + " images, " +
                             std::to_string(split.labels.size(0)) + " labels)");
  }
  if (split.labels.numel() > 0 && split.labels.max().item<int64_t>() > 9) {
    throw std::runtime_error(prefix + "-labels-idx1-ubyte.gz: label outside 0..9");
  }
  return split;
}

}  // namespace hfta::trainers
