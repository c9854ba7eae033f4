// Reads the real Fashion-MNIST files of Debian's dataset-fashion-mnist.
#include <gtest/gtest.h>

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <stdexcept>

#include <ATen/ATen.h>

#include "hfta/trainers/fashion_mnist.h"

namespace hfta::trainers {
namespace {

TEST(FashionMnist, TrainingSplit) {
  const auto split = load_fashion_mnist(true);
  EXPECT_EQ(split.images.sizes(), (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(split.images.scalar_type(), at::kByte);
  EXPECT_EQ(split.labels.sizes(), (std::vector<int64_t>{60000}));
  EXPECT_EQ(split.labels.scalar_type(), at::kLong);
  // Fashion-MNIST is balanced: 6,000 images of each of the 10 classes.
  const auto counts = at::bincount(split.labels);
  EXPECT_TRUE(at::equal(counts, at::full({10}, 6000, at::kLong))) << counts;
  // Real images: pixels span the whole byte range, mostly dark background.
  EXPECT_EQ(split.images.max().item<int>(), 255);
  EXPECT_EQ(split.images.min().item<int>(), 0);
  const double mean = split.images.to(at::kDouble).mean().item<double>() / 255.0;
  EXPECT_NEAR(mean, 0.2860, 0.001);  // the well-known Fashion-MNIST training mean
}

TEST(FashionMnist, TestSplit) {
  const auto split = load_fashion_mnist(false);
  EXPECT_EQ(split.images.size(0), 10000);
  EXPECT_EQ(split.labels.size(0), 10000);
  const auto counts = at::bincount(split.labels);
  EXPECT_TRUE(at::equal(counts, at::full({10}, 1000, at::kLong)));
}

TEST(FashionMnist, MissingFilesNameThePackage) {
  try {
    load_fashion_mnist(true, "/nonexistent");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/train-images-idx3-ubyte.gz"),
              std::string::npos);
  }
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

TEST(FashionMnist, ReadsAndChecksIdxFiles) {
  const std::string path = "/tmp/hfta-idx-test-" + std::to_string(::getpid()) + ".gz";
  // A 2x3 unsigned-byte IDX file.
  write_gz(path, std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03", 12) + std::string("\x01\x02\x03\x04\x05\x06", 6));
  const auto t = read_idx_gz(path);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t[1][2].item<int>(), 6);

  write_gz(path, std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x03\x01", 13));  // truncated
  EXPECT_THROW(read_idx_gz(path), std::runtime_error);
  write_gz(path, std::string("\x12\x34\x08\x01\0\0\0\x01\x07", 9));  // bad magic
  EXPECT_THROW(read_idx_gz(path), std::runtime_error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hfta::trainers
