#include "hfta/trainers/fashion_mnist_data.h"

#include <stdexcept>

#include <ATen/ATen.h>

namespace hfta::trainers {
namespace {

Split prepare(const at::Tensor& images, const at::Tensor& labels, const FashionMnistOptions& o) {
  // Pixel value v in [0, 1] becomes (v - mean) / std: standardised, or [-1, 1].
  const double mean = o.tanh_range ? 0.5 : kFashionMnistMean, std = o.tanh_range ? 0.5 : kFashionMnistStd;
  at::Tensor x = images.to(at::kFloat).div_(255.0).sub_(mean).div_(std).unsqueeze(1);
  if (o.pad_to_32) x = at::constant_pad_nd(x, {2, 2, 2, 2}, (0.0 - mean) / std);
  return {x.contiguous(), labels};
}

}  // namespace

ClassificationData load_fashion_mnist_data(const FashionMnistOptions& o) {
  const auto train = load_fashion_mnist(true, o.dir);
  const auto test = load_fashion_mnist(false, o.dir);
  std::int64_t n = train.labels.size(0);
  if (o.limit > 0) n = std::min(n, o.limit);
  if (o.validation_size < 0 || o.validation_size >= n) {
    throw std::invalid_argument("validation_size must leave training images");
  }
  const std::int64_t n_train = n - o.validation_size;
  ClassificationData data;
  data.train = prepare(train.images.narrow(0, 0, n_train), train.labels.narrow(0, 0, n_train), o);
  data.validation = prepare(train.images.narrow(0, n_train, o.validation_size),
                            train.labels.narrow(0, n_train, o.validation_size), o);
  data.test = prepare(test.images, test.labels, o);
  return data;
}

}  // namespace hfta::trainers
