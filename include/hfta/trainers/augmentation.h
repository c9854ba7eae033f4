// Random flips and crops of training images, as torchvision's
// RandomHorizontalFlip and RandomCrop(size, padding) do. A batch's draws come
// from (seed, step) alone, so every model of an array, a trial trained alone,
// and a resumed one see the same augmented batch at the same step.
#pragma once

#include <cstdint>

#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

struct Augmentation {
  bool flip = false;      ///< mirror each image left to right, half the time
  std::int64_t crop = 0;  ///< pad each side by this many pixels, then cut the image's size back out at random
  /// The padding's value: a black pixel as the images are normalised
  /// (torchvision pads before normalising). BatchStream sets it: the training
  /// images' darkest value.
  double fill = 0;
  bool any() const { return flip || crop > 0; }
};

/// Images [N, C, H, W] of `batch`, each flipped and cropped by its own draw
/// from (seed, step); labels untouched. An Augmentation with nothing to do
/// returns `batch` itself.
Split augment(const Split& batch, const Augmentation& augmentation, std::uint64_t seed, std::int64_t step);

}  // namespace hfta::trainers
