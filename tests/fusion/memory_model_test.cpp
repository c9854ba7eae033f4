#include <gtest/gtest.h>

#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "hfta/fusion/device_memory.h"
#include "hfta/fusion/memory_model.h"

namespace hfta::fusion {
namespace {

TEST(MemoryModel, LinearInTheNumberOfModels) {
  MemoryModel m(100, 10);
  EXPECT_DOUBLE_EQ(m.bytes(0), 100);
  EXPECT_DOUBLE_EQ(m.bytes(5), 150);
  EXPECT_EQ(m.max_models(150), 5);
  EXPECT_EQ(m.max_models(159.9), 5);
  EXPECT_EQ(m.max_models(109), 0);
}

TEST(MemoryModel, FitsTwoMeasuredSizes) {
  const MemoryModel m = MemoryModel::fit(2, 1200, 8, 3000);
  EXPECT_DOUBLE_EQ(m.per_model_bytes(), 300);
  EXPECT_DOUBLE_EQ(m.fixed_bytes(), 600);
  EXPECT_DOUBLE_EQ(m.bytes(4), 1800);
  EXPECT_THROW(MemoryModel::fit(2, 1, 2, 3), std::invalid_argument);
}

TEST(MemoryModel, MeasuredPeaksReplaceTheEstimate) {
  MemoryModel m(1000, 50);  // an estimate that is too optimistic
  m.observe_peak(4, 2000);  // one size: never below what was measured
  EXPECT_GE(m.bytes(4), 2000);
  m.observe_peak(8, 3600);  // two sizes: the line through them
  EXPECT_DOUBLE_EQ(m.per_model_bytes(), 400);
  EXPECT_DOUBLE_EQ(m.bytes(8), 3600);
}

TEST(MemoryModel, OutOfMemoryLowersTheCapacityBelowWhatFailed) {
  MemoryModel m(100, 10);
  ASSERT_EQ(m.max_models(1000), 90);
  m.observe_out_of_memory(90, 1000);  // 90 models did not fit in 1000 bytes
  EXPECT_LT(m.max_models(1000), 90);
  EXPECT_GT(m.bytes(90), 1000);
}

TEST(ThroughputCurve, StopsGrowingWhereModelsPerSecondStopGrowing) {
  ThroughputCurve t;
  EXPECT_FALSE(t.saturation().has_value());
  t.record(1, 100);
  t.record(2, 190);
  t.record(4, 350);
  t.record(8, 400);
  t.record(16, 405);
  t.record(32, 390);
  EXPECT_EQ(t.saturation(0.05), 8);  // 400 is within 5% of the best, 405
  EXPECT_EQ(t.saturation(0.0), 16);

  ThroughputCurve growing;
  growing.record(1, 100);
  growing.record(2, 190);
  growing.record(4, 350);
  EXPECT_FALSE(growing.saturation(0.05).has_value());  // 4 models may not be the limit

  ThroughputCurve losing;  // compute-bound on a CPU: one model at a time is fastest
  losing.record(1, 100);
  losing.record(2, 97);
  losing.record(4, 85);
  EXPECT_EQ(losing.saturation(0.05), 1);

  ThroughputCurve marginal;  // a gain within the timings' noise
  marginal.record(1, 100);
  marginal.record(2, 104);
  marginal.record(4, 108);
  EXPECT_EQ(marginal.saturation(0.05, 0.1), 1);
  EXPECT_EQ(marginal.saturation(0.05, 0.0), 2);  // 104 is within 5% of 108
  EXPECT_FALSE(growing.saturation(0.05, 0.1).has_value());  // 3.5x one model
}

TEST(DeviceMemory, CpuReportsAvailableMemory) {
  const double bytes = available_memory_bytes(c10::Device(c10::kCPU));
  EXPECT_GT(bytes, 64.0 * 1024 * 1024);
  EXPECT_LT(bytes, 64.0 * 1024 * 1024 * 1024 * 1024);
  EXPECT_FALSE(take_peak_bytes(c10::Device(c10::kCPU)).has_value());
}

TEST(DeviceMemory, GpuReportsFreeMemoryAndEachArraysPeak) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const c10::Device gpu(c10::kCUDA, 0);
  take_peak_bytes(gpu);
  const double before = available_memory_bytes(gpu);
  EXPECT_GT(before, 1e9);
  double held = 0;
  {
    const at::Tensor t = at::empty({256, 1024, 1024}, at::TensorOptions().device(gpu));  // 1 GiB
    held = available_memory_bytes(gpu);  // the tensor's block is not free
    const auto peak = take_peak_bytes(gpu);
    ASSERT_TRUE(peak.has_value());
    EXPECT_GE(*peak, 1024.0 * 1024 * 1024);
  }
  EXPECT_LT(held, before - 1e9);
  // The freed block stays cached by LibTorch, but counts as available again.
  EXPECT_GT(available_memory_bytes(gpu), before - 1e8);
  take_peak_bytes(gpu);  // this count began while the tensor lived
  EXPECT_LT(*take_peak_bytes(gpu), 1e8);  // this one after
  // What lives when the count begins (a dataset) is not counted: only what comes on top.
  const at::Tensor dataset = at::empty({256, 1024, 1024}, at::TensorOptions().device(gpu));
  take_peak_bytes(gpu);
  {
    const at::Tensor array = at::empty({128, 1024, 1024}, at::TensorOptions().device(gpu));  // 0.5 GiB
    const auto peak = take_peak_bytes(gpu);
    EXPECT_GE(*peak, 512.0 * 1024 * 1024);
    EXPECT_LT(*peak, 600.0 * 1024 * 1024);
  }
}

}  // namespace
}  // namespace hfta::fusion
