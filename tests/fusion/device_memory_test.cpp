#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hfta/fusion/device_memory.h"

namespace hfta::fusion {
namespace {

class CgroupRoom : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hfta_cgroup_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(CgroupRoom, Version2LeavesTheLimitLessWhatIsInUseButInactivePageCache) {
  write("memory.max", "4294967296\n");  // 4 GiB
  write("memory.current", "1073741824\n");
  write("memory.stat", "anon 805306368\nfile 268435456\ninactive_file 0\nactive_file 268435456\n");
  EXPECT_DOUBLE_EQ(*cgroup_room_bytes(dir_.string()), 4294967296.0 - (1073741824.0 - 268435456.0));
  write("memory.max", "max\n");
  EXPECT_FALSE(cgroup_room_bytes(dir_.string()));
}

TEST_F(CgroupRoom, Version1ReadsItsOwnFilesAndItsHugeLimitIsNone) {
  write("memory.limit_in_bytes", "2147483648\n");
  write("memory.usage_in_bytes", "536870912\n");
  write("memory.stat", "cache 0\ntotal_cache 0\n");
  EXPECT_DOUBLE_EQ(*cgroup_room_bytes(dir_.string()), 2147483648.0 - 536870912.0);
  write("memory.limit_in_bytes", "9223372036854771712\n");  // what v1 says for no limit
  EXPECT_FALSE(cgroup_room_bytes(dir_.string()));
}

TEST_F(CgroupRoom, NoCgroupFilesNoLimitAndAFullOneNoRoom) {
  EXPECT_FALSE(cgroup_room_bytes(dir_.string()));
  write("memory.max", "1000\n");
  write("memory.current", "5000\n");
  EXPECT_DOUBLE_EQ(*cgroup_room_bytes(dir_.string()), 0.0);
}

TEST_F(CgroupRoom, AParentsLimitBindsItsChildren) {
  // A slice limited to 2 GiB holding a scope limited to 8 GiB: 2 GiB less the slice's use.
  std::filesystem::create_directories(dir_ / "slice" / "scope");
  write("slice/memory.max", "2147483648\n");
  write("slice/memory.current", "1073741824\n");
  write("slice/scope/memory.max", "8589934592\n");
  write("slice/scope/memory.current", "536870912\n");
  EXPECT_DOUBLE_EQ(*cgroup_room_along(dir_.string(), "/slice/scope"), 1073741824.0);
  EXPECT_DOUBLE_EQ(*cgroup_room_along(dir_.string(), "/slice/scope/"), 1073741824.0);
  EXPECT_FALSE(cgroup_room_along(dir_.string(), "/"));  // the root sets no limit here
  EXPECT_FALSE(cgroup_room_along(dir_.string(), "/another/path"));  // a host path a container does not see
  write("memory.max", "1000000\n");                                // a namespaced root's own limit
  write("memory.current", "0\n");
  EXPECT_DOUBLE_EQ(*cgroup_room_along(dir_.string(), "/another/path"), 1000000.0);
  EXPECT_DOUBLE_EQ(*cgroup_room_along(dir_.string(), "slice/scope"), 1000000.0);  // (no leading slash: still ends)
}

}  // namespace
}  // namespace hfta::fusion
