// A caching allocator for LibTorch's CPU tensors, as the CUDA caching allocator
// is for GPU memory: large blocks freed by one training step are kept and handed
// to the next, instead of going back to the kernel and paying page faults again.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <torch/version.h>

// LibTorch 2.3 made c10::Allocator::allocate non-const and added copy_data (for
// copy-on-write tensors); Debian's 1.13 has the const allocate alone.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define HFTA_ALLOCATOR_2_3 1
#define HFTA_ALLOCATE_CONST
#else
#define HFTA_ALLOCATE_CONST const
#endif

namespace hfta::fusion {

/// Blocks of at least kLargeBlock bytes are cached (rounded up to 64 KiB);
/// smaller ones go straight to malloc, which handles them well. A request reuses
/// a cached block at most 25% larger than itself. At most `limit` bytes stay
/// cached; beyond that, freed blocks go back to the system.
class CachingHostAllocator final : public c10::Allocator {
 public:
  static constexpr std::size_t kLargeBlock = 1 << 20;

  /// The process-wide instance (never destroyed: tensors may outlive main).
  static CachingHostAllocator& instance();

  c10::DataPtr allocate(std::size_t bytes) HFTA_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#ifdef HFTA_ALLOCATOR_2_3
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
#endif

  /// Bytes held in the cache, not in use.
  std::size_t cached_bytes() const;
  /// Returns every cached block to the system.
  void empty_cache();
  /// Sets how many bytes may stay cached.
  void set_limit(std::size_t bytes);

 private:
  CachingHostAllocator();
  static void release(void* ptr);
  void give_back(void* ptr);

  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, std::size_t> large_;  ///< every live or cached large block
  mutable std::multimap<std::size_t, void*> free_;        ///< cached blocks by size
  mutable std::size_t cached_ = 0;
  std::size_t limit_;
};

}  // namespace hfta::fusion
