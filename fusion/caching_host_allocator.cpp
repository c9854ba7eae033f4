#include "hfta/fusion/caching_host_allocator.h"

#include <unistd.h>

#include <cstdlib>
#include <new>

namespace hfta::fusion {
namespace {

constexpr std::size_t kAlignment = 64;   // what LibTorch's own CPU allocator guarantees
constexpr std::size_t kRound = 64 << 10;  // large sizes round up to 64 KiB

void* aligned(std::size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlignment, bytes) != 0) throw std::bad_alloc();
  return p;
}

}  // namespace

CachingHostAllocator& CachingHostAllocator::instance() {
  static auto* allocator = new CachingHostAllocator();
  return *allocator;
}

CachingHostAllocator::CachingHostAllocator() {
  // A quarter of physical memory, at most 8 GiB, may sit in the cache.
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  limit_ = static_cast<std::size_t>(std::min(physical / 4, 8.0 * (1ULL << 30)));
}

c10::DataPtr CachingHostAllocator::allocate(std::size_t bytes) HFTA_ALLOCATE_CONST {
  if (bytes == 0) return {nullptr, nullptr, &release, c10::Device(c10::kCPU)};
  if (bytes < kLargeBlock) {
    void* p = aligned(bytes);
    return {p, p, &release, c10::Device(c10::kCPU)};
  }
  const std::size_t size = (bytes + kRound - 1) / kRound * kRound;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.lower_bound(size);
    if (it != free_.end() && it->first <= size + size / 4) {
      void* p = it->second;
      cached_ -= it->first;
      free_.erase(it);
      return {p, p, &release, c10::Device(c10::kCPU)};
    }
  }
  void* p = aligned(size);
  std::lock_guard<std::mutex> lock(mutex_);
  large_[p] = size;
  return {p, p, &release, c10::Device(c10::kCPU)};
}

void CachingHostAllocator::release(void* ptr) {
  if (ptr != nullptr) instance().give_back(ptr);
}

void CachingHostAllocator::give_back(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = large_.find(ptr);
    if (it != large_.end()) {
      if (cached_ + it->second <= limit_) {
        cached_ += it->second;
        free_.emplace(it->second, ptr);
        return;
      }
      large_.erase(it);
    }
  }
  std::free(ptr);
}

std::size_t CachingHostAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [size, p] : free_) {
    large_.erase(p);
    std::free(p);
  }
  free_.clear();
  cached_ = 0;
}

void CachingHostAllocator::set_limit(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = bytes;
}

}  // namespace hfta::fusion
