// Flips and crops of training images: what torchvision's RandomHorizontalFlip
// and RandomCrop(size, padding) do, each image by its own draw, drawn from
// (seed, step) alone; and the batch stream delivers them the same whichever way
// it cuts its batches.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include <ATen/ATen.h>

#include "hfta/trainers/augmentation.h"
#include "hfta/trainers/batch_stream.h"

namespace hfta::trainers {
namespace {

// 64 images [1, 5, 7], every pixel of each its own value, all above the fill.
Split images() {
  return {at::arange(64 * 35, at::kFloat).view({64, 1, 5, 7}) + 1, at::arange(64, at::kLong)};
}

// Where image `i` of `got` lies in its padded copy (`pad` zeros... `fill` a side), or {-1, -1}.
std::pair<int, int> window(const at::Tensor& original, const at::Tensor& got, std::int64_t pad, double fill) {
  const at::Tensor padded = at::constant_pad_nd(original, {pad, pad, pad, pad}, fill);
  for (int top = 0; top <= 2 * pad; ++top) {
    for (int left = 0; left <= 2 * pad; ++left) {
      if (at::equal(padded.narrow(1, top, 5).narrow(2, left, 7), got)) return {top, left};
    }
  }
  return {-1, -1};
}

TEST(Augmentation, FlipsHalfTheImagesEachItsOwnWay) {
  const Split data = images();
  const Split got = augment(data, {true, 0}, 7, 3);
  EXPECT_TRUE(at::equal(got.labels, data.labels));
  int flipped = 0;
  for (std::int64_t i = 0; i < 64; ++i) {
    const at::Tensor x = data.images[i], y = got.images[i];
    const bool mirrored = at::equal(y, x.flip({2}));
    EXPECT_TRUE(mirrored || at::equal(y, x)) << "image " << i;
    flipped += mirrored;
  }
  EXPECT_GT(flipped, 16);  // (binomial(64, 1/2): 32 +- 4)
  EXPECT_LT(flipped, 48);
  // The same draws for the same (seed, step), others for another step or seed.
  EXPECT_TRUE(at::equal(augment(data, {true, 0}, 7, 3).images, got.images));
  EXPECT_FALSE(at::equal(augment(data, {true, 0}, 7, 4).images, got.images));
  EXPECT_FALSE(at::equal(augment(data, {true, 0}, 8, 3).images, got.images));
}

TEST(Augmentation, CropsAWindowOfThePaddedImageAtEachImagesOwnPlace) {
  const Split data = images();
  Augmentation crop{false, 2};
  crop.fill = -0.5;
  const Split got = augment(data, crop, 7, 0);
  ASSERT_EQ(got.images.sizes(), data.images.sizes());
  std::set<std::pair<int, int>> places;
  for (std::int64_t i = 0; i < 64; ++i) {
    const auto place = window(data.images[i], got.images[i], 2, -0.5);
    EXPECT_NE(place.first, -1) << "image " << i << " is no window of its padded copy";
    places.insert(place);
  }
  EXPECT_GT(places.size(), 10u);  // of the 25 places, drawn for each image
  // Flipped and cropped: a window of the padded image or of its mirror.
  const Split both = augment(data, {true, 1}, 7, 5);
  for (std::int64_t i = 0; i < 64; ++i) {
    const bool found = window(data.images[i], both.images[i], 1, 0).first >= 0 ||
                       window(data.images[i].flip({2}), both.images[i], 1, 0).first >= 0;
    EXPECT_TRUE(found) << "image " << i;
  }
}

TEST(Augmentation, NothingAskedLeavesTheBatchAsItIs) {
  const Split data = images();
  const Split got = augment(data, {}, 7, 0);
  EXPECT_TRUE(got.images.is_same(data.images));
  EXPECT_THROW(augment({at::zeros({4, 3}), at::zeros({4}, at::kLong)}, {true, 0}, 7, 0), std::invalid_argument);
}

// Step s's batch is batch s of the shared order, augmented by (seed, s) and
// padded with the training images' darkest value, cut when asked or ahead, or
// at any step on its own.
TEST(Augmentation, TheBatchStreamAugmentsEachStepAsAugmentDoes) {
  const Split data = images();
  const Augmentation a{true, 2};
  Augmentation filled = a;
  filled.fill = 1;  // images()'s least value
  for (std::int64_t ahead : {0, 2}) {
    SCOPED_TRACE("ahead " + std::to_string(ahead));
    BatchStream stream(data, 10, 7, at::kCPU, ahead, a);
    for (std::int64_t step = 0; step < 15; ++step) {
      const Split got = stream.next();
      const Split want =
          augment(batch(data, epoch_order(64, 7, step / 7), step % 7, 10), filled, 7, step);
      EXPECT_TRUE(at::equal(got.images, want.images)) << "step " << step;
      EXPECT_TRUE(at::equal(got.labels, want.labels)) << "step " << step;
      EXPECT_TRUE(at::equal(stream.at(step).images, got.images)) << "step " << step;
    }
    stream.seek(3);
    EXPECT_TRUE(at::equal(stream.next().images, stream.at(3).images));
  }
}

}  // namespace
}  // namespace hfta::trainers
