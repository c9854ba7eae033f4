#include <gtest/gtest.h>

#include "../support/sweep_text.h"
#include "hfta/core/array_sizer.h"
#include "hfta/core/sweep_loader.h"

namespace hfta::core {
namespace {

SweepConfig mlp_sweep(const std::string& fusion = "") {
  return load_sweep_string(test::sweep_yaml(
      {{"task", "task:\n  model: mlp\n  batch_size: 128\n  options: {width: 1024, depth: 4}\n"},
       {"fusion", fusion}}));
}

TEST(ArraySizer, CapacityFollowsTheMemoryBudget) {
  const SweepConfig sweep = mlp_sweep("fusion:\n  max_array: 1000\n  memory_fraction: 0.5\n");
  const search::Config example;
  ArraySizer big(sweep, 64.0 * (1 << 30));
  ArraySizer small(sweep, 400.0 * (1 << 20));
  const auto b_big = big.capacity("k", example), b_small = small.capacity("k", example);
  EXPECT_GT(b_big, b_small);
  EXPECT_GE(b_small, 1);
  // The predicted bytes of the largest array fit the budget; one more would not.
  EXPECT_LE(*small.predicted_bytes("k", example, b_small), small.budget_bytes());
  EXPECT_GT(*small.predicted_bytes("k", example, b_small + 1), small.budget_bytes());
}

TEST(ArraySizer, MemoryReservedForTheDatasetLeavesArraysLess) {
  const SweepConfig sweep = mlp_sweep("fusion:\n  max_array: 1000\n  memory_fraction: 0.5\n");
  const search::Config example;
  ArraySizer sizer(sweep, 800.0 * (1 << 20));
  const auto before = sizer.capacity("k", example);
  sizer.reserve(400.0 * (1 << 20));  // the budget is half of what is free: it loses half of this
  EXPECT_DOUBLE_EQ(sizer.budget_bytes(), 200.0 * (1 << 20));
  EXPECT_LT(sizer.capacity("k", example), before);
  sizer.reserve(1e12);
  EXPECT_EQ(sizer.budget_bytes(), 0);
}

TEST(ArraySizer, MaxArrayCapsAndBertIsSizedByItsSize) {
  const SweepConfig sweep = mlp_sweep("fusion:\n  max_array: 8\n");
  ArraySizer sizer(sweep, 64.0 * (1 << 30));
  EXPECT_EQ(sizer.capacity("k", {}), 8);
  // BERT's footprint follows its text option `size`: Medium needs far more than Tiny.
  auto bert = [](const std::string& size) {
    return load_sweep_string(test::sweep_yaml({{"task", "task:\n  model: bert\n  options:\n    size: " + size + "\n"},
                                               {"metric", "metric:\n  name: val_loss\n  goal: minimize\n"}}));
  };
  const SweepConfig medium = bert("medium"), tiny = bert("tiny");
  ArraySizer medium_sizer(medium, 4.0 * (1 << 30)), tiny_sizer(tiny, 4.0 * (1 << 30));
  ASSERT_TRUE(medium_sizer.predicted_bytes("k", {}, 4).has_value());
  EXPECT_GT(*medium_sizer.predicted_bytes("k", {}, 4), 10 * *tiny_sizer.predicted_bytes("k", {}, 4));
  EXPECT_LT(medium_sizer.capacity("k", {}), tiny_sizer.capacity("k", {}));
}

TEST(ArraySizer, OutOfMemoryAndThroughputLowerTheCapacity) {
  const SweepConfig sweep = mlp_sweep("fusion:\n  max_array: 64\n");
  ArraySizer sizer(sweep, 64.0 * (1 << 30));
  ASSERT_EQ(sizer.capacity("k", {}), 64);
  sizer.observe_out_of_memory("k", 32);
  EXPECT_LT(sizer.capacity("k", {}), 32);
  ArraySizer fast(sweep, 64.0 * (1 << 30));
  fast.observe_throughput("k", 4, 100);
  fast.observe_throughput("k", 16, 180);
  fast.observe_throughput("k", 64, 181);
  EXPECT_EQ(fast.capacity("k", {}), 16);
}

TEST(ArraySizer, ArraysThatBarelyBeatOneModelKeepOneModel) {
  const SweepConfig sweep = mlp_sweep("fusion:\n  max_array: 64\n");  // min_gain 0.1 by default
  ArraySizer marginal(sweep, 64.0 * (1 << 30));
  marginal.observe_throughput("k", 1, 164);
  marginal.observe_throughput("k", 2, 157);
  marginal.observe_throughput("k", 4, 169);  // +3%: noise, as a CNN measured it
  EXPECT_EQ(marginal.capacity("k", {}), 1);
  ArraySizer paying(sweep, 64.0 * (1 << 30));
  paying.observe_throughput("k", 1, 343);
  paying.observe_throughput("k", 2, 371);
  paying.observe_throughput("k", 8, 395);  // +15%
  paying.observe_throughput("k", 16, 398);
  EXPECT_EQ(paying.capacity("k", {}), 8);
  const SweepConfig eager = mlp_sweep("fusion:\n  min_gain: 0\n");
  ArraySizer any_gain(eager, 64.0 * (1 << 30));
  any_gain.observe_throughput("k", 1, 164);
  any_gain.observe_throughput("k", 2, 157);
  any_gain.observe_throughput("k", 4, 169);
  EXPECT_EQ(any_gain.capacity("k", {}), 64);  // "still rising" from 157 to 169: uncapped
}

TEST(ArraySizer, TrialParametersChangeTheEstimate) {
  const SweepConfig sweep = mlp_sweep();
  ArraySizer sizer(sweep, 64.0 * (1 << 30));
  const auto narrow = *sizer.predicted_bytes("narrow", {{"width", std::int64_t{64}}}, 4);
  const auto wide = *sizer.predicted_bytes("wide", {{"width", std::int64_t{4096}}}, 4);
  EXPECT_GT(wide, 10 * narrow);
}

}  // namespace
}  // namespace hfta::core
