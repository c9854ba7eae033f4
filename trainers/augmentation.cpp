#include "hfta/trainers/augmentation.h"

#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace hfta::trainers {

namespace {

// splitmix64's finaliser: every bit of `x` moves every bit of the result.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Split augment(const Split& batch, const Augmentation& a, std::uint64_t seed, std::int64_t step) {
  if (!a.any()) return batch;
  const at::Tensor& x = batch.images;
  if (x.dim() != 4) throw std::invalid_argument("flips and crops take images [N, C, H, W]");
  const std::int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  // Drawn on the CPU, whatever the images' device, so that every device draws
  // alike, from a stream apart from epoch_order's (whose seed is seed * 1000003
  // + epoch): the generator keeps its seed's low 32 bits, which a mix of the
  // sweep's seed spreads.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(mix(seed ^ 0x61756775ULL) + static_cast<std::uint64_t>(step));
  const auto longs = at::TensorOptions().dtype(at::kLong);
  // Each image's flip, top and left, in one tensor: one copy to a GPU, from
  // pinned memory and not waited for (a step must not wait on the host).
  at::Tensor draws = at::cat({at::randint(0, 2, {n, 1}, gen, longs), at::randint(0, 2 * a.crop + 1, {n, 2}, gen, longs)}, 1);
  if (x.is_cuda()) draws = draws.pin_memory();
  draws = draws.to(x.device(), /*non_blocking=*/true);
  at::Tensor out = x;
  if (a.flip) {
    out = at::where(draws.select(1, 0).to(at::kBool).view({n, 1, 1, 1}), out.flip({3}), out);
  }
  if (a.crop > 0) {
    const std::int64_t p = a.crop;
    const at::Tensor padded = at::constant_pad_nd(out, {p, p, p, p}, a.fill);
    // Image i's rows top_i .. top_i + h - 1 and columns left_i .. left_i + w - 1 of its padded copy.
    const auto on = longs.device(x.device());
    const at::Tensor s = draws.narrow(1, 1, 2);
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
