// Arrays for several workers: the long array of a round is cut where that ends
// the round sooner. Costs here are abstract units from a formula (budget x
// models): nothing is timed, and every expected makespan is exact arithmetic.
#include <gtest/gtest.h>

#include <algorithm>

#include "hfta/search/worker_balance.h"

namespace hfta::search {
namespace {

ArrayPlan array(std::vector<std::int64_t> ids, double to) { return {"k", 0, to, std::move(ids)}; }

// No gain from fusion: an array costs its models' budgets added up.
double serial_cost(const ArrayPlan& a) { return (a.to_budget - a.from_budget) * static_cast<double>(a.trial_ids.size()); }

std::vector<std::int64_t> flattened(const std::vector<ArrayPlan>& arrays) {
  std::vector<std::int64_t> ids;
  for (const auto& a : arrays) ids.insert(ids.end(), a.trial_ids.begin(), a.trial_ids.end());
  return ids;
}

std::vector<double> costs_of(const std::vector<ArrayPlan>& arrays) {
  std::vector<double> out;
  for (const auto& a : arrays) out.push_back(serial_cost(a));
  return out;
}

TEST(WorkerBalance, MakespanOfWorkersTakingTheNextArray) {
  EXPECT_DOUBLE_EQ(makespan({3, 3, 2, 2, 2}, {0, 1, 2, 3, 4}, 2), 7);
  EXPECT_DOUBLE_EQ(makespan({3, 3, 2, 2, 2}, {2, 3, 4, 0, 1}, 2), 7);
  EXPECT_DOUBLE_EQ(makespan({3, 3, 2, 2, 2}, {0, 1, 2, 3, 4}, 1), 12);
  EXPECT_DOUBLE_EQ(makespan({5, 1, 1}, {1, 2, 0}, 2), 6);  // the long one started last
}

TEST(WorkerBalance, OneWorkerTrainsTheArraysAsPacked) {
  const std::vector<ArrayPlan> arrays = {array({0, 1, 2, 3}, 25), array({4}, 10)};
  const WorkerPlan plan = balance_for_workers(arrays, 1, serial_cost);
  ASSERT_EQ(plan.arrays.size(), 2u);
  EXPECT_EQ(flattened(plan.arrays), flattened(arrays));
  EXPECT_EQ(plan.start_order, (std::vector<std::size_t>{0, 1}));
}

TEST(WorkerBalance, CutsTheLongArrayWhileTheRoundEndsSooner) {
  // One array of four models for 25 units, and two single models for 10: on two
  // workers the round costs 100 uncut; cut in halves, 50 + 10 on each worker.
  // Cutting a half again leaves it at 60, so the cutting stops there.
  const std::vector<ArrayPlan> arrays = {array({4}, 10), array({0, 1, 2, 3}, 25), array({5}, 10)};
  const WorkerPlan plan = balance_for_workers(arrays, 2, serial_cost);
  const auto costs = costs_of(plan.arrays);
  EXPECT_DOUBLE_EQ(makespan(costs, plan.start_order, 2), 60);
  ASSERT_EQ(plan.arrays.size(), 4u);
  EXPECT_EQ(plan.arrays[1].trial_ids, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(plan.arrays[2].trial_ids, (std::vector<std::int64_t>{2, 3}));
  // Halves take the whole array's place: the trials report in the packer's order.
  EXPECT_EQ(flattened(plan.arrays), flattened(arrays));
  // Started longest first, every array once.
  EXPECT_EQ(plan.start_order, (std::vector<std::size_t>{1, 2, 0, 3}));
}

TEST(WorkerBalance, KeepsArraysWhoseFusionPaysMoreThanAnotherWorker) {
  // Perfect fusion: an array costs as much as one model, so halves gain nothing.
  auto fused = [](const ArrayPlan& a) { return a.to_budget - a.from_budget; };
  const std::vector<ArrayPlan> arrays = {array({0, 1, 2, 3}, 100), array({4}, 10)};
  const WorkerPlan plan = balance_for_workers(arrays, 2, fused);
  ASSERT_EQ(plan.arrays.size(), 2u);
  EXPECT_EQ(plan.arrays[0].trial_ids.size(), 4u);
  EXPECT_EQ(plan.start_order, (std::vector<std::size_t>{0, 1}));
}

TEST(WorkerBalance, SingleModelsAreNeverCut) {
  const std::vector<ArrayPlan> arrays = {array({0}, 100), array({1}, 10)};
  const WorkerPlan plan = balance_for_workers(arrays, 4, serial_cost);
  EXPECT_EQ(plan.arrays.size(), 2u);
  EXPECT_TRUE(balance_for_workers({}, 2, serial_cost).arrays.empty());
}

}  // namespace
}  // namespace hfta::search
