#include <gtest/gtest.h>

#include <filesystem>

#include "hfta/core/experiment_dir.h"

namespace hfta::core {
namespace {

namespace fs = std::filesystem;

class ExperimentLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hfta-lock-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ExperimentLockTest, ADirectoryMovedAwayIsNamedWhereItWent) {
  const std::string dir = (root_ / "sweep").string(), moved = (root_ / "elsewhere").string();
  fs::create_directories(dir);
  std::string holder;
  auto lock = ExperimentLock::take(dir, &holder);
  ASSERT_TRUE(lock);
  EXPECT_NO_THROW(lock->check_still_at(dir));
  fs::rename(dir, moved);
  try {
    lock->check_still_at(dir);
    ADD_FAILURE() << "no DirectoryMoved";
  } catch (const DirectoryMoved& e) {
    EXPECT_EQ(e.now, moved);
    EXPECT_NE(std::string(e.what()).find(dir + " is no longer the directory this run locked (moved to " + moved),
              std::string::npos)
        << e.what();
  }
  // A new directory of the same name is not the one locked either.
  fs::create_directories(dir);
  EXPECT_THROW(lock->check_still_at(dir), DirectoryMoved);
  EXPECT_NO_THROW(lock->check_still_at(moved));
}

TEST_F(ExperimentLockTest, ALockFileRemovedIsSaidSoAndTheDirectoryStaysResumable) {
  const std::string dir = (root_ / "sweep").string();
  fs::create_directories(dir);
  std::string holder;
  auto lock = ExperimentLock::take(dir, &holder);
  ASSERT_TRUE(lock);
  fs::remove(dir + "/lock");
  try {
    lock->check_still_at(dir);
    ADD_FAILURE() << "no DirectoryMoved";
  } catch (const DirectoryMoved& e) {
    EXPECT_EQ(e.now, dir);
    EXPECT_NE(std::string(e.what()).find(dir + "/lock, this run's lock, was removed or replaced"), std::string::npos)
        << e.what();
  }
}

TEST_F(ExperimentLockTest, ADirectoryRemovedOrMadeAgainIsSaidSo) {
  const std::string dir = (root_ / "sweep").string();
  fs::create_directories(dir);
  std::string holder;
  auto lock = ExperimentLock::take(dir, &holder);
  ASSERT_TRUE(lock);
  fs::remove_all(dir);
  for (bool made_again : {false, true}) {
    if (made_again) fs::create_directories(dir);  // an empty directory of the same name
    try {
      lock->check_still_at(dir);
      ADD_FAILURE() << "no DirectoryMoved";
    } catch (const DirectoryMoved& e) {
      EXPECT_EQ(e.now, "");
      EXPECT_NE(std::string(e.what()).find("(removed or replaced)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hfta::core
