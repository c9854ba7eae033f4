// Splitting an array that runs out of memory, with LibTorch's own error type.
#include <gtest/gtest.h>

#include <functional>
#include <new>
#include <set>

#include <c10/util/Exception.h>

#include "../support/sweep_text.h"
#include "hfta/core/oom_retry.h"
#include "hfta/core/sweep_loader.h"

namespace hfta::core {
namespace {

[[noreturn]] void throw_oom() {
  // What the CUDA caching allocator throws when an allocation fails.
  throw c10::OutOfMemoryError(c10::SourceLocation{__func__, __FILE__, __LINE__},
                              "CUDA out of memory. Tried to allocate 2.00 GiB");
}

TEST(OomRetry, SplitsUntilTheHalvesFitAndTrainsEveryTrialOnce) {
  const SweepConfig sweep = load_sweep_string(test::sweep_yaml());
  ArraySizer sizer(sweep, 64.0 * (1 << 30));
  const search::ArrayPlan array{"k", 0, 3, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  std::multiset<std::int64_t> trained;
  int failures = 0;
  const auto ran = train_splitting_on_oom(array, sizer, [&](const search::ArrayPlan& a) {
    if (a.trial_ids.size() > 3) {
      ++failures;
      throw_oom();
    }
    trained.insert(a.trial_ids.begin(), a.trial_ids.end());
  });
  // 10 -> 5 + 5 -> (3 + 2) + (3 + 2)
  ASSERT_EQ(ran.size(), 4u);
  EXPECT_EQ(failures, 3);
  for (const auto& a : ran) EXPECT_LE(a.trial_ids.size(), 3u);
  EXPECT_EQ(trained, std::multiset<std::int64_t>(array.trial_ids.begin(), array.trial_ids.end()));
  // The key's model learned: it no longer plans arrays of the sizes that failed.
  EXPECT_LT(sizer.capacity("k", {}), 5);
}

TEST(OomRetry, OneModelThatDoesNotFitIsAnError) {
  const SweepConfig sweep = load_sweep_string(test::sweep_yaml());
  ArraySizer sizer(sweep, 1 << 30);
  EXPECT_THROW(train_splitting_on_oom(search::ArrayPlan{"k", 0, 1, {7}}, sizer,
                                      [](const search::ArrayPlan&) { throw_oom(); }),
               c10::OutOfMemoryError);
}

TEST(OomRetry, HostMemoryRunningOutSplitsTheArrayToo) {
  const SweepConfig sweep = load_sweep_string(test::sweep_yaml());
  const std::function<void()> refusals[] = {
      [] { throw std::bad_alloc(); },  // the host allocator's (caching_host_allocator.cpp)
      [] {                             // LibTorch's CPU allocator's, a plain c10::Error
        throw c10::Error(c10::SourceLocation{__func__, __FILE__, __LINE__},
                         "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: "
                         "you tried to allocate 4398046511104 bytes. Error code 12 (Cannot allocate memory)");
      }};
  for (const auto& refuse : refusals) {
    ArraySizer sizer(sweep, 64.0 * (1 << 30));
    std::multiset<std::int64_t> trained;
    const auto ran = train_splitting_on_oom(search::ArrayPlan{"k", 0, 3, {0, 1, 2, 3}}, sizer,
                                            [&](const search::ArrayPlan& a) {
                                              if (a.trial_ids.size() > 2) refuse();
                                              trained.insert(a.trial_ids.begin(), a.trial_ids.end());
                                            });
    EXPECT_EQ(ran.size(), 2u);
    EXPECT_EQ(trained, (std::multiset<std::int64_t>{0, 1, 2, 3}));
  }
  EXPECT_FALSE(is_out_of_memory(c10::Error(c10::SourceLocation{__func__, __FILE__, __LINE__}, "shape mismatch")));
}

TEST(OomRetry, OtherErrorsAreNotSplit) {
  const SweepConfig sweep = load_sweep_string(test::sweep_yaml());
  ArraySizer sizer(sweep, 1 << 30);
  int calls = 0;
  EXPECT_THROW(train_splitting_on_oom(search::ArrayPlan{"k", 0, 1, {1, 2}}, sizer,
                                      [&](const search::ArrayPlan&) {
                                        ++calls;
                                        throw std::runtime_error("disk full");
                                      }),
               std::runtime_error);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hfta::core
