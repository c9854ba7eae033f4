#include "hfta/trainers/classification_data.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace hfta::trainers {

ClassificationData to_device(const ClassificationData& data, const at::Device& device) {
  ClassificationData out = data;  // classes, target scale
  for (Split* s : {&out.train, &out.validation, &out.test}) *s = Split{s->images.to(device), s->labels.to(device)};
  return out;
}

double data_bytes(const ClassificationData& data) {
  double bytes = 0;
  for (const Split* s : {&data.train, &data.validation, &data.test}) {
    for (const at::Tensor* t : {&s->images, &s->labels}) {
      if (t->defined()) bytes += static_cast<double>(t->nbytes());
    }
  }
  return bytes;
}

at::Tensor epoch_order(std::int64_t size, std::uint64_t seed, std::int64_t epoch) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed * 1000003ULL + static_cast<std::uint64_t>(epoch));
  return at::randperm(size, gen, at::TensorOptions().dtype(at::kLong));
}

Split batch(const Split& data, const at::Tensor& order, std::int64_t index, std::int64_t batch_size,
            std::int64_t least) {
  const std::int64_t start = index * batch_size;
  const std::int64_t count = std::min(batch_size, data.size() - start);
  if (count <= 0) throw std::out_of_range("batch past the end of the epoch");
  at::Tensor idx = order.narrow(0, start, count);
  if (count < least && start > 0) idx = at::cat({idx, order.narrow(0, 0, std::min(least, start + count) - count)});
  return {data.images.index_select(0, idx), data.labels.index_select(0, idx)};
}

}  // namespace hfta::trainers
