#include "hfta/trainers/augmentation.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace hfta::trainers {

Split augment(const Split& batch, const Augmentation& a, std::uint64_t seed, std::int64_t step) {
  if (!a.any()) return batch;
  const at::Tensor& x = batch.images;
  if (x.dim() != 4) throw std::invalid_argument("flips and crops take images [N, C, H, W]");
  const std::int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  // Drawn on the CPU, whatever the images' device, so that every device draws
  // alike; a stream apart from the epoch's order (epoch_order's multiplier differs).
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed * 2654435761ULL + static_cast<std::uint64_t>(step) + 1);
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const at::Tensor flips = at::randint(0, 2, {n}, gen, longs);
  const at::Tensor shifts = at::randint(0, 2 * a.crop + 1, {n, 2}, gen, longs);  // each image's top and left
  at::Tensor out = x;
  if (a.flip) {
    out = at::where(flips.to(x.device()).to(at::kBool).view({n, 1, 1, 1}), out.flip({3}), out);
  }
  if (a.crop > 0) {
    const std::int64_t p = a.crop;
    const at::Tensor padded = at::constant_pad_nd(out, {p, p, p, p}, a.fill);
    // Image i's rows top_i .. top_i + h - 1 and columns left_i .. left_i + w - 1 of its padded copy.
    const auto on = longs.device(x.device());
    const at::Tensor s = shifts.to(x.device());
    const at::Tensor rows = s.select(1, 0).view({n, 1}) + at::arange(h, on).view({1, h});
    const at::Tensor cols = s.select(1, 1).view({n, 1}) + at::arange(w, on).view({1, w});
    c10::List<c10::optional<at::Tensor>> pick;  // broadcast to [N, C, H, W]
    pick.push_back(at::arange(n, on).view({n, 1, 1, 1}));
    pick.push_back(at::arange(x.size(1), on).view({1, -1, 1, 1}));
    pick.push_back(rows.view({n, 1, h, 1}));
    pick.push_back(cols.view({n, 1, 1, w}));
    out = at::index(padded, pick);
  }
  return {out, batch.labels};
}

}  // namespace hfta::trainers
