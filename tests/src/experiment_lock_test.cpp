#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

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
  // The lock of a new directory `dir`.
  static ExperimentLock locked(const std::string& dir) {
    fs::create_directories(dir);
    std::string holder;
    auto lock = ExperimentLock::take(dir, &holder);
    if (!lock) throw std::runtime_error("no lock on " + dir);
    return std::move(*lock);
  }
  fs::path root_;
};

TEST_F(ExperimentLockTest, ADirectoryMovedAwayIsNamedWhereItWent) {
  const std::string dir = (root_ / "sweep").string(), moved = (root_ / "elsewhere").string();
  const ExperimentLock held = locked(dir);
  EXPECT_NO_THROW(held.check_still_at(dir));
  fs::rename(dir, moved);
  try {
    held.check_still_at(dir);
    ADD_FAILURE() << "no DirectoryMoved";
  } catch (const DirectoryMoved& e) {
    EXPECT_EQ(e.now, moved);
    EXPECT_NE(std::string(e.what()).find(dir + " is no longer the directory this run locked (moved to " + moved),
              std::string::npos)
        << e.what();
  }
  // A new directory of the same name is not the one locked either.
  fs::create_directories(dir);
  EXPECT_THROW(held.check_still_at(dir), DirectoryMoved);
  EXPECT_NO_THROW(held.check_still_at(moved));
}

TEST_F(ExperimentLockTest, ALockFileRemovedIsSaidSoAndTheDirectoryStaysResumable) {
  const std::string dir = (root_ / "sweep").string();
  const ExperimentLock held = locked(dir);
  fs::remove(dir + "/lock");
  try {
    held.check_still_at(dir);
    ADD_FAILURE() << "no DirectoryMoved";
  } catch (const DirectoryMoved& e) {
    EXPECT_EQ(e.now, dir);
    EXPECT_NE(std::string(e.what()).find(dir + "/lock, this run's lock, was removed or replaced"), std::string::npos)
        << e.what();
  }
}

TEST_F(ExperimentLockTest, ADirectoryRemovedOrMadeAgainIsSaidSo) {
  const std::string dir = (root_ / "sweep").string();
  const ExperimentLock held = locked(dir);
  fs::remove_all(dir);
  for (bool made_again : {false, true}) {
    if (made_again) fs::create_directories(dir);  // an empty directory of the same name
    try {
      held.check_still_at(dir);
      ADD_FAILURE() << "no DirectoryMoved";
    } catch (const DirectoryMoved& e) {
      EXPECT_EQ(e.now, "");
      EXPECT_NE(std::string(e.what()).find("(removed or replaced)"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hfta::core
