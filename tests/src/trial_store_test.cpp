// A trial's checkpoint survives a kill at any moment of its rung's save: the
// rung that trial.json records is the one that loads.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/linear.h>

#include "hfta/core/experiment_dir.h"
#include "hfta/core/trial_store.h"

namespace hfta::core {
namespace {

namespace fs = std::filesystem;

torch::nn::Sequential model_filled_with(double value) {
  torch::nn::Sequential m(torch::nn::Linear(3, 2));
  torch::NoGradGuard no_grad;
  for (auto& p : m->parameters()) p.fill_(value);
  return m;
}

fusion::SlotState state_at(std::int64_t step) {
  fusion::SlotState s;
  s.step = step;
  s.buffers.assign(2, {});
  s.buffers[0]["momentum_buffer"] = at::full({2, 3}, static_cast<double>(step));
  return s;
}

// Saves one rung of trial 0 into `dir` and returns it as recorded.
RungResult save_rung(const std::string& dir, double weights, std::int64_t steps) {
  TrialRecord record;
  RungResult rung{static_cast<double>(steps), 0.5, "completed", steps, 0};
  return TrialStore(dir).save(record, {}, rung, model_filled_with(weights), state_at(steps));
}

double loaded_weight(const std::string& dir, std::uint32_t crc, std::int64_t* step) {
  auto m = model_filled_with(0);
  fusion::SlotState s;
  std::string problem;
  EXPECT_TRUE(TrialStore(dir).load_checkpoint(0, crc, m, s, &problem)) << problem;
  *step = s.step;
  return m->parameters()[0][0][0].item<double>();
}

TEST(TrialStore, AKillBetweenCheckpointAndTrialJsonLoadsTheRecordedRung) {
  const std::string base = ::testing::TempDir() + "/store-" + std::to_string(::getpid());
  const std::string dir = base + "/run", other = base + "/other";
  for (const auto& d : {dir, other}) std::filesystem::create_directories(d);  // the store makes no experiment directory
  const RungResult first = save_rung(dir, 1.0, 10);
  const RungResult second = save_rung(other, 2.0, 30);  // the bytes the next rung's save writes
  ASSERT_NE(first.checkpoint_crc, second.checkpoint_crc);
  const std::string next = dir + "/trials/0/checkpoint.next.pt";
  std::int64_t step = 0;

  // Killed after the next rung's checkpoint was written, before trial.json named it.
  fs::copy_file(other + "/trials/0/checkpoint.pt", next);
  EXPECT_EQ(loaded_weight(dir, first.checkpoint_crc, &step), 1.0);
  EXPECT_EQ(step, 10);

  // Killed after trial.json named it, before it replaced checkpoint.pt.
  fs::copy_file(other + "/trials/0/checkpoint.pt", next, fs::copy_options::overwrite_existing);
  EXPECT_EQ(loaded_weight(dir, second.checkpoint_crc, &step), 2.0);
  EXPECT_EQ(step, 30);
  EXPECT_FALSE(fs::exists(next));  // moved into place
  EXPECT_EQ(loaded_weight(dir, second.checkpoint_crc, &step), 2.0);
  // The rung it replaced stays as the previous one, as the save would have left it.
  EXPECT_EQ(loaded_weight(dir, first.checkpoint_crc, &step), 1.0);
  EXPECT_EQ(step, 10);

  // A clean save leaves only checkpoint.pt.
  save_rung(dir, 3.0, 90);
  EXPECT_FALSE(fs::exists(next));
  fs::remove_all(base);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TrialStore, SettlingATrialLeavesTheFilesItsTrialJsonNamesAsAnUninterruptedSaveWould) {
  // On resume, trials that train no more are never loaded: their files are
  // put in order all the same (results.json names checkpoint.pt).
  const std::string dir = ::testing::TempDir() + "/store-settle-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string trial = dir + "/trials/0/";
  save_rung(dir, 1.0, 10);
  save_rung(dir, 2.0, 30);
  const std::string last = bytes_of(trial + "checkpoint.pt"), before = bytes_of(trial + "checkpoint.prev.pt");
  ASSERT_NE(last, before);
  TrialStore store(dir);
  auto expect_settled = [&](const char* moment) {
    store.settle(store.load_all().at(0));
    EXPECT_EQ(bytes_of(trial + "checkpoint.pt"), last) << moment;
    EXPECT_EQ(bytes_of(trial + "checkpoint.prev.pt"), before) << moment;
    for (const char* gone : {"checkpoint.next.pt", "partial.pt", "partial.next.pt"}) {
      EXPECT_FALSE(fs::exists(trial + gone)) << moment << ": " << gone;
    }
  };
  // Killed after trial.json named the new checkpoint, before save()'s two renames.
  fs::rename(trial + "checkpoint.pt", trial + "checkpoint.next.pt");
  fs::rename(trial + "checkpoint.prev.pt", trial + "checkpoint.pt");
  expect_settled("before both renames");
  // Between them.
  fs::rename(trial + "checkpoint.pt", trial + "checkpoint.next.pt");
  expect_settled("between the renames");
  // A later rung's checkpoint written, never recorded; and a mid-rung one
  // left by a kill before save() removed it (trial.json names no partial).
  std::ofstream(trial + "checkpoint.next.pt") << "a rung trial.json does not name";
  std::ofstream(trial + "partial.pt") << "a finished rung's mid-rung checkpoint";
  std::ofstream(trial + "partial.next.pt") << "another";
  expect_settled("after writes trial.json does not name");
  // A file that cannot be read whole (a read error; here a folder) stays: it may be the one named.
  fs::create_directory(trial + "checkpoint.next.pt");
  store.settle(store.load_all().at(0));
  EXPECT_TRUE(fs::is_directory(trial + "checkpoint.next.pt"));
  EXPECT_EQ(bytes_of(trial + "checkpoint.pt"), last);
  fs::remove(trial + "checkpoint.next.pt");
  // A rung that failed after the last saved one names no checkpoint: that one stays.
  store.save_failure(TrialRecord{}, store.load_all().at(0).rungs, 90);
  expect_settled("after a failed rung");

  // A mid-rung checkpoint trial.json names, killed before its move into place.
  TrialRecord record;
  auto rungs = store.load_all().at(0).rungs;
  store.save_partial(record, rungs, PartialRung{90, 270, 50, {}, 0}, model_filled_with(4.0), state_at(50));
  const std::string partial = bytes_of(trial + "partial.pt");
  fs::rename(trial + "partial.pt", trial + "partial.next.pt");
  store.settle(store.load_all().at(0));
  EXPECT_EQ(bytes_of(trial + "partial.pt"), partial);
  EXPECT_FALSE(fs::exists(trial + "partial.next.pt"));
  EXPECT_EQ(bytes_of(trial + "checkpoint.pt"), last);
  fs::remove_all(dir);
}

TEST(TrialStore, ARenameThatFailsLeavesTheFileWhereItWas) {
  const std::string dir = ::testing::TempDir() + "/store-rename-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const RungResult rung = save_rung(dir, 1.0, 10);
  const std::string checkpoint = dir + "/trials/0/checkpoint.pt";
  EXPECT_THROW(rename_durably(checkpoint, dir + "/no such folder/checkpoint.pt"), StorageError);
  std::int64_t step = 0;
  EXPECT_EQ(loaded_weight(dir, rung.checkpoint_crc, &step), 1.0);  // still there: it may be a rung's only copy
  fs::remove_all(dir);
}

// A trial.json or checkpoint that is there but cannot be opened (here a link
// to itself; permissions or EIO elsewhere) is said as such, where it passed
// for a trial never run (status left it out without a word, resume trained it
// again from the start) and for a missing checkpoint.
TEST(TrialStore, AFileThatIsThereButCannotBeOpenedIsSaidSo) {
  const std::string dir = ::testing::TempDir() + "/store-unopenable-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const RungResult rung = save_rung(dir, 1.0, 10);
  const std::string checkpoint = dir + "/trials/0/checkpoint.pt";
  fs::remove(checkpoint);
  fs::create_symlink("checkpoint.pt", checkpoint);
  auto m = model_filled_with(0);
  fusion::SlotState s;
  std::string problem;
  EXPECT_FALSE(TrialStore(dir).load_checkpoint(0, rung.checkpoint_crc, m, s, &problem));
  EXPECT_EQ(problem, checkpoint + " cannot be read (Too many levels of symbolic links); " + dir +
                         "/trials/0/checkpoint.prev.pt is missing");
  fs::remove(checkpoint);
  EXPECT_FALSE(TrialStore(dir).load_checkpoint(0, rung.checkpoint_crc, m, s, &problem));
  EXPECT_EQ(problem, checkpoint + " is missing; " + dir + "/trials/0/checkpoint.prev.pt is missing");

  const std::string trial_json = dir + "/trials/0/trial.json";
  fs::remove(trial_json);
  fs::create_symlink("trial.json", trial_json);
  std::vector<std::string> said;
  EXPECT_TRUE(TrialStore(dir).load_all([&](const std::string& m) { said.push_back(m); }).empty());
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], trial_json + " cannot be opened (Too many levels of symbolic links): trial 0 trains again from the start");
  fs::remove(trial_json);  // missing: a trial killed before its first rung, nothing to say
  std::ofstream(dir + "/trials/98") << "hi";  // a file, not a trial's directory: not ours, nothing to say
  said.clear();
  EXPECT_TRUE(TrialStore(dir).load_all([&](const std::string& m) { said.push_back(m); }).empty());
  EXPECT_TRUE(said.empty()) << said[0];
  fs::remove_all(dir);
}

// trials/00, a copy of trials/0 (ids have no leading zeros), is no trial's:
// it said "trial 00 trains again from the start", and none did.
TEST(TrialStore, ATrialDirectoryNamedWithALeadingZeroIsNotATrials) {
  const std::string dir = ::testing::TempDir() + "/store-leading-zero-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  save_rung(dir, 1.0, 10);
  fs::copy(dir + "/trials/0", dir + "/trials/00", fs::copy_options::recursive);
  std::vector<std::string> said;
  const auto trials = TrialStore(dir).load_all([&](const std::string& m) { said.push_back(m); });
  EXPECT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials.count(0), 1u);
  EXPECT_TRUE(said.empty()) << said[0];
  fs::remove_all(dir);
}

TEST(TrialStore, APartialRungRoundTripsAndARungsSaveRemovesIt) {
  const std::string dir = ::testing::TempDir() + "/store-partial-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  TrialStore store(dir);
  TrialRecord record;
  record.history = nlohmann::json::array({{{"step", 196}, {"val_loss", 0.5}}});
  PartialRung partial{180, 540, 392, {}, 0};
  partial.progress.bad_evals = 1;
  partial.progress.plateau.lr = 0.05, partial.progress.plateau.has_best = true;
  store.save_partial(record, {}, partial, model_filled_with(4.0), state_at(392));
  auto stored = store.load_all().at(0);
  ASSERT_TRUE(stored.partial.has_value());
  EXPECT_EQ(stored.partial->steps, 392);
  EXPECT_EQ(stored.partial->to_budget, 540);
  EXPECT_EQ(stored.partial->progress.best, -INFINITY);  // nothing improved yet: JSON null
  EXPECT_EQ(stored.partial->progress.bad_evals, 1);
  EXPECT_EQ(stored.partial->progress.plateau.lr, 0.05);
  EXPECT_TRUE(stored.partial->progress.plateau.has_best);
  EXPECT_EQ(stored.record.history.size(), 1u);
  auto m = model_filled_with(0);
  fusion::SlotState s;
  std::string problem;
  ASSERT_TRUE(store.load_partial(0, *stored.partial, m, s, &problem)) << problem;
  EXPECT_EQ(m->parameters()[0][0][0].item<double>(), 4.0);
  EXPECT_EQ(s.step, 392);

  save_rung(dir, 5.0, 540);
  EXPECT_FALSE(store.load_all().at(0).partial.has_value());
  EXPECT_FALSE(fs::exists(dir + "/trials/0/partial.pt"));
  fs::remove_all(dir);
}

TEST(TrialStore, CheckpointsKeepBatchNormRunningStatistics) {
  // Evaluation reads running statistics: a resumed trial must evaluate as before.
  const std::string dir = ::testing::TempDir() + "/store-bn-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  torch::nn::Sequential trained(torch::nn::Linear(3, 4), torch::nn::BatchNorm1d(4));
  trained->train();
  trained->forward(at::randn({16, 3}) * 5 + 2);
  TrialRecord record;
  const RungResult rung =
      TrialStore(dir).save(record, {}, {1, 0.5, "completed", 1, 0}, trained, state_at(1));
  torch::nn::Sequential fresh(torch::nn::Linear(3, 4), torch::nn::BatchNorm1d(4));
  fusion::SlotState s;
  std::string problem;
  ASSERT_TRUE(TrialStore(dir).load_checkpoint(0, rung.checkpoint_crc, fresh, s, &problem)) << problem;
  for (const auto& b : trained->named_buffers()) {
    EXPECT_TRUE(at::equal(fresh->named_buffers()[b.key()], b.value())) << b.key();
  }
  fs::remove_all(dir);
}

TEST(TrialStore, StateKeptPastTheParametersRoundTrips) {
  // With fp16, the trainer keeps a trial's loss scale as one entry after its
  // parameters' optimizer state: a resumed trial must get it back.
  const std::string dir = ::testing::TempDir() + "/store-scale-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  fusion::SlotState saved = state_at(4);
  saved.buffers.push_back({{"loss_scale", at::tensor(std::vector<double>{1024, 7}, at::kDouble)}});
  TrialRecord record;
  const RungResult rung =
      TrialStore(dir).save(record, {}, {1, 0.5, "completed", 4, 0}, model_filled_with(2), saved);
  auto m = model_filled_with(0);
  fusion::SlotState s;
  std::string problem;
  ASSERT_TRUE(TrialStore(dir).load_checkpoint(0, rung.checkpoint_crc, m, s, &problem)) << problem;
  ASSERT_EQ(s.buffers.size(), 3u);
  EXPECT_TRUE(at::equal(s.buffers[0].at("momentum_buffer"), saved.buffers[0].at("momentum_buffer")));
  EXPECT_TRUE(s.buffers[1].empty());
  EXPECT_TRUE(at::equal(s.buffers[2].at("loss_scale"), saved.buffers[2].at("loss_scale")));
  fs::remove_all(dir);
}

TEST(TrialStore, ASaveNeverMakesTheExperimentDirectoryAgain) {
  // Moved away mid-run, it was made again by the next save: half the sweep in each.
  const std::string dir = ::testing::TempDir() + "/store-gone-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  save_rung(dir, 1.0, 10);
  std::filesystem::remove_all(dir);
  EXPECT_THROW(save_rung(dir, 2.0, 30), StorageError);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace hfta::core
