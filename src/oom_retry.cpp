#include "hfta/core/oom_retry.h"

#include <c10/util/Exception.h>

namespace hfta::core {

std::vector<search::ArrayPlan> train_splitting_on_oom(
    const search::ArrayPlan& array, ArraySizer& sizer,
    const std::function<void(const search::ArrayPlan&)>& train, std::mutex* sizer_mutex) {
  try {
    train(array);
    return {array};
  } catch (const c10::OutOfMemoryError&) {
    if (array.trial_ids.size() < 2) throw;
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
