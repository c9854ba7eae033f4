#include <gtest/gtest.h>

#include <stdexcept>

#include <torch/cuda.h>

#include "hfta/fusion/device_list.h"

namespace hfta::fusion {
namespace {

TEST(DeviceList, Cpu) {
  const auto devices = parse_device_list("cpu", 0);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(devices[0].is_cpu());
  EXPECT_EQ(to_string(devices), "cpu");
}

TEST(DeviceList, CudaMeansEveryVisibleGpu) {
  const auto devices = parse_device_list("cuda", 3);
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(to_string(devices), "cuda:0,cuda:1,cuda:2");
}

TEST(DeviceList, ExplicitGpus) {
  const auto devices = parse_device_list("cuda:1, cuda:0", 2);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].index(), 1);
  EXPECT_EQ(devices[1].index(), 0);
}

TEST(DeviceList, Rejections) {
  EXPECT_THROW(parse_device_list("cuda", 0), std::invalid_argument);
  EXPECT_THROW(parse_device_list("cuda:2", 2), std::invalid_argument);
  EXPECT_THROW(parse_device_list("cuda:x", 2), std::invalid_argument);
  EXPECT_THROW(parse_device_list("cuda:0,cuda:0", 2), std::invalid_argument);
  EXPECT_THROW(parse_device_list("cpu,cuda:0", 2), std::invalid_argument);
  EXPECT_THROW(parse_device_list("tpu", 2), std::invalid_argument);
  EXPECT_THROW(parse_device_list("", 2), std::invalid_argument);
}

TEST(DeviceList, MessageNamesTheBadEntry) {
  try {
    parse_device_list("cpu,gpu", 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos) << e.what();
  }
}

TEST(DeviceList, WithThisLibTorch) {
  // "cuda" means every GPU this LibTorch sees, and is refused when it sees none.
  const auto gpus = static_cast<std::size_t>(torch::cuda::device_count());
  if (gpus == 0) {
    EXPECT_THROW(parse_device_list("cuda"), std::invalid_argument);
  } else {
    EXPECT_EQ(parse_device_list("cuda").size(), gpus);
  }
  EXPECT_EQ(parse_device_list("cpu").size(), 1u);
}

}  // namespace
}  // namespace hfta::fusion
