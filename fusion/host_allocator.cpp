#include "hfta/fusion/host_allocator.h"

#include <malloc.h>

#include "hfta/fusion/caching_host_allocator.h"

namespace hfta::fusion {

bool configure_host_allocator() {
  // Priority 1 wins over LibTorch's default CPU allocator (registered at 0).
  c10::SetAllocator(c10::DeviceType::CPU, &CachingHostAllocator::instance(), 1);
  // glibc caps the mmap threshold at HEAP_MAX_SIZE / 2 (32 MiB on 64-bit); a
  // larger value (as GLIBC_TUNABLES would take) is silently refused.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  // Grow the heap in 16 MiB steps, so a step's allocations do not extend it piecemeal.
  const bool pad_ok = mallopt(M_TOP_PAD, 16 << 20) == 1;
  return mmap_ok && trim_ok && pad_ok;
}

}  // namespace hfta::fusion
