#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "hfta/fusion/caching_host_allocator.h"
#include "hfta/fusion/host_allocator.h"
#include "../support/sanitizer.h"

namespace hfta::fusion {
namespace {

TEST(CachingHostAllocator, LargeBlocksAreReusedAcrossSteps) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "ASan's malloc takes no glibc mallopt settings";
  ASSERT_TRUE(configure_host_allocator());
  auto& cache = CachingHostAllocator::instance();
  EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), &cache);
  cache.empty_cache();
  void* first = nullptr;
  {
    const at::Tensor t = at::empty({4 << 20}, at::kFloat);  // 16 MiB
    first = t.data_ptr();
  }
  EXPECT_GE(cache.cached_bytes(), std::size_t(16) << 20);
  {
    // The next step's tensor of the same size gets the same, already touched, block.
    const at::Tensor t = at::empty({4 << 20}, at::kFloat);
    EXPECT_EQ(t.data_ptr(), first);
    EXPECT_EQ(cache.cached_bytes(), 0u);
  }
  // Small tensors are malloc's business.
  const std::size_t before = cache.cached_bytes();
  { const at::Tensor small = at::ones({16}); }
  EXPECT_EQ(cache.cached_bytes(), before);
  cache.empty_cache();
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(CachingHostAllocator, RespectsItsLimitAndKeepsDataCorrect) {
  configure_host_allocator();
  auto& cache = CachingHostAllocator::instance();
  cache.empty_cache();
  cache.set_limit(8 << 20);
  { const at::Tensor t = at::empty({4 << 20}, at::kFloat); }  // 16 MiB > limit: freed
  EXPECT_EQ(cache.cached_bytes(), 0u);
  cache.set_limit(std::size_t(1) << 30);
  // Tensors built on recycled blocks compute as usual.
  for (int i = 0; i < 3; ++i) {
    const at::Tensor a = at::full({512, 1024}, 2.0);
    const at::Tensor b = at::full({512, 1024}, 3.0);
    EXPECT_DOUBLE_EQ((a * b).sum().item<double>(), 6.0 * 512 * 1024);
  }
}

}  // namespace
}  // namespace hfta::fusion
