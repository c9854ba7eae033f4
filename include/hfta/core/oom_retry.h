// When an array runs out of memory anyway: split it in two, correct the memory
// model of its key, and train the halves. Nothing is lost: every trial of the
// array is trained exactly once, by the halves that fit.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "hfta/core/array_sizer.h"
#include "hfta/search/packer.h"

namespace hfta::core {

/// Whether `e` says that memory ran out: c10::OutOfMemoryError (a GPU's
/// caching allocator), LibTorch's CPU allocator's refusal (a plain c10::Error)
/// or std::bad_alloc (the host allocator's, and the standard library's).
bool is_out_of_memory(const std::exception& e);

/// Runs `train` on `array`. When it throws what is_out_of_memory names, records the failure in `sizer`, splits the
/// array in two and runs each half the same way. An array of one model that
/// still does not fit rethrows. Returns the arrays that trained, in order.
/// `sizer_mutex`, when given, is held while `sizer` is updated (arrays trained
/// by several workers share it).
std::vector<search::ArrayPlan> train_splitting_on_oom(
    const search::ArrayPlan& array, ArraySizer& sizer,
    const std::function<void(const search::ArrayPlan&)>& train, std::mutex* sizer_mutex = nullptr);

}  // namespace hfta::core
