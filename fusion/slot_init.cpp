#include "hfta/fusion/slot_init.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <mutex>

namespace hfta::fusion {

ScopedSeed::ScopedSeed(std::uint64_t seed) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  saved_ = gen.get_state();
  gen.set_current_seed(seed);
}

ScopedSeed::~ScopedSeed() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(saved_);
}

}  // namespace hfta::fusion
