#include "hfta/core/oom_retry.h"

#include <new>
#include <string>

#include <c10/util/Exception.h>

namespace hfta::core {

bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || dynamic_cast<const std::bad_alloc*>(&e)) return true;
  // LibTorch 1.13's DefaultCPUAllocator: "... can't allocate memory: you tried to allocate N bytes ...".
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  return error && error->msg().find("can't allocate memory") != std::string::npos;
}

std::vector<search::ArrayPlan> train_splitting_on_oom(
    const search::ArrayPlan& array, ArraySizer& sizer,
    const std::function<void(const search::ArrayPlan&)>& train, std::mutex* sizer_mutex) {
  try {
    train(array);
    return {array};
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e) || array.trial_ids.size() < 2) throw;
    std::unique_lock<std::mutex> lock;
    if (sizer_mutex) lock = std::unique_lock<std::mutex>(*sizer_mutex);
    sizer.observe_out_of_memory(array.key, static_cast<std::int64_t>(array.trial_ids.size()));
  }
  const auto [first, second] = search::split_in_two(array);
  auto ran = train_splitting_on_oom(first, sizer, train, sizer_mutex);
  for (auto& a : train_splitting_on_oom(second, sizer, train, sizer_mutex)) ran.push_back(std::move(a));
  return ran;
}

}  // namespace hfta::core
