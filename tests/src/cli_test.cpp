// The hfta-tune executable as a user runs it: exit codes, messages, nothing written on rejection.
#include <gtest/gtest.h>

#include <regex>

#include <torch/cuda.h>

#include <cmath>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <fstream>
#include <iomanip>
#include <algorithm>
#include <atomic>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "../support/run_cli.h"
#include "../support/sanitizer.h"
#include "../support/sweep_text.h"
#include "../support/watched_tuner.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/search/median_stopping.h"

namespace {

using Result = hfta::test::CliResult;

class Cli : public ::testing::Test {
 protected:
  // No clock decides what a test's sweep does, so it runs alike on any
  // machine, under any load, and as the cut and resumed runs it is compared
  // with: ASHA's promotion_wait, the only wall-clock rule of the scheduler,
  // reads a clock that stands still; and the throughput probe times nothing,
  // taking B models to train B times as fast as one (so arrays are as large
  // as the sweep and memory allow), where its timings would size the arrays.
  void SetUp() override {
    char tmpl[] = "/tmp/hfta-cli-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("HFTA_TUNE_SCHEDULER_CLOCK_STILL", "1", 1);
    setenv("HFTA_TUNE_RATES_UNTIMED", "1", 1);
  }
  void TearDown() override {
    unsetenv("HFTA_TUNE_SCHEDULER_CLOCK_STILL");
    unsetenv("HFTA_TUNE_RATES_UNTIMED");
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  Result run(const std::string& args) { return hfta::test::run_cli(args, dir_); }

  std::string write_sweep(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static std::string slurp(const std::string& path) { return hfta::test::slurp(path); }

  static nlohmann::json results(const std::string& dir) { return nlohmann::json::parse(slurp(dir + "/results.json")); }

  // The sweep in `dir` ended as the one in `want_dir`: every trial's history,
  // metric and status, and the best trial, the same.
  static void expect_same_results(const std::string& dir, const std::string& want_dir) {
    const auto again = results(dir), whole = results(want_dir);
    ASSERT_EQ(again.at("trials").size(), whole.at("trials").size());
    for (std::size_t i = 0; i < whole.at("trials").size(); ++i) {
      SCOPED_TRACE("trial " + whole.at("trials")[i].at("id").dump());
      for (const char* key : {"params", "history", "metric", "status"}) {
        EXPECT_EQ(again.at("trials")[i].at(key), whole.at("trials")[i].at(key)) << key;
      }
      const nlohmann::json none;  // (a trial that failed in its first rung has no size)
      EXPECT_EQ(again.at("trials")[i].value("model_params", none), whole.at("trials")[i].value("model_params", none));
    }
    EXPECT_EQ(again.at("best"), whole.at("best"));
    EXPECT_EQ(again.at("importance"), whole.at("importance"));  // (from the rungs trial.json kept)
  }

  // The files results.json names are the trials' as trial.json records them:
  // each checkpoint.pt the last rung's (by CRC-32), as an uninterrupted run
  // leaves them, and no half-moved file beside them.
  static void expect_checkpoints_as_named(const std::string& dir) {
    const nlohmann::json all = results(dir);  // (named: a range-for over a temporary's member dangles)
    for (const auto& t : all.at("trials")) {
      const std::string trial = dir + "/trials/" + t.at("id").dump();
      SCOPED_TRACE(trial);
      EXPECT_FALSE(exists(trial + "/checkpoint.next.pt"));
      EXPECT_FALSE(exists(trial + "/partial.pt"));
      std::uint32_t named = 0;
      const nlohmann::json recorded = nlohmann::json::parse(slurp(trial + "/trial.json"));
      for (const auto& r : recorded.at("rungs")) {
        if (r.at("status") != "failed") named = r.at("checkpoint_crc");
      }
      if (!named) continue;  // failed before its first rung
      ASSERT_TRUE(t.at("files").contains("checkpoint"));
      const std::string bytes = slurp(dir + "/" + t.at("files").at("checkpoint").get<std::string>());
      EXPECT_EQ(crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())), named);
    }
  }

  // Defined below kTinySweep, which it runs.
  void expect_cut_mid_rung_resumes_as_whole(const std::string& run_flags, const std::string& resume_flags);
  void expect_cut_and_resumed_as_whole(const std::string& sweep, const std::string& whole, const std::string& cut,
                                       const char* pieces = "5");

  static bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
  }

  const std::string quickstart_ = std::string(HFTA_SOURCE_DIR) + "/configs/quickstart.yaml";
  std::string dir_;
};

TEST_F(Cli, ValidateAcceptsTheQuickstart) {
  const Result r = run("validate " + quickstart_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("valid sweep 'quickstart-mlp'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hyperband"), std::string::npos);
}

TEST_F(Cli, ValidateJsonPrintsTheCanonicalSweep) {
  const Result r = run("validate --json " + quickstart_);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("name"), "quickstart-mlp");
  EXPECT_EQ(j.at("search").at("method"), "hyperband");
  EXPECT_TRUE(j.at("parameters").contains("lr"));
}

TEST_F(Cli, ValidateRejectsWithPathLineAndExitCode2) {
  const std::string yaml = hfta::test::sweep_yaml({{"search", "search:\n  method: hyperband\n  eta: 1\n"}});
  const std::string path = write_sweep("bad.yaml", yaml);
  const Result r = run("validate " + path);
  EXPECT_EQ(r.code, 2);
  const std::string where = path + ":" + std::to_string(hfta::test::line_of(yaml, "eta: 1")) + ":";
  EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("search.eta"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, ValidateRejectsAMissingFile) {
  const Result r = run("validate " + dir_ + "/missing.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos);
}

TEST_F(Cli, RunRejectsAnInvalidSweepAndWritesNothing) {
  const std::string path = write_sweep("bad.yaml", hfta::test::sweep_yaml({{"metric", ""}}));
  const Result r = run("run " + path + " --out " + dir_ + "/experiment");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("metric"), std::string::npos);
  EXPECT_FALSE(exists(dir_ + "/experiment"));
}

TEST_F(Cli, RunRejectsAnUnknownDevice) {
  const Result r = run("run " + quickstart_ + " --device tpu:0 --out " + dir_ + "/experiment");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("tpu:0"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir_ + "/experiment"));
}

// Option errors read as the verbs' own messages: the verb named, an unknown
// option named alone with the nearest the verb takes (CLI11 said "The
// following arguments were not expected: 1 --wrokers"), and where to look.
TEST_F(Cli, OptionErrorsNameTheVerbAndSuggestTheOption) {
  const Result typo = run("run sweep.yaml --wrokers 1");
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.err, "hfta-tune run: unknown option '--wrokers' (did you mean '--workers'?) (hfta-tune run --help)\n");
  const Result with_value = run("validate sweep.yaml --jsn=1");
  EXPECT_EQ(with_value.code, 2);
  EXPECT_EQ(with_value.err,
            "hfta-tune validate: unknown option '--jsn' (did you mean '--json'?) (hfta-tune validate --help)\n");
  const Result missing = run("validate");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "hfta-tune validate: a sweep file is required (hfta-tune validate --help)\n");
  // CLI11's other wordings, as ours read.
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"run s.yaml --out a --out b", "hfta-tune run: --out is given 2 times; give it once (hfta-tune run --help)"},
           {"export d --format", "hfta-tune export: --format needs a value (json or csv) (hfta-tune export --help)"},
           {"run s.yaml --workers", "hfta-tune run: --workers needs a value (a whole number) (hfta-tune run --help)"},
           {"run s.yaml --fusion maybe",
            "hfta-tune run: --fusion: 'maybe' is not one of auto or off (hfta-tune run --help)"},
           {"validate s.yaml t.yaml", "hfta-tune validate: unexpected argument t.yaml (hfta-tune validate --help)"},
           {"status", "hfta-tune status: an experiment directory is required (hfta-tune status --help)"},
           {"", "hfta-tune: a verb is required: validate, run, resume, plan, status or export (hfta-tune --help)"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, said + "\n") << args;
  }
  // `hfta-tune help VERB` is VERB --help.
  const Result help = run("help resume");
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, run("resume --help").out);
  EXPECT_NE(help.out.find("--keep-checkpoints"), std::string::npos) << help.out;
  EXPECT_EQ(run("help").out, run("--help").out);
  EXPECT_EQ(run("help nosuchverb").code, 2);
}

TEST_F(Cli, RunRejectsAnUnknownFusionMode) {
  EXPECT_EQ(run("run " + quickstart_ + " --fusion sometimes").code, 2);
}

// An environment variable set for a scope: the runs it starts see it.
struct ScopedEnv {
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) { setenv(name_.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name_.c_str()); }
  std::string name_;
};

using hfta::test::kTinySweep;

// kTinySweep at budgets of 60, 180 and 540 steps.
std::string long_tiny_sweep() {
  std::string text = kTinySweep;
  return text.replace(text.find("min: 10, max: 90"), 16, "min: 60, max: 540");
}

// kTinySweep at budgets of 60, 180 and 540 steps at batch 256 (196 steps an
// epoch: the rungs have mid-rung checkpoints every 50 steps, and evaluation
// points at 196 and 392, where the training-loss average restarts), run whole
// into dir_/whole, and into dir_/cut stopped right after its second mid-rung
// checkpoint, as if killed, then resumed: it continues a rung from its
// checkpoint and ends as the whole run.
void Cli::expect_cut_mid_rung_resumes_as_whole(const std::string& run_flags, const std::string& resume_flags) {
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "2", 1);
  const Result killed = run("run " + sweep + " --out " + dir_ + "/cut --checkpoint-every 0 " + run_flags);
  unsetenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS");
  ASSERT_EQ(killed.code, 9) << killed.err;
  const Result resumed = run("resume " + dir_ + "/cut --checkpoint-every 0 " + resume_flags);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  // Which trials had checkpointed where depends on the order the workers took the arrays in.
  EXPECT_TRUE(std::regex_search(resumed.out, std::regex("continues its rung from step [1-9]"))) << resumed.out;
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

// kTinySweep with four brackets (budgets 10 to 270 steps).
std::string longer_tiny_sweep() {
  std::string text = kTinySweep;
  return text.replace(text.find("max: 90"), 7, "max: 270");
}

TEST_F(Cli, RunRefusesAnOutThatIsAFile) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  std::ofstream(dir_ + "/afile") << "x";
  const Result r = run("run " + sweep + " --out " + dir_ + "/afile");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "hfta-tune run: cannot create --out " + dir_ + "/afile: it is a file, not a directory\n");
}

TEST_F(Cli, RunSaysADatasetThatIsNotInstalledBeforeWritingAnything) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  {
    const ScopedEnv elsewhere("HFTA_FASHION_MNIST_DIR", dir_ + "/no-such-dir");
    const Result r = run("run " + sweep + " --out " + dir_ + "/experiment");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("dataset-fashion-mnist"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("HFTA_FASHION_MNIST_DIR"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir_ + "/experiment"));
  }
  {
    const ScopedEnv elsewhere("HFTA_TEXT_CORPUS", dir_ + "/no-such-corpus");
    const Result r = run("run " + std::string(HFTA_SOURCE_DIR) + "/configs/transformer_lm.yaml --out " + dir_ + "/lm");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("fortunes"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir_ + "/lm"));
  }
  {
    // There, but too short to split into sequences of the sweep's seq_len (64).
    std::ofstream(dir_ + "/short.txt") << std::string(1000, 'a');
    const ScopedEnv elsewhere("HFTA_TEXT_CORPUS", dir_ + "/short.txt");
    const Result r = run("run " + std::string(HFTA_SOURCE_DIR) + "/configs/transformer_lm.yaml --out " + dir_ + "/lm");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("1000 characters are too few for 20 sequences of 64 (task.options.seq_len); nothing was "
                         "written"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(exists(dir_ + "/lm"));
  }
  {
    // There but damaged: found once the sweep has begun, before any rung, and said so.
    std::filesystem::create_directory(dir_ + "/damaged");
    for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                             "t10k-labels-idx1-ubyte.gz"}) {
      std::ofstream(dir_ + "/damaged/" + name) << "garbage\n";
    }
    const ScopedEnv elsewhere("HFTA_FASHION_MNIST_DIR", dir_ + "/damaged");
    const Result r = run("run " + sweep + " --out " + dir_ + "/on-damaged --workers 1");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("not an unsigned-byte IDX file (bad magic number) (no rung had finished; once this is "
                         "mended, hfta-tune resume " + dir_ + "/on-damaged starts the sweep)"),
              std::string::npos)
        << r.err;
  }
}

TEST_F(Cli, ResumeTrainsOnTheDeviceAndWorkersTheRunWasGivenUnlessGivenOthers) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  // Stopped at once, as a time limit that has passed stops a run (the hook above): each command prints where it trains, then stops.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/sweep";
  ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 0);
  auto recorded = [&] { return nlohmann::json::parse(slurp(dir + "/run.json")); };
  EXPECT_EQ(recorded().at("device"), "cpu");
  EXPECT_EQ(recorded().at("workers"), 1);
  const Result again = run("resume " + dir + "");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find(", 1 worker on cpu"), std::string::npos) << again.out;
  // A device the run was given and this machine lacks: refused before anything
  // is written, saying where it came from and how to move on.
  auto options = recorded();
  options["device"] = "cuda:99";
  std::ofstream(dir + "/run.json") << options.dump();
  const Result elsewhere = run("resume " + dir + "");
  EXPECT_EQ(elsewhere.code, 2);
  EXPECT_NE(elsewhere.err.find("the run's --device (run.json): device 'cuda:99'"), std::string::npos) << elsewhere.err;
  EXPECT_EQ(recorded().at("device"), "cuda:99");
  const Result told = run("status " + dir);
  EXPECT_NE(told.out.find("the run's --device cuda:99 is not here"), std::string::npos) << told.out;
  EXPECT_NE(told.out.find("continue with hfta-tune resume " + dir + " --device cpu"), std::string::npos) << told.out;
  // Given to resume, they replace the recorded ones, for later resumes too.
  const Result moved = run("resume " + dir + " --device cpu --workers 2 --threads 3");
  ASSERT_EQ(moved.code, 0) << moved.err;
  EXPECT_NE(moved.out.find(", 2 workers on cpu"), std::string::npos) << moved.out;
  EXPECT_EQ(recorded().at("device"), "cpu");
  EXPECT_EQ(recorded().at("workers"), 2);
  EXPECT_EQ(recorded().at("threads"), 3);
  EXPECT_EQ(moved.out.find("as the run that began the sweep did"), std::string::npos) << moved.out;  // asked for
  // A directory from before run.json recorded them trains on the CPU with the default workers.
  options = recorded();
  options.erase("device");
  options.erase("workers");
  std::ofstream(dir + "/run.json") << options.dump();
  const Result old = run("resume " + dir + "");
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_NE(old.out.find(" on cpu"), std::string::npos) << old.out;
  EXPECT_FALSE(recorded().contains("device"));
}

TEST_F(Cli, ResumeRefusesTrialsOfAnotherSweepsSeedEvenWithBothSweepFilesEdited) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/sweep";
  {
    const ScopedEnv first_piece("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 0);
  }
  ASSERT_TRUE(exists(dir + "/trials/0/trial.json"));
  // Each edit made in sweep.yaml and sweep.json alike, which resume compares.
  auto edit_both = [&](const std::string& from, const std::string& to) {
    std::string text = kTinySweep;
    text.replace(text.find(from), from.size(), to);
    std::ofstream(dir + "/sweep.yaml") << text;
    std::ofstream(dir + "/sweep.json") << run("validate --json " + write_sweep("edited.yaml", text)).out;
  };
  const std::string state = slurp(dir + "/state.json");
  edit_both("seed: 1", "seed: 2");
  Result r = run("resume " + dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/trials/0/trial.json holds seed "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the trials are of another sweep, or sweep.json was edited"), std::string::npos) << r.err;
  const Result told = run("status " + dir);  // not "continue with resume"
  EXPECT_NE(told.out.find("the trials are of another sweep, or sweep.json was edited, which resume refuses"),
            std::string::npos)
      << told.out;
  EXPECT_EQ(slurp(dir + "/state.json"), state);  // nothing written
  edit_both("seed: 1", "seed: 1");  // as run
  EXPECT_EQ(run("resume " + dir).code, 0);
}

// Flipped and cropped training images (the image models' flip and crop
// options, crop also a parameter): a fused run trains every trial as
// --fusion off does, and flipping changes every trial's numbers.
TEST_F(Cli, FlipsAndCropsTrainFusedAsAloneAndFlippingChangesEveryTrial) {
  const std::string augmented = R"(name: augmented
seed: 4
task: {model: cnn, batch_size: 32, validation_size: 500, options: {flip: true}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 10, max: 30}
search: {method: sha, trials: 4, eta: 3}
parameters:
  lr: {distribution: log_uniform, min: 0.01, max: 0.1}
  crop: {values: [2, 3]}
)";
  std::string plain = augmented;
  plain.replace(plain.find("flip: true"), 10, "flip: false");
  const std::string sweep = write_sweep("augmented.yaml", augmented);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/fused").code, 0);
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/fused");
  ASSERT_EQ(run("run " + write_sweep("plain.yaml", plain) + " --out " + dir_ + "/plain").code, 0);
  const auto with = results(dir_ + "/fused"), without = results(dir_ + "/plain");
  ASSERT_EQ(with.at("trials").size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& a = with.at("trials")[i];
    const auto& b = without.at("trials")[i];
    EXPECT_EQ(a.at("params").at("lr"), b.at("params").at("lr")) << i;  // the same draws...
    EXPECT_NE(a.at("history")[0].at("train_loss"), b.at("history")[0].at("train_loss")) << i;  // ...other batches
  }
}

TEST_F(Cli, RunTrainsASweepAndWritesResults) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const Result r = run("run " + sweep + " --out " + dir_ + "/fused");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("best trials"), std::string::npos) << r.out;
  {  // The table's columns line up, whatever the widths of ids, metrics and budgets.
    std::istringstream table(r.out.substr(r.out.find("best trials")));
    std::set<std::size_t> budget_at, brace_at;
    for (std::string line; std::getline(table, line);) {
      if (line.rfind("  trial ", 0) != 0) continue;
      budget_at.insert(line.find("  budget "));
      brace_at.insert(line.find("  {"));
    }
    EXPECT_EQ(budget_at.size(), 1u) << r.out;
    EXPECT_EQ(brace_at.size(), 1u) << r.out;
  }
  // The progress lines count the trials done training: none after the first
  // array (its trials go on to another rung), all of them after the last.
  EXPECT_NE(r.out.find("| trials done 0/17, results "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| trials done 17/17, results 22/22"), std::string::npos) << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/fused/results.json"));
  EXPECT_EQ(results.at("format"), 1);
  EXPECT_EQ(results.at("name"), "tiny");
  EXPECT_EQ(results.at("metric").at("goal"), "maximize");
  // Hyperband R=90, r=10, eta=3: brackets of 9, 5 and 3 trials.
  ASSERT_EQ(results.at("trials").size(), 17u);
  for (const auto& t : results.at("trials")) {
    EXPECT_TRUE(t.at("params").contains("lr"));
    EXPECT_EQ(t.at("status"), "completed");
    EXPECT_FALSE(t.at("history").empty());
    EXPECT_GT(t.at("metric").get<double>(), 0.3);  // it learned from the real data
    EXPECT_EQ(t.at("final"), t.at("history").back());  // every metric where it ended
    EXPECT_EQ(t.at("final").at("val_accuracy"), t.at("metric"));
  }
  EXPECT_TRUE(results.at("best").contains("id"));
  // The best trial's final model on the held-out test images, near its validation accuracy.
  const auto& test = results.at("best").at("test");
  EXPECT_NEAR(test.at("accuracy").get<double>(), results.at("best").at("metric").get<double>(), 0.05);
  EXPECT_GT(test.at("loss").get<double>(), 0);
  EXPECT_NE(r.out.find("on the test split"), std::string::npos) << r.out;
  EXPECT_TRUE(exists(dir_ + "/fused/sweep.json"));
  // state.json: every result the scheduler was told, in order (Hyperband here: 22
  // rung results of 17 trials), and the searcher's counts.
  const auto state = nlohmann::json::parse(slurp(dir_ + "/fused/state.json"));
  EXPECT_EQ(state.at("format"), 1);
  EXPECT_EQ(state.at("finished"), true);
  EXPECT_EQ(state.at("scheduler").at("method"), "hyperband");
  ASSERT_EQ(state.at("scheduler").at("results").size(), 22u);
  EXPECT_EQ(state.at("searcher").at("configurations"), 17);
  EXPECT_EQ(state.at("searcher").at("observations"), 22);
  EXPECT_EQ(state.at("random_streams").at("seed"), 1);
  std::map<std::int64_t, nlohmann::json> last;  // each trial's last result is where results.json leaves it
  for (const auto& told : state.at("scheduler").at("results")) last[told.at("trial")] = told;
  for (const auto& t : results.at("trials")) {
    EXPECT_EQ(last.at(t.at("id")).at("budget"), t.at("budget")) << t.at("id");
    EXPECT_EQ(last.at(t.at("id")).at("metric"), t.at("metric")) << t.at("id");
    EXPECT_EQ(last.at(t.at("id")).at("status"), "completed") << t.at("id");
  }
  {  // Parameter importance, of the results at the largest budget that 8 trials reached (30 steps here).
    std::map<double, int> at_budget;
    for (const auto& told : state.at("scheduler").at("results")) at_budget[told.at("budget").get<double>()]++;
    ASSERT_EQ(at_budget.at(30.0), 8);
    ASSERT_LT(at_budget.at(90.0), 8);
    const auto& importance = results.at("importance");
    EXPECT_EQ(importance.at("method"), "fanova");
    EXPECT_EQ(importance.at("budget"), 30.0);
    EXPECT_EQ(importance.at("results"), 8);
    ASSERT_EQ(importance.at("params").size(), 2u);
    std::set<std::string> names;
    double sum = 0;
    for (const auto& p : importance.at("params")) {
      names.insert(p.at("name").get<std::string>());
      sum += p.at("importance").get<double>();
    }
    EXPECT_EQ(names, (std::set<std::string>{"lr", "momentum"}));
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_GE(importance.at("params")[0].at("importance"), importance.at("params")[1].at("importance"));  // largest first
    EXPECT_NE(r.out.find("parameter importance (fANOVA of val_accuracy at 30 steps, 8 trials): " +
                         importance.at("params")[0].at("name").get<std::string>() + " "),
              std::string::npos)
        << r.out;
  }

  // --fusion off trains each trial alone with the same math: the same metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  const auto alone = nlohmann::json::parse(slurp(dir_ + "/alone/results.json"));
  std::map<int, double> fused_metric;
  for (const auto& t : results.at("trials")) fused_metric[t.at("id")] = t.at("metric");
  for (const auto& t : alone.at("trials")) {
    EXPECT_NEAR(t.at("metric").get<double>(), fused_metric.at(t.at("id")), 1e-6) << t.at("id");
  }
  EXPECT_EQ(alone.at("best").at("id"), results.at("best").at("id"));

  // A finished experiment directory is not overwritten.
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/fused").code, 2);

  // status and export read the finished directory.
  const Result status = run("status " + dir_ + "/fused");
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("finished, 17 trials (17 completed)"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("parameter importance (fANOVA of val_accuracy at 30 steps, 8 trials): "), std::string::npos)
      << status.out;
  const Result csv = run("export " + dir_ + "/fused --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("id,status,budget,metric,seed,lr,momentum,best,weights,state_dict,error,checkpoint,"
                          "final_step,final_train_loss,final_val_accuracy,final_val_loss,model_params,"
                          "final_val_balanced_accuracy,final_val_f1\n", 0),
            0u)
      << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 18);
  EXPECT_NE(csv.out.find(",true,trials/"), std::string::npos);  // the best trial is marked
  {  // the first trial's row: its checkpoint and final metrics, as results.json has them
    const auto& t = results.at("trials")[0];
    const auto& f = t.at("final");
    const std::string row_end = "," + t.at("files").at("checkpoint").get<std::string>() + "," + f.at("step").dump() +
                                "," + f.at("train_loss").dump() + "," + f.at("val_accuracy").dump() + "," +
                                f.at("val_loss").dump() + "," + t.at("model_params").dump() + "," +
                                f.at("val_balanced_accuracy").dump() + "," + f.at("val_f1").dump() + "\n";
    // Its size: the MLP 784-32-10's weights and biases, as the exported model holds them.
    EXPECT_EQ(t.at("model_params"), 784 * 32 + 32 + 32 * 10 + 10);
    const std::string second_line = csv.out.substr(csv.out.find('\n') + 1);
    EXPECT_EQ(second_line.rfind("0,", 0), 0u) << second_line;
    EXPECT_NE(second_line.substr(0, second_line.find('\n') + 1).find(row_end), std::string::npos) << second_line << row_end;
  }
  // Each trial's history also as JSON lines: the same evaluations, one a line.
  for (const auto& t : results.at("trials")) {
    std::istringstream lines(slurp(dir_ + "/fused/trials/" + t.at("id").dump() + "/history.jsonl"));
    nlohmann::json history = nlohmann::json::array();
    for (std::string line; std::getline(lines, line);) history.push_back(nlohmann::json::parse(line));
    EXPECT_EQ(history, t.at("history")) << t.at("id");
  }
  // Every trial's weights are exported for C++ and Python.
  for (const auto& t : results.at("trials")) {
    for (const char* f : {"checkpoint", "weights", "state_dict"}) {
      EXPECT_TRUE(exists(dir_ + "/fused/" + t.at("files").at(f).get<std::string>())) << t.at("id") << " " << f;
    }
  }
  ASSERT_EQ(run("export " + dir_ + "/fused --output " + dir_ + "/export.json").code, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/export.json")), results);
  // Without --format, a file named *.csv gets CSV; --format decides over the name.
  ASSERT_EQ(run("export " + dir_ + "/fused --output " + dir_ + "/export.CSV").code, 0);
  EXPECT_EQ(slurp(dir_ + "/export.CSV"), csv.out);
  ASSERT_EQ(run("export " + dir_ + "/fused --format json --output " + dir_ + "/json.csv").code, 0);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/json.csv")), results);
  // "-" is standard output; a link is written through, a pipe or device written to, never replaced.
  EXPECT_EQ(nlohmann::json::parse(run("export " + dir_ + "/fused --output -").out), results);
  ::symlink((dir_ + "/export.json").c_str(), (dir_ + "/link.json").c_str());
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/link.json").code, 0);
  struct stat link {};
  ASSERT_EQ(::lstat((dir_ + "/link.json").c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_EQ(slurp(dir_ + "/export.json").rfind("id,status", 0), 0u);
  // A link to a file not there yet (relative to the link's folder) makes that file.
  ::symlink("made.csv", (dir_ + "/dangling.csv").c_str());
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/dangling.csv").code, 0);
  ASSERT_EQ(::lstat((dir_ + "/dangling.csv").c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_EQ(slurp(dir_ + "/made.csv").rfind("id,status", 0), 0u);
  EXPECT_EQ(run("export " + dir_ + "/fused --output /dev/null").code, 0);
  // What export, status, plan and validate print is their product: standard
  // output that cannot be written (`> file` on a full disk) fails them, where
  // they said nothing and exited 0.
  for (const std::string args : {"export " + dir_ + "/fused", "export " + dir_ + "/fused --format csv",
                                 "status " + dir_ + "/fused", "validate " + sweep, "plan " + sweep,
                                 std::string("--help"), std::string("--version"), std::string("help run")}) {
    SCOPED_TRACE(args);
    const int code = std::system((std::string(HFTA_TUNE_BINARY) + " " + args + " >/dev/full 2>" + dir_ + "/full.err").c_str());
    EXPECT_TRUE(WIFEXITED(code) && WEXITSTATUS(code) == 1) << code;
    EXPECT_NE(slurp(dir_ + "/full.err").find("cannot write standard output: No space left on device"), std::string::npos)
        << slurp(dir_ + "/full.err");
  }
  struct stat null {};
  ASSERT_EQ(::stat("/dev/null", &null), 0);
  EXPECT_TRUE(S_ISCHR(null.st_mode));
  EXPECT_EQ(run("export " + dir_ + "/nowhere").code, 2);
  EXPECT_EQ(run("status " + dir_ + "/nowhere").code, 2);
  // Never over the experiment's own files (through a path or a link), nor into
  // a folder that is not there; a file of the user's own name inside is fine.
  const std::string before = slurp(dir_ + "/fused/results.json");
  ::symlink((dir_ + "/fused/sweep.json").c_str(), (dir_ + "/to-sweep.json").c_str());
  ::symlink((dir_ + "/fused/results.json.tmp").c_str(), (dir_ + "/dangling-own.csv").c_str());  // not there yet
  for (const std::string& own : {dir_ + "/fused/results.json", dir_ + "/fused/../fused/state.json",
                                 dir_ + "/fused/trials/0/trial.json", dir_ + "/to-sweep.json",
                                 dir_ + "/dangling-own.csv"}) {
    const Result refused = run("export " + dir_ + "/fused --format csv --output " + own);
    EXPECT_EQ(refused.code, 2) << own;
    EXPECT_NE(refused.err.find("which hfta-tune reads; name another file"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(slurp(dir_ + "/fused/results.json"), before);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/fused/sweep.json")).is_object(), true);
  const Result no_folder = run("export " + dir_ + "/fused --output " + dir_ + "/not-there/x.csv");
  EXPECT_EQ(no_folder.code, 2);
  EXPECT_NE(no_folder.err.find(dir_ + "/not-there does not exist"), std::string::npos) << no_folder.err;
  // A file where the folder goes, or a link loop, is named for what it is.
  const Result under_file = run("export " + dir_ + "/fused --output " + dir_ + "/fused/results.json/x.csv");
  EXPECT_EQ(under_file.code, 2);
  EXPECT_NE(under_file.err.find("results.json is a file, not a folder"), std::string::npos) << under_file.err;
  ::symlink((dir_ + "/loop").c_str(), (dir_ + "/loop").c_str());
  const Result in_loop = run("export " + dir_ + "/fused --output " + dir_ + "/loop/x.csv");
  EXPECT_EQ(in_loop.code, 2);
  EXPECT_NE(in_loop.err.find("loop cannot be read: Too many levels of symbolic links"), std::string::npos)
      << in_loop.err;
  const Result status_loop = run("status " + dir_ + "/loop");
  EXPECT_EQ(status_loop.code, 2);
  EXPECT_NE(status_loop.err.find("cannot be read: Too many levels"), std::string::npos) << status_loop.err;
  // A sweep file given where the experiment goes: run is what takes it.
  const std::string sweep_file = write_sweep("given.yaml", kTinySweep);
  const Result status_file = run("status " + sweep_file);
  EXPECT_EQ(status_file.code, 2);
  EXPECT_NE(status_file.err.find("is a file, not a folder; to start the sweep it holds: hfta-tune run " + sweep_file +
                                 " --out DIR"),
            std::string::npos)
      << status_file.err;
  ASSERT_EQ(run("export " + dir_ + "/fused --format csv --output " + dir_ + "/fused/mine.csv").code, 0);
  EXPECT_EQ(slurp(dir_ + "/fused/mine.csv").rfind("id,status", 0), 0u);
}

TEST_F(Cli, ResumeSaysWhichResultsOfStateJsonTrialsLost) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/lost").code, 0);
  // A trial's directory is gone (its results with it): resume says so, trains it again, and ends as before.
  std::filesystem::remove_all(dir_ + "/lost/trials/4");
  std::remove((dir_ + "/lost/results.json").c_str());
  const Result resumed = run("resume " + dir_ + "/lost");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("rung result(s) that trials/ no longer holds (trial 4 at 10"), std::string::npos)
      << resumed.out;
  expect_same_results(dir_ + "/lost", dir_ + "/whole");
  // A damaged state.json is rebuilt from trials/.
  std::ofstream(dir_ + "/lost/state.json") << "{\"format\": 1, \"sched";
  std::remove((dir_ + "/lost/results.json").c_str());
  const Result rebuilt = run("resume " + dir_ + "/lost");
  ASSERT_EQ(rebuilt.code, 0) << rebuilt.err;
  EXPECT_NE(rebuilt.out.find("state.json is damaged: rebuilt from trials/"), std::string::npos) << rebuilt.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/lost/state.json")).at("scheduler").at("results").size(), 22u);
  expect_same_results(dir_ + "/lost", dir_ + "/whole");
  // So is valid JSON of another shape.
  std::ofstream(dir_ + "/lost/state.json") << R"({"scheduler": {"results": [1, {"trial": "4"}]}})";
  std::remove((dir_ + "/lost/results.json").c_str());
  const Result reshaped = run("resume " + dir_ + "/lost");
  ASSERT_EQ(reshaped.code, 0) << reshaped.err;
  EXPECT_NE(reshaped.out.find("state.json is damaged: rebuilt from trials/"), std::string::npos) << reshaped.out;
  expect_same_results(dir_ + "/lost", dir_ + "/whole");
}

TEST_F(Cli, RunRefusesWhatTheTrainerCannotTrainYetAndWritesNothing) {
  // The number of points shapes the dataset every model of the sweep shares.
  const std::string points = write_sweep(
      "points.yaml", hfta::test::sweep_yaml({{"task", "task:\n  model: pointnet\n"},
                                             {"parameters", "parameters:\n  points: {values: [64, 128], fuse: false}\n"}}));
  const Result t = run("run " + points + " --out " + dir_ + "/points");
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.err.find("parameters.points"), std::string::npos) << t.err;
  EXPECT_FALSE(exists(dir_ + "/points"));
}

const char* kTinyLanguageModel = R"(name: tiny-lm
task: {model: transformer_lm, batch_size: 16, options: {d_model: 32, heads: 2, layers: 1, ff: 64, seq_len: 32}}
metric: {name: val_perplexity, goal: minimize}
budget: {unit: steps, min: 20, max: 60}
search: {method: sha, trials: 3, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {values: [0.003, 0.001, 0.0003]}
  dropout: {value: 0.1}
)";

TEST_F(Cli, LanguageModelSweepRecordsPerplexity) {
  const std::string sweep = write_sweep("lm.yaml", kTinyLanguageModel);
  const Result r = run("run " + sweep + " --out " + dir_ + "/lm");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/lm/results.json"));
  ASSERT_EQ(results.at("trials").size(), 3u);
  for (const auto& t : results.at("trials")) {
    const auto& last = t.at("history").back();
    EXPECT_NEAR(last.at("val_perplexity").get<double>(), std::exp(last.at("val_loss").get<double>()), 1e-9);
    EXPECT_EQ(t.at("metric"), last.at("val_perplexity"));
  }
  // It learned: an untrained model's perplexity is about the vocabulary's size (about 114).
  EXPECT_LT(results.at("best").at("metric").get<double>(), 30);
  const auto& test = results.at("best").at("test");
  EXPECT_NEAR(test.at("perplexity").get<double>(), std::exp(test.at("loss").get<double>()), 1e-9);
  EXPECT_LT(test.at("perplexity").get<double>(), 30);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("on the test split: loss [0-9.]+, accuracy [0-9.]+, perplexity [0-9.]+")))
      << r.out;

  // The sequence length shapes the dataset every model of the sweep shares.
  std::string per_trial = kTinyLanguageModel;
  per_trial += "  seq_len: {values: [16, 32], fuse: false}\n";
  const Result refused = run("run " + write_sweep("lm2.yaml", per_trial) + " --out " + dir_ + "/lm2");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("parameters.seq_len"), std::string::npos) << refused.err;
}

const char* kTinyGan = R"(name: tiny-gan
seed: 2
task: {model: dcgan, batch_size: 32, options: {nz: 8, ngf: 4, ndf: 4}}
metric: {name: val_fid, goal: minimize}
budget: {unit: steps, min: 10, max: 30}
search: {method: sha, trials: 3, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {values: [0.002, 0.0005, 0.0001]}
  beta1: {value: 0.5}
)";

TEST_F(Cli, GanSweepRecordsFidAndTrainsEachTrialAsAlone) {
  const Result gan = run("run " + write_sweep("gan.yaml", kTinyGan) + " --out " + dir_ + "/gan");
  ASSERT_EQ(gan.code, 0) << gan.err;
  EXPECT_TRUE(std::regex_search(gan.out, std::regex("on the test split: FID [0-9.]+ \\(the discriminator's loss [0-9.]+, "
                                                    "accuracy [0-9.]+\\)")))
      << gan.out;
  EXPECT_NE(run("status " + dir_ + "/gan").out.find("on the test split: FID "), std::string::npos);
  const Result alone = run("run " + write_sweep("gan.yaml", kTinyGan) + " --fusion off --out " + dir_ + "/alone");
  ASSERT_EQ(alone.code, 0) << alone.err;
  const auto fused = nlohmann::json::parse(slurp(dir_ + "/gan/results.json"));
  const auto one = nlohmann::json::parse(slurp(dir_ + "/alone/results.json"));
  ASSERT_EQ(fused.at("trials").size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& t = fused.at("trials")[i];
    const auto& last = t.at("history").back();
    EXPECT_EQ(t.at("metric"), last.at("val_fid"));
    EXPECT_GT(last.at("d_loss").get<double>(), 0);
    EXPECT_EQ(last.at("g_loss"), last.at("train_loss"));  // the metric's name for the generator's loss
    // Bit for bit, whatever arrays the probe chose.
    EXPECT_EQ(one.at("trials")[i].at("history"), t.at("history")) << i;
    EXPECT_EQ(one.at("trials")[i].at("metric"), t.at("metric")) << i;
  }
  EXPECT_EQ(one.at("best").at("id"), fused.at("best").at("id"));
  EXPECT_GT(fused.at("best").at("test").at("fid").get<double>(), 0);
  // Array sizes were recorded for the fusion key (throughput.json, which resume packs by).
  EXPECT_TRUE(exists(dir_ + "/gan/throughput.json"));
}

TEST_F(Cli, BatchesPreparedAheadGiveTheSameResults) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const Result in_place = run("run " + sweep + " --out " + dir_ + "/in-place");
  const Result ahead = run("run " + sweep + " --out " + dir_ + "/ahead --prefetch 3");
  ASSERT_EQ(in_place.code, 0) << in_place.err;
  ASSERT_EQ(ahead.code, 0) << ahead.err;
  EXPECT_EQ(in_place.out.find("prepared"), std::string::npos) << in_place.out;  // none on the CPU by default
  EXPECT_NE(ahead.out.find("batches for cpu prepared 3 ahead by a background thread"), std::string::npos) << ahead.out;
  expect_same_results(dir_ + "/ahead", dir_ + "/in-place");
  // Cut mid-rung, then resumed with another count: the resumed trials seek to their checkpoints' steps.
  ASSERT_NO_FATAL_FAILURE(expect_cut_mid_rung_resumes_as_whole("--prefetch 3", "--prefetch 1"));
  // Token sequences (labels [N, T]) and a GAN's images: the same too. Trials
  // alone: a GAN's convolutions and batch norms round differently at
  // different array sizes, and prefetching is what is compared.
  for (const auto& [name, text] : {std::pair{"lm", kTinyLanguageModel}, std::pair{"gan", kTinyGan}}) {
    SCOPED_TRACE(name);
    const std::string file = write_sweep(std::string(name) + ".yaml", text);
    ASSERT_EQ(run("run " + file + " --fusion off --out " + dir_ + "/" + name).code, 0);
    ASSERT_EQ(run("run " + file + " --fusion off --prefetch 2 --out " + dir_ + "/" + name + "-ahead").code, 0);
    expect_same_results(dir_ + "/" + name + "-ahead", dir_ + "/" + name);
  }
}

TEST_F(Cli, TinyBudgetsOtherOptimizersAndLabelSmoothingTrain) {
  const std::string sweep = write_sweep("samples.yaml", R"(name: samples
task: {model: mlp, batch_size: 64, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: samples, min: 32, max: 288}
search: {method: sha, trials: 3, eta: 3}
parameters:
  lr: {values: [0.01, 0.001, 0.005]}
  optimizer: {value: rmsprop}
  label_smoothing: {value: 0.1}
  schedule: {values: [cosine, plateau, multistep]}
  milestones: {value: "0.3,0.6"}
  grad_clip: {value: 1.0}
)");
  const Result r = run("run " + sweep + " --out " + dir_ + "/samples");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/samples/results.json"));
  EXPECT_EQ(results.at("trials").size(), 3u);
  EXPECT_EQ(results.at("metric").at("goal"), "minimize");
}

TEST_F(Cli, MultiStepKeepsTheFullLearningRateUntilItsFirstMilestone) {
  // One trial (the same seed, data and initial weights in each sweep),
  // evaluated at 40 and 120 steps: before the first milestone (60 or 108
  // steps of 120) it trains as at a constant rate, after it at a tenth of the rate.
  const std::string base = R"(name: multistep
seed: 4
task: {model: mlp, batch_size: 64, validation_size: 500, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 40, max: 120}
search: {method: sha, trials: 1, eta: 3}
parameters:
  lr: {value: 0.05}
)";
  auto history = [&](const std::string& name, const std::string& schedule) {
    const Result r = run("run " + write_sweep(name + ".yaml", base + schedule) + " --out " + dir_ + "/" + name);
    EXPECT_EQ(r.code, 0) << r.err;
    return results(dir_ + "/" + name).at("trials")[0].at("history");
  };
  const auto constant = history("constant", "");
  const std::string multistep = "  schedule: {value: multistep}\n  gamma: {value: 0.1}\n";
  const auto early = history("early", multistep + "  milestones: {value: \"0.5,0.75\"}\n");
  const auto late = history("late", multistep + "  milestones: {value: [0.9, 0.95]}\n");  // as MultiStepLR's
  EXPECT_EQ(history("late-text", multistep + "  milestones: {value: \"0.9,0.95\"}\n"), late);
  ASSERT_EQ(constant.size(), 2u);
  ASSERT_EQ(early.size(), 2u);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(early[0], constant[0]);
  EXPECT_EQ(late[0], constant[0]);
  EXPECT_NE(early[1].at("train_loss"), constant[1].at("train_loss"));
  EXPECT_NE(late[1].at("train_loss"), early[1].at("train_loss"));
}

TEST_F(Cli, EpsReachesAdagradAndAdadeltaAndDefaultsToPyTorchs) {
  // The same trial (seed, data, initial weights) with eps unset, set to
  // PyTorch's default for its optimizer, and set far from it.
  for (const auto& [optimizer, pytorch_eps] : std::vector<std::pair<std::string, std::string>>{
           {"adagrad", "1.0e-10"}, {"adadelta", "1.0e-6"}}) {
    SCOPED_TRACE(optimizer);
    auto history = [&](const std::string& name, const std::string& eps) {
      const std::string sweep = "name: eps\nseed: 5\ntask: {model: mlp, batch_size: 64, validation_size: 500, "
                                "options: {depth: 1, width: 8}}\nmetric: {name: val_loss, goal: minimize}\n"
                                "budget: {unit: steps, max: 40}\nsearch: {method: random, trials: 1}\n"
                                "parameters:\n  optimizer: {value: " + optimizer + "}\n  lr: {value: 0.5}\n" + eps;
      const Result r = run("run " + write_sweep(name + ".yaml", sweep) + " --out " + dir_ + "/" + name);
      EXPECT_EQ(r.code, 0) << r.err;
      return results(dir_ + "/" + name).at("trials")[0].at("history");
    };
    const auto unset = history(optimizer + "-unset", "");
    EXPECT_EQ(history(optimizer + "-default", "  eps: {value: " + pytorch_eps + "}\n"), unset);
    EXPECT_NE(history(optimizer + "-large", "  eps: {value: 1.0}\n"), unset);
  }
}

TEST_F(Cli, ResumeAfterAKillRetrainsNothingFinishedAndMatchesAnUninterruptedRun) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  // Simulate a kill after the first rungs: keep the trials' files, drop the rest.
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cut").code, 0);
  std::remove((dir_ + "/cut/results.json").c_str());
  const auto all = nlohmann::json::parse(slurp(dir_ + "/whole/results.json"));
  int removed = 0;
  for (const auto& t : all.at("trials")) {
    if (t.at("budget").get<double>() > 30) {  // trials that reached the top rung lose everything
      std::system(("rm -rf '" + dir_ + "/cut/trials/" + std::to_string(t.at("id").get<int>()) + "'").c_str());
      ++removed;
    }
  }
  ASSERT_GT(removed, 0);
  EXPECT_NE(run("status " + dir_ + "/cut").out.find("not running"), std::string::npos);
  const Result resumed = run("resume " + dir_ + "/cut");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resuming:"), std::string::npos) << resumed.out;
  const auto again = nlohmann::json::parse(slurp(dir_ + "/cut/results.json"));
  ASSERT_EQ(again.at("trials").size(), all.at("trials").size());
  for (std::size_t i = 0; i < all.at("trials").size(); ++i) {
    EXPECT_EQ(again.at("trials")[i].at("metric"), all.at("trials")[i].at("metric")) << i;
  }
  // A corrupt checkpoint is detected and its trial trained again.
  std::remove((dir_ + "/cut/results.json").c_str());
  std::system(("truncate -s 100 '" + dir_ + "/cut/trials/0/checkpoint.pt'").c_str());
  std::system(("rm -rf '" + dir_ + "/cut/trials/1'").c_str());
  // And a trial.json damaged from outside is named, and its trial trained again.
  std::ofstream(dir_ + "/cut/trials/2/trial.json") << "{\"id\": ";
  for (const std::string verb : {"status", "export"}) {  // which say it is left out of what they show
    const Result told = run(verb + " " + dir_ + "/cut");
    EXPECT_EQ(told.code, 0) << told.err;
    EXPECT_NE(told.err.find("hfta-tune " + verb + ": " + dir_ + "/cut/trials/2/trial.json cannot be read"),
              std::string::npos)
        << told.err;
    EXPECT_NE(told.err.find("left out here"), std::string::npos) << told.err;
  }
  const Result repaired = run("resume " + dir_ + "/cut");
  EXPECT_EQ(repaired.code, 0) << repaired.err;
  EXPECT_NE(repaired.out.find("trials/2/trial.json cannot be read"), std::string::npos) << repaired.out;
  const auto mended = nlohmann::json::parse(slurp(dir_ + "/cut/results.json"));
  for (std::size_t i = 0; i < all.at("trials").size(); ++i) {
    EXPECT_EQ(mended.at("trials")[i].at("history"), all.at("trials")[i].at("history")) << i;
  }
  // An edited sweep is refused, naming the key.
  std::remove((dir_ + "/cut/results.json").c_str());
  std::ofstream(dir_ + "/cut/sweep.yaml") << std::string(kTinySweep).replace(std::string(kTinySweep).find("eta: 3"), 6, "eta: 2");
  const Result edited = run("resume " + dir_ + "/cut");
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("search.eta"), std::string::npos) << edited.err;
  // status says so, rather than to resume.
  const Result told = run("status " + dir_ + "/cut");
  EXPECT_EQ(told.code, 0) << told.err;
  EXPECT_NE(told.out.find("/cut/sweep.yaml was edited in what would change its trials (search.eta), which resume "
                          "refuses: restore it, then continue with hfta-tune resume"),
            std::string::npos)
      << told.out;
  std::ofstream(dir_ + "/cut/sweep.yaml") << "name: [";
  EXPECT_NE(run("status " + dir_ + "/cut").out.find("/cut/sweep.yaml does not load (hfta-tune validate "),
            std::string::npos);
  const std::string run_json = slurp(dir_ + "/cut/run.json");
  for (const char* damaged : {"[", R"({"seed_given": 1})", R"({"fusion": "sometimes"})", R"({"device": 0})",
                              R"({"workers": -1})"}) {  // JSON, or not as run wrote it
    std::ofstream(dir_ + "/cut/run.json") << damaged;
    EXPECT_NE(run("status " + dir_ + "/cut").out.find("/cut/run.json is damaged"), std::string::npos) << damaged;
    const Result refused = run("resume " + dir_ + "/cut");
    EXPECT_EQ(refused.code, 2) << damaged;
    EXPECT_NE(refused.err.find("/cut/run.json is damaged"), std::string::npos) << refused.err;
  }
  std::ofstream(dir_ + "/cut/run.json") << run_json;
  // So is an edited seed, when run was not given --seed.
  std::ofstream(dir_ + "/cut/sweep.yaml") << std::string(kTinySweep).replace(std::string(kTinySweep).find("seed: 1"), 7, "seed: 5");
  const Result reseeded = run("resume " + dir_ + "/cut");
  EXPECT_EQ(reseeded.code, 2);
  EXPECT_NE(reseeded.err.find("seed"), std::string::npos) << reseeded.err;
  // The fusion section changes how trials are packed, not their numbers, and the
  // name what the results are called: both taken, and recorded.
  // (The first bracket's nine trials are lost, so they train again, at most two an array.)
  std::ofstream(dir_ + "/cut/sweep.yaml")
      << std::string(kTinySweep).replace(std::string(kTinySweep).find("name: tiny"), 10, "name: tiny-renamed")
      << "fusion: {max_array: 2}\n";
  std::remove((dir_ + "/cut/results.json").c_str());
  for (int id = 0; id < 9; ++id) std::filesystem::remove_all(dir_ + "/cut/trials/" + std::to_string(id));
  EXPECT_EQ(run("resume " + dir_ + "/cut --device cuda:0").code, 2);  // refused before sweep.json is rewritten
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/cut/sweep.json")).at("fusion").at("max_array"), 64);
  const Result repacked = run("resume " + dir_ + "/cut");
  ASSERT_EQ(repacked.code, 0) << repacked.err;
  EXPECT_NE(repacked.out.find("sweep.yaml's fusion.max_array changed"), std::string::npos) << repacked.out;
  EXPECT_NE(repacked.out.find("sweep.yaml's name changed: the results are named 'tiny-renamed' now"),
            std::string::npos)
      << repacked.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/cut/results.json")).at("name"), "tiny-renamed");
  EXPECT_NE(repacked.out.find("array of 2 trial(s)"), std::string::npos) << repacked.out;
  EXPECT_FALSE(std::regex_search(repacked.out, std::regex("array of ([3-9]|[1-9][0-9]+) trial"))) << repacked.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/cut/sweep.json")).at("fusion").at("max_array"), 2);
  const auto packed = nlohmann::json::parse(slurp(dir_ + "/cut/results.json"));
  for (std::size_t i = 0; i < all.at("trials").size(); ++i) {
    EXPECT_EQ(packed.at("trials")[i].at("history"), all.at("trials")[i].at("history")) << i;
  }
}

// `run` into a directory that holds an unfinished sweep points to resume,
// which continues the sweep recorded there: said so where this file is another.
TEST_F(Cli, RunIntoAnUnfinishedSweepSaysWhetherResumeContinuesThisOne) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/stopped";
  {
    const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // it stops as it starts: unfinished
    ASSERT_EQ(run("run " + sweep + " --out " + dir + "").code, 0);
  }
  // Its CSV snapshot, before any trial trained, has the parameters' columns as the final export will.
  const Result csv = run("export " + dir + " --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("id,status,budget,metric,seed,lr,momentum,best,weights,state_dict,error,checkpoint", 0), 0u)
      << csv.out;
  const Result same = run("run " + sweep + " --out " + dir);
  EXPECT_EQ(same.code, 2);
  EXPECT_EQ(same.err, "hfta-tune run: " + dir + " already holds this sweep, unfinished; continue it with hfta-tune "
                      "resume " + dir + ", or choose another --out\n");
  std::string text = kTinySweep;
  const std::string other = write_sweep("other.yaml", text.replace(text.find("eta: 3"), 6, "eta: 2"));
  const Result another = run("run " + other + " --out " + dir);
  EXPECT_EQ(another.code, 2);
  EXPECT_EQ(another.err, "hfta-tune run: " + dir + " already holds another sweep, 'tiny' (this file differs in "
                         "search.eta (3 -> 2)); hfta-tune resume " + dir + " continues that one; give this one another "
                         "--out\n");
}

TEST_F(Cli, ADamagedResultsJsonIsNamedAndWrittenAgain) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const std::string dir = dir_ + "/done";
  ASSERT_EQ(run("run " + sweep + " --out " + dir).code, 0);
  const auto whole = nlohmann::json::parse(slurp(dir + "/results.json"));
  EXPECT_EQ(whole.at("finished"), true);
  const Result again = run("run " + sweep + " --out " + dir);
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("already holds a finished sweep"), std::string::npos) << again.err;
  // Valid JSON with a field edited to another type is as damaged as a truncated file.
  auto edited = [&](const char* key, const nlohmann::json& value) {
    auto j = whole;
    (std::string(key) == "lr" ? j["trials"][0]["params"]["lr"] : j["trials"][0][key]) = value;
    return j.dump();
  };
  for (const std::string damage : {std::string("{\"format\": 1, \"trials\": "), std::string("[]"),
                                   std::string("{\"format\": 2}"), edited("id", "a"), edited("metric", "x"),
                                   edited("seed", -5), edited("history", "x"), edited("lr", {1, 2})}) {
    SCOPED_TRACE(damage.substr(0, 200));
    std::ofstream(dir + "/results.json") << damage;
    for (const char* verb : {"status ", "export "}) {
      const Result r = run(verb + dir);
      EXPECT_EQ(r.code, 1) << verb;
      EXPECT_NE(r.err.find(dir + "/results.json is damaged"), std::string::npos) << verb << r.err;
    }
  }
  const Result resumed = run("resume " + dir);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("results.json is damaged (not results of format 1); writing it again"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/results.json")), whole);
  // Without results.json (a sweep running or interrupted), export writes the trials so far.
  std::remove((dir + "/results.json").c_str());
  const Result partial = run("export " + dir);
  ASSERT_EQ(partial.code, 0) << partial.err;
  EXPECT_NE(partial.err.find("has not finished"), std::string::npos) << partial.err;
  const auto so_far = nlohmann::json::parse(partial.out);
  EXPECT_EQ(so_far.at("finished"), false);
  ASSERT_EQ(so_far.at("trials").size(), whole.at("trials").size());
  for (std::size_t i = 0; i < whole.at("trials").size(); ++i) {
    for (const char* key : {"id", "params", "seed", "status", "budget", "metric", "history", "files"}) {
      EXPECT_EQ(so_far.at("trials")[i].at(key), whole.at("trials")[i].at(key)) << i << " " << key;
    }
  }
  auto best = whole.at("best");
  best.erase("test");  // evaluated at the end only
  EXPECT_EQ(so_far.at("best"), best);
  EXPECT_EQ(run("export " + dir + " --format csv").code, 0);
  {  // One inside a later rung, with an evaluation made there: exported where its metric is from.
    auto t = nlohmann::json::parse(slurp(dir + "/trials/1/trial.json"));
    auto mid = t.at("history").back();
    mid["step"] = t.at("rungs").back().at("steps").get<std::int64_t>() + 7;
    mid["val_accuracy"] = 0.01;
    t["history"].push_back(mid);
    std::ofstream(dir + "/trials/1/trial.json") << t.dump();
    const auto exported = nlohmann::json::parse(run("export " + dir).out);
    const auto& one = exported.at("trials")[1];
    EXPECT_EQ(one.at("history"), whole.at("trials")[1].at("history"));
    EXPECT_EQ(one.at("final").at("val_accuracy"), one.at("metric"));
    // The evaluation inside the rung is shown apart, judged by nothing.
    EXPECT_EQ(one.at("in_rung"), nlohmann::json::array({mid}));
    EXPECT_FALSE(exported.at("trials")[2].contains("in_rung"));
    const std::string csv = run("export " + dir + " --format csv").out;
    EXPECT_EQ(csv.find("in_rung"), std::string::npos) << csv;  // (the CSV has the rung results alone)
    const Result status = run("status " + dir);
    EXPECT_NE(status.out.find("; inside rungs, 1 evaluation so far, the best val_accuracy 0.01 (trial 1 at step " +
                              mid.at("step").dump() + ")"),
              std::string::npos)
        << status.out;
  }
  // A trial inside its first rung has measured nothing: running, and never the best.
  auto trial = nlohmann::json::parse(slurp(dir + "/trials/0/trial.json"));
  trial["rungs"] = nlohmann::json::array();
  trial["history"] = nlohmann::json::array();
  std::ofstream(dir + "/trials/0/trial.json") << trial.dump();
  const std::string minimized = std::regex_replace(slurp(dir + "/sweep.json"), std::regex("\"maximize\""), "\"minimize\"");
  std::ofstream(dir + "/sweep.json") << minimized;
  const auto running = nlohmann::json::parse(run("export " + dir).out);
  EXPECT_EQ(running.at("trials")[0].at("status"), "running");
  EXPECT_TRUE(running.at("trials")[0].at("metric").is_null());
  EXPECT_NE(running.at("best").at("id"), 0);
  // results.json as a directory: resume refuses it before replaying anything.
  std::filesystem::create_directory(dir + "/results.json");
  const Result refused = run("resume " + dir);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("results.json is damaged (not a file); remove it"), std::string::npos) << refused.err;
}

TEST_F(Cli, StatusSeesTheLockWithoutTakingIt) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const std::string dir = dir_ + "/held";
  ASSERT_EQ(run("run " + sweep + " --out " + dir).code, 0);
  std::remove((dir + "/results.json").c_str());
  {
    std::string holder;
    auto lock = hfta::core::ExperimentLock::take(dir, &holder);
    ASSERT_TRUE(lock.has_value());
    const Result held = run("status " + dir);
    EXPECT_NE(held.out.find("running (pid " + std::to_string(::getpid()) + ")"), std::string::npos) << held.out;
  }
  // Not held: status says so, and leaves the lock file as the last holder wrote it.
  const Result free = run("status " + dir);
  EXPECT_NE(free.out.find("not running"), std::string::npos) << free.out;
  EXPECT_EQ(slurp(dir + "/lock"), std::to_string(::getpid()) + "\n");
}

int shell(const std::string& command);  // (below: bash -c, its exit code)

TEST_F(Cli, AFullDiskStopsTheSweepResumableAndBlamesNoTrial) {
  // Trial 0's first checkpoint goes to /dev/full (its temporary file is a link
  // there): the write fails with ENOSPC, as on a full disk.
  struct stat device {};
  if (::stat("/dev/full", &device) != 0 || !S_ISCHR(device.st_mode)) GTEST_SKIP() << "no /dev/full device here";
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  // A run's directory before its first rung (run refuses an --out that holds files).
  const std::string dir = dir_ + "/full";
  ASSERT_EQ(run("run " + sweep + " --out " + dir).code, 0);
  std::system(("rm -r '" + dir + "/results.json' '" + dir + "/trials' && mkdir -p '" + dir + "/trials/0' && ln -s /dev/full '" +
               dir + "/trials/0/checkpoint.next.pt.tmp'").c_str());
  const Result full = run("resume " + dir);
  EXPECT_EQ(full.code, 1);
  EXPECT_NE(full.err.find("trials/0/checkpoint.next.pt: No space left on device"), std::string::npos) << full.err;
  EXPECT_EQ(full.out.find("failed"), std::string::npos) << full.out;
  EXPECT_FALSE(exists(dir + "/results.json"));
  EXPECT_FALSE(exists(dir + "/trials/0/checkpoint.next.pt.tmp"));  // nothing left to fill the disk
  // Space again: resume ends as a run that never hit it.
  const Result resumed = run("resume " + dir);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_results(dir, dir_ + "/whole");

  // Full as the results are written, every trial done: resume writes them.
  std::system(("rm '" + dir + "/results.json' && ln -s /dev/full '" + dir + "/results.json.tmp'").c_str());
  const Result at_the_end = run("resume " + dir);
  EXPECT_EQ(at_the_end.code, 1);
  EXPECT_NE(at_the_end.err.find("results.json: No space left on device (every trial is done and kept: hfta-tune resume " +
                                dir + " writes the results)"),
            std::string::npos)
      << at_the_end.err;
  std::remove((dir + "/results.json.tmp").c_str());
  ASSERT_EQ(run("resume " + dir).code, 0);
  expect_same_results(dir, dir_ + "/whole");

  // Full before the sweep began: nothing trained, and the same command runs it.
  const std::string early = dir_ + "/full-early";
  std::filesystem::create_directories(early);
  ::symlink("/dev/full", (early + "/sweep.yaml.tmp").c_str());
  const Result before = run("run " + sweep + " --out " + early);
  EXPECT_EQ(before.code, 1);
  EXPECT_NE(before.err.find("sweep.yaml: No space left on device; nothing was trained: once it can be written, run the "
                            "same command again"),
            std::string::npos)
      << before.err;
  ASSERT_EQ(run("run " + sweep + " --out " + early).code, 0);
  expect_same_results(early, dir_ + "/whole");

  // Full as the lock file is written (ulimit -f 0: its pid is the first byte
  // written): a failure of the run (exit 1), with its cause, where it read as
  // a directory not writable (exit 2, no cause). (A lock that is a link to
  // /dev/full is refused as no lock of hfta-tune's: ALockFileNotOfHftaTunes...)
  const std::string locked = dir_ + "/full-lock", lock_err = dir_ + "/lock.err";
  // (Its message goes through a pipe: a file would be under the limit too.)
  const int lock = shell("set -o pipefail; (trap \"\" XFSZ; ulimit -f 0; exec " + std::string(HFTA_TUNE_BINARY) + " run " +
                         sweep + " --out " + locked + ") 2>&1 >/dev/null | cat >" + lock_err);
  EXPECT_EQ(lock, 1);
  EXPECT_NE(slurp(lock_err).find("cannot write " + locked + "/lock: File too large"), std::string::npos)
      << slurp(lock_err);
}

TEST_F(Cli, AnArrayOutOfMemoryWhileReportingTrainsAgainOnlyWhatItHadNotReported) {
  // Device memory runs out (injected) as a promoted array saves its trials,
  // after the first is on disk and reported: the array is split, and only the
  // others train again, each once, from their own states.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_OOM_AFTER_REPORTS", "1", 1);
  const Result split = run("run " + sweep + " --out " + dir_ + "/split --workers 1");
  unsetenv("HFTA_TUNE_OOM_AFTER_REPORTS");
  ASSERT_EQ(split.code, 0) << split.err;
  EXPECT_EQ(split.out.find("failed"), std::string::npos) << split.out;
  expect_same_results(dir_ + "/split", dir_ + "/whole");
}

TEST_F(Cli, KeepCheckpointsLiveRemovesTheCheckpointsOfTrialsDoneTrainingAndEndsAsTheWholeRun) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  // Stopped inside the sweep: a trial its rung passed over has only its
  // weights left; one that may still train keeps its checkpoint. First
  // stopped in its first round, for its measured rates to be made decisive
  // (arrays of one would spend every piece below in the first round), then
  // three pieces of training later: past the second round, whose arrays are
  // one each.
  {
    const ScopedEnv first_round("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/live --workers 1 --keep-checkpoints live").code, 0);
  }
  {
    const ScopedEnv later("HFTA_TUNE_TIME_UP_AFTER_PIECES", "3");
    ASSERT_EQ(run("resume " + dir_ + "/live --workers 1").code, 0);
  }
  ASSERT_FALSE(exists(dir_ + "/live/results.json"));
  int dropped = 0, kept = 0;
  for (int id = 0; id < 22; ++id) {
    const std::string trial = dir_ + "/live/trials/" + std::to_string(id);
    if (!exists(trial + "/trial.json") || !exists(trial + "/weights.pt")) continue;
    (exists(trial + "/checkpoint.pt") ? kept : dropped) += 1;
  }
  EXPECT_GT(dropped, 0);
  EXPECT_GT(kept, 0);
  // Resumed without the flag: run.json keeps it. The results, the best
  // trial's test evaluation (from its weights) included, are the whole run's.
  const Result resumed = run("resume " + dir_ + "/live");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("--keep-checkpoints live: removed"), std::string::npos) << resumed.out;
  expect_same_results(dir_ + "/live", dir_ + "/whole");
  const auto live = results(dir_ + "/live");
  for (const auto& t : live.at("trials")) {
    const std::string trial = dir_ + "/live/trials/" + t.at("id").dump();
    EXPECT_FALSE(exists(trial + "/checkpoint.pt")) << trial;
    EXPECT_FALSE(exists(trial + "/checkpoint.prev.pt")) << trial;
    EXPECT_TRUE(exists(trial + "/weights.pt")) << trial;
    EXPECT_FALSE(t.at("files").contains("checkpoint"));
  }
  EXPECT_TRUE(results(dir_ + "/whole").at("trials")[0].at("files").contains("checkpoint"));
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/bad --keep-checkpoints some").code, 2);
}

TEST_F(Cli, WorkersTrainArraysAtTheSameTimeWithTheSameResults) {
  // Four brackets whose rounds hold several arrays; a failing trial too, whose
  // report, like every other, reaches the scheduler in array order.
  std::string text = kTinySweep;
  text.replace(text.find("max: 90"), 7, "max: 270");
  text.replace(text.find("seed: 1"), 7, "seed: 1\nfusion: {max_array: 4}");
  const std::string sweep = write_sweep("workers.yaml", text);
  setenv("HFTA_TUNE_FAULT_TRIALS", "3", 1);
  const Result one = run("run " + sweep + " --out " + dir_ + "/one");
  const Result three = run("run " + sweep + " --out " + dir_ + "/three --workers 3");
  unsetenv("HFTA_TUNE_FAULT_TRIALS");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(three.code, 0) << three.err;
  const auto a = nlohmann::json::parse(slurp(dir_ + "/one/results.json"));
  const auto b = nlohmann::json::parse(slurp(dir_ + "/three/results.json"));
  ASSERT_EQ(a.at("trials").size(), b.at("trials").size());
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    SCOPED_TRACE("trial " + a.at("trials")[i].at("id").dump());
    EXPECT_EQ(b.at("trials")[i].at("history"), a.at("trials")[i].at("history"));
    EXPECT_EQ(b.at("trials")[i].at("status"), a.at("trials")[i].at("status"));
    EXPECT_EQ(b.at("trials")[i].at("budget"), a.at("trials")[i].at("budget"));
  }
  EXPECT_EQ(b.at("trials")[3].at("status"), "failed");
  EXPECT_EQ(b.at("best"), a.at("best"));
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/zero --workers 0").code, 2);
  // The plan shows one worker's arrays, and says that several may cut them.
  const std::string note = "note: with 3 workers, a round's arrays may be cut further";
  EXPECT_NE(three.out.find(note), std::string::npos) << three.out;
  EXPECT_NE(run("plan " + sweep + " --workers 3").out.find(note), std::string::npos);
  EXPECT_EQ(run("plan " + sweep + " --workers 1").out.find("note: with"), std::string::npos);
  // Each plans within its share of the memory, said beside the device's free memory.
  EXPECT_TRUE(std::regex_search(three.out, std::regex("memory: arrays planned within [0-9]+ MiB a worker \\(90% of its "
                                                      "share, 1/3 of the [0-9]+ MiB free on cpu, shared by 3 workers\\)")))
      << three.out;
  EXPECT_TRUE(std::regex_search(run("plan " + sweep + " --workers 1").out,
                                std::regex("memory: arrays planned within [0-9]+ MiB \\(90% of the free memory of cpu\\)")));
  const auto cores = std::thread::hardware_concurrency();
  EXPECT_NE(run("plan " + sweep + " --workers " + std::to_string(cores + 1)).out.find(
                "note: " + std::to_string(cores + 1) + " workers on " + std::to_string(cores) + " CPU cores take turns"),
            std::string::npos);
}

TEST_F(Cli, CudaSweepsTrainOnTheGpuAsOnTheCpu) {
  if (!torch::cuda::is_available()) {
    // Without a GPU, asking for one is refused before anything is written.
    const Result r = run("run " + write_sweep("tiny.yaml", kTinySweep) + " --device cuda --out " + dir_ + "/gpu");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("no CUDA GPU"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(dir_ + "/gpu"));
    GTEST_SKIP() << "no CUDA device: the GPU run is checked where one is (scripts/gpu/build-and-bench.sh)";
  }
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cpu --workers 1").code, 0);
  const Result gpu = run("run " + sweep + " --device cuda --out " + dir_ + "/gpu");
  ASSERT_EQ(gpu.code, 0) << gpu.err;
  EXPECT_NE(gpu.out.find("copied to cuda:0 once"), std::string::npos) << gpu.out;
  // Batches streamed from pinned host memory instead: the same numbers as batches cut on the GPU.
  const Result streamed = run("run " + sweep + " --device cuda --prefetch 2 --out " + dir_ + "/streamed");
  ASSERT_EQ(streamed.code, 0) << streamed.err;
  EXPECT_NE(streamed.out.find("kept on the host; batches for cuda:0 prepared 2 ahead"), std::string::npos)
      << streamed.out;
  expect_same_results(dir_ + "/streamed", dir_ + "/gpu");
  const auto a = nlohmann::json::parse(slurp(dir_ + "/cpu/results.json"));
  const auto b = nlohmann::json::parse(slurp(dir_ + "/gpu/results.json"));
  ASSERT_EQ(a.at("trials").size(), b.at("trials").size());
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    // Other kernels, other rounding, and dropout masks drawn on the GPU by its own
    // generators (fusion/fused_dropout.h): the trials learn alike, not identically.
    EXPECT_NEAR(b.at("trials")[i].at("metric").get<double>(), a.at("trials")[i].at("metric").get<double>(), 0.03) << i;
  }
  // Resumed on the GPU from a directory whose results were dropped: the same trials.
  std::remove((dir_ + "/gpu/results.json").c_str());
  ASSERT_EQ(run("resume " + dir_ + "/gpu --device cuda").code, 0);
  // fp16 autocast with per-model loss scaling: the same trials, to half precision's accuracy.
  std::string text = kTinySweep;
  const std::string task = "task: {model: mlp, ";
  text.replace(text.find(task), task.size(), "task: {model: mlp, precision: fp16, ");
  const Result half = run("run " + write_sweep("fp16.yaml", text) + " --device cuda --out " + dir_ + "/fp16");
  ASSERT_EQ(half.code, 0) << half.err;
  const auto c = nlohmann::json::parse(slurp(dir_ + "/fp16/results.json"));
  for (std::size_t i = 0; i < a.at("trials").size(); ++i) {
    EXPECT_NEAR(c.at("trials")[i].at("metric").get<double>(), a.at("trials")[i].at("metric").get<double>(), 0.03) << i;
  }
}

TEST_F(Cli, MixedPrecisionSweepsTrainAndFp16WithoutAGpuIsRefused) {
  std::string text = kTinySweep;
  const std::string task = "task: {model: mlp, ";
  text.replace(text.find(task), task.size(), "task: {model: mlp, precision: bf16, ");
  const Result bf16 = run("run " + write_sweep("bf16.yaml", text) + " --out " + dir_ + "/bf16");
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_NE(bf16.out.find("in bf16 autocast"), std::string::npos) << bf16.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/bf16/results.json"));
  EXPECT_GT(results.at("best").at("metric").get<double>(), 0.7);  // it learns
  // A changed precision changes every trial: resume refuses it.
  std::remove((dir_ + "/bf16/results.json").c_str());
  text.replace(text.find("bf16"), 4, "fp32");
  std::ofstream(dir_ + "/bf16/sweep.yaml") << text;
  const Result changed = run("resume " + dir_ + "/bf16");
  EXPECT_EQ(changed.code, 2);
  EXPECT_NE(changed.err.find("task.precision"), std::string::npos) << changed.err;

  text.replace(text.find("fp32"), 4, "fp16");
  const Result fp16 = run("run " + write_sweep("fp16.yaml", text) + " --out " + dir_ + "/fp16");
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(fp16.code, 2);
    EXPECT_NE(fp16.err.find("fp16.yaml:3:"), std::string::npos) << fp16.err;  // where the sweep asks for it
    EXPECT_NE(fp16.err.find("task.precision: fp16 needs a CUDA device"), std::string::npos) << fp16.err;
    EXPECT_FALSE(exists(dir_ + "/fp16"));
    const Result plan = run("plan " + write_sweep("fp16.yaml", text));
    EXPECT_EQ(plan.code, 2);
    EXPECT_NE(plan.err.find("fp16.yaml:3:"), std::string::npos) << plan.err;
  }
  text.replace(text.find("fp16"), 4, "fp8");
  const Result unknown = run("validate " + write_sweep("fp8.yaml", text));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("fp8.yaml:3:"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("task.precision"), std::string::npos) << unknown.err;
}

// A sweep whose every trial failed is no success (Ray Tune raises TuneError):
// exit 1, naming the first error, with every trial's in results.json.
TEST_F(Cli, ASweepWhoseEveryTrialFailedExits1) {
  std::string text = kTinySweep;
  text.replace(text.find("{method: hyperband, eta: 3}"), 27, "{method: random, trials: 2}");
  const std::string sweep = write_sweep("two.yaml", text);
  const ScopedEnv faults("HFTA_TUNE_FAULT_TRIALS", "0,1");
  const Result r = run("run " + sweep + " --out " + dir_ + "/failed");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("hfta-tune run: every trial failed (trial 0: injected fault", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("); results.json records each one's error\n"), std::string::npos) << r.err;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/failed/results.json"));
  EXPECT_EQ(results.at("finished"), true);
  ASSERT_EQ(results.at("trials").size(), 2u);
  for (const auto& t : results.at("trials")) EXPECT_EQ(t.at("status"), "failed");
  // One trial that trains is success enough.
  const ScopedEnv one_fault("HFTA_TUNE_FAULT_TRIALS", "1");
  EXPECT_EQ(run("run " + sweep + " --out " + dir_ + "/one").code, 0);
}

TEST_F(Cli, ATrialThatThrowsFailsAloneWithItsMessageAndTheSweepGoesOn) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_FAULT_TRIALS", "2", 1);  // trial 2's training throws, as a shape error would
  const Result r = run("run " + sweep + " --out " + dir_ + "/faulty");
  unsetenv("HFTA_TUNE_FAULT_TRIALS");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("trial 2 failed: injected fault"), std::string::npos) << r.out;
  const auto whole = nlohmann::json::parse(slurp(dir_ + "/whole/results.json"));
  const auto faulty = nlohmann::json::parse(slurp(dir_ + "/faulty/results.json"));
  ASSERT_EQ(faulty.at("trials").size(), whole.at("trials").size());
  for (std::size_t i = 0; i < whole.at("trials").size(); ++i) {
    const auto& t = faulty.at("trials")[i];
    if (t.at("id") == 2) {
      EXPECT_EQ(t.at("status"), "failed");
      EXPECT_NE(t.at("error").get<std::string>().find("injected fault"), std::string::npos);
      EXPECT_TRUE(t.at("metric").is_null());
      // It failed in its first rung: it reached no budget and has no files.
      EXPECT_EQ(t.at("budget"), 0);
      EXPECT_TRUE(t.at("files").empty()) << t.at("files");
    } else if (whole.at("trials")[i].at("budget") == t.at("budget")) {
      // Its array-mates trained as they would have anyway.
      EXPECT_EQ(t.at("metric"), whole.at("trials")[i].at("metric")) << t.at("id");
    }
  }
  EXPECT_NE(faulty.at("best").at("id"), 2);
  // The CSV names the error, in its last field: trial 2 has neither metric nor files.
  const Result csv = run("export " + dir_ + "/faulty --format csv");
  EXPECT_TRUE(std::regex_search(csv.out, std::regex("\n2,failed,0(\\.0)?,,[0-9]+,[^\n]*,false,,,[^\n]*injected fault")))
      << csv.out;

  // Resumed, without the fault: the failed trial is not trained again, it stays failed.
  std::remove((dir_ + "/faulty/results.json").c_str());
  const Result resumed = run("resume " + dir_ + "/faulty");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const auto again = nlohmann::json::parse(slurp(dir_ + "/faulty/results.json"));
  EXPECT_EQ(again.at("trials"), faulty.at("trials"));
  EXPECT_EQ(again.at("best"), faulty.at("best"));
}

TEST_F(Cli, PackingNeverChangesATrialsNumbers) {
  // Arrays of 1 against arrays as large as the sweep's rungs (up to 17 models).
  std::string one = kTinySweep;
  one.replace(one.find("seed: 1"), 7, "seed: 1\nfusion: {max_array: 1}");
  ASSERT_EQ(run("run " + write_sweep("tiny.yaml", kTinySweep) + " --out " + dir_ + "/fused").code, 0);
  ASSERT_EQ(run("run " + write_sweep("one.yaml", one) + " --out " + dir_ + "/one").code, 0);
  const auto fused = nlohmann::json::parse(slurp(dir_ + "/fused/results.json"));
  const auto alone = nlohmann::json::parse(slurp(dir_ + "/one/results.json"));
  ASSERT_EQ(fused.at("trials").size(), alone.at("trials").size());
  for (std::size_t i = 0; i < fused.at("trials").size(); ++i) {
    EXPECT_EQ(fused.at("trials")[i].at("history"), alone.at("trials")[i].at("history")) << i;
  }
  EXPECT_TRUE(exists(dir_ + "/fused/throughput.json"));
}

TEST_F(Cli, APromotedTrialTrainsAsIfStraightThrough) {
  // Successive halving trains trial ids 0-2 to 1 epoch, then the best on to 3;
  // random search trains the same trials (same sweep seed) to 3 epochs in one
  // go. Reduce-on-plateau rates and early-stopping patience carry across the
  // rungs, so the promoted trial's every evaluation is the straight one's.
  // Plateau schedules that cut the rate at every evaluation without a gain.
  auto plateau = [](const std::string& lr_max, const std::string& factor) {
    return "parameters:\n  lr: {distribution: log_uniform, min: 0.05, max: " + lr_max +
           "}\n  momentum: {value: 0.9}\n  schedule: {value: plateau}\n  plateau_patience: {value: 0}\n"
           "  plateau_factor: {value: " + factor + "}\n";
  };
  const std::string common = R"(seed: 4
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_loss, goal: minimize}
budget: {unit: epochs, min: 1, max: 3}
early_stopping: {patience: 2, min_delta: 0.02}
)" + plateau("0.5", "0.5");
  // In steps, rungs end between epoch boundaries (157 steps of 64 from 10,000
  // images): the rung end at step 100 is evaluated, but only looks. Had it
  // counted, 157 would have had to beat it: every trial stopped there (a
  // min_delta none meets), and without early stopping, trial 3's rate was cut
  // at 157 (0.5393 at 300 against 0.6144 straight).
  const std::string in_steps = R"(seed: 8
task: {model: mlp, batch_size: 64, validation_size: 50000, options: {depth: 1, width: 16}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 100, max: 300}
early_stopping: {patience: 1, min_delta: 0.3}
)" + plateau("0.8", "0.1");
  // With task.eval_steps, evaluations every 50 steps, the rung end among them:
  // early stopping acts inside a budget shorter than an epoch (promoted trials
  // 3 and 5 stop at 200 and 250, as straight).
  std::string every_50 = in_steps;
  every_50.replace(every_50.find("width: 16}"), 10, "width: 16}, eval_steps: 50");
  every_50.replace(every_50.find("patience: 1, min_delta: 0.3"), 27, "patience: 2, min_delta: 0.05");
  struct Case {
    std::string name, sweep, trials;
    std::int64_t first_rung;  // steps
    std::int64_t looks;       // the step of a rung end that only looks (-1: none)
    int promoted;
    int stopped;  // -1: either way (a trajectory at lr 0.4 and momentum 0.9 turns on the CPU's rounding)
    bool noted;   // that the patience cannot act
  };
  for (const Case& c : {Case{"epochs", common, "3", 196, -1, 1, -1, false}, Case{"steps", in_steps, "9", 100, 100, 3, 0, true},
                        Case{"every-50", every_50, "9", 100, -1, 3, 2, false}}) {
    SCOPED_TRACE(c.name);
    const std::string sha = write_sweep(c.name + "-sha.yaml",
                                        "name: sha\nsearch: {method: sha, trials: " + c.trials + ", eta: 3}\n" + c.sweep);
    const std::string straight =
        write_sweep(c.name + "-straight.yaml", "name: straight\nsearch: {method: random, trials: " + c.trials + "}\n" + c.sweep);
    const Result halving = run("run " + sha + " --out " + dir_ + "/" + c.name + "-sha");
    ASSERT_EQ(halving.code, 0);
    // Said once: run's plan says it (plan knows Fashion-MNIST's size), and the tuner does not again.
    const std::string idle = "note: early_stopping.patience 1 waits for 2 evaluations, and budget.max leaves 1 "
                             "before its end (one every 157 steps at batch 64), so it acts on no trial before budget.max: set task.eval_steps";
    EXPECT_EQ(halving.out.find(idle) != std::string::npos, c.noted) << halving.out;
    EXPECT_EQ(halving.out.find(idle), halving.out.rfind(idle)) << halving.out;
    EXPECT_EQ(run("plan " + sha).out.find(idle) != std::string::npos, c.noted);
    ASSERT_EQ(run("run " + straight + " --out " + dir_ + "/" + c.name + "-straight").code, 0);
    const auto halved = results(dir_ + "/" + c.name + "-sha");
    const auto whole = results(dir_ + "/" + c.name + "-straight");
    int promoted = 0, stopped = 0;
    for (std::size_t i = 0; i < halved.at("trials").size(); ++i) {
      const auto& t = halved.at("trials")[i];
      if (t.at("history").back().at("step") <= c.first_rung) continue;
      ++promoted;
      stopped += t.at("status") == "stopped";
      // Every evaluation the straight run made, and the rung end between them.
      nlohmann::json same = nlohmann::json::array();
      for (const auto& point : t.at("history")) {
        if (point.at("step") != c.looks) same.push_back(point);
      }
      EXPECT_EQ(same, whole.at("trials")[i].at("history")) << t.at("id");
      EXPECT_EQ(t.at("metric"), whole.at("trials")[i].at("metric"));
      EXPECT_EQ(t.at("status"), whole.at("trials")[i].at("status"));
      EXPECT_EQ(t.at("budget"), whole.at("trials")[i].at("budget"));
    }
    EXPECT_EQ(promoted, c.promoted);
    if (c.stopped >= 0) EXPECT_EQ(stopped, c.stopped);
  }
}

TEST_F(Cli, ATrialThatStopsEarlyReportsTheBudgetItReached) {
  // 196 steps an epoch, an evaluation at each: with patience 1 and a min_delta
  // no second epoch improves by, the two learning trials stop at their second
  // evaluation (step 392); lr 60 diverges at its first (step 196). A rung of
  // 980 steps is what they were given, not what they trained.
  const std::string sweep = write_sweep("stops.yaml", R"(name: stops
seed: 3
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_loss, goal: minimize}
budget: {unit: steps, min: 980, max: 980}
search: {method: grid}
parameters:
  lr: {distribution: grid, values: [0.01, 0.1, 60.0]}
early_stopping: {patience: 1, min_delta: 0.5, divergence: 10}
)");
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/stops").code, 0);
  const auto trials = results(dir_ + "/stops").at("trials");
  ASSERT_EQ(trials.size(), 3u);
  const std::vector<std::pair<std::string, double>> want = {{"stopped", 392}, {"stopped", 392}, {"diverged", 196}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("trial " + std::to_string(i));
    EXPECT_EQ(trials[i].at("status"), want[i].first);
    EXPECT_EQ(trials[i].at("budget"), want[i].second);
    EXPECT_EQ(trials[i].at("history").back().at("step"), want[i].second);
    // trial.json: the rung it was given (which resume replays), and where it ended.
    const auto rung = nlohmann::json::parse(slurp(dir_ + "/stops/trials/" + std::to_string(i) + "/trial.json"))
                          .at("rungs")
                          .back();
    EXPECT_EQ(rung.at("budget"), 980);
    EXPECT_EQ(rung.at("reached"), want[i].second);
    EXPECT_EQ(rung.at("steps"), want[i].second);
  }
  // The CSV says the same.
  const Result csv = run("export " + dir_ + "/stops --format csv");
  EXPECT_NE(csv.out.find("\n2,diverged,196.0,,"), std::string::npos) << csv.out;
  // Resumed from its files, the sweep finds the stopped best trial's final
  // model in the rung it stopped in, and evaluates it on the test split again.
  const auto whole = results(dir_ + "/stops");
  ASSERT_TRUE(whole.at("best").contains("test"));
  std::remove((dir_ + "/stops/results.json").c_str());
  ASSERT_EQ(run("resume " + dir_ + "/stops").code, 0);
  EXPECT_EQ(results(dir_ + "/stops"), whole);
}

// kTinySweep with another search section.
std::string tiny_sweep_searching(const std::string& search) {
  std::string text = kTinySweep;
  const std::string hyperband = "{method: hyperband, eta: 3}";
  return text.replace(text.find(hyperband), hyperband.size(), search);
}

TEST_F(Cli, AshaRunsToTheEndWithHeldPromotionsReleased) {
  const std::string sweep = write_sweep("asha.yaml", tiny_sweep_searching("{method: asha, eta: 3, trials: 9, promotion_wait: 30}"));
  const Result r = run("run " + sweep + " --out " + dir_ + "/asha");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto results = nlohmann::json::parse(slurp(dir_ + "/asha/results.json"));
  ASSERT_EQ(results.at("trials").size(), 9u);
  int at_top = 0;
  for (const auto& t : results.at("trials")) at_top += t.at("budget").get<double>() == 90;
  EXPECT_EQ(at_top, 1);  // 9 trials, eta 3: three reach 30 steps, one reaches 90
}

// Runs `sweep` into dir_/cut stopped inside a rung as a time limit stops it (one
// worker, after its fifth piece of training, or `pieces`), resumes it, and
// expects it to end as dir_/whole.
void Cli::expect_cut_and_resumed_as_whole(const std::string& sweep, const std::string& whole, const std::string& cut,
                                          const char* pieces) {
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", pieces, 1);
  const Result limited = run("run " + sweep + " --out " + dir_ + "/" + cut + " --workers 1");
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  ASSERT_EQ(limited.code, 0) << limited.err;
  ASSERT_FALSE(exists(dir_ + "/" + cut + "/results.json")) << limited.out;
  ASSERT_EQ(run("resume " + dir_ + "/" + cut).code, 0);
  expect_same_results(dir_ + "/" + cut, dir_ + "/" + whole);
}

TEST_F(Cli, TpeInWavesLearnsFromTheEarlierWavesAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe, waves: 3}");
  const std::string sweep = write_sweep("waves.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find(" (sha with tpe) in "), std::string::npos) << whole.out;  // the header names the searcher
  EXPECT_NE(whole.out.find("note: TPE proposes each wave of new trials from the results of the waves before"),
            std::string::npos)
      << whole.out;
  // The first wave is random search's; TPE proposes the later ones from the
  // results before them.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: tpe, waves: 3"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto tpe_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(tpe_trials.size(), 12u);
  int proposed = 0;
  for (std::size_t i = 0; i < 12; ++i) {
    if (i < 4) EXPECT_EQ(tpe_trials[i].at("params"), random_trials[i].at("params")) << i;
    proposed += tpe_trials[i].at("params") != random_trials[i].at("params");
  }
  EXPECT_EQ(proposed, 8);
  // Stopped inside a rung, and resumed: the later waves are proposed from the
  // same results and the same wave-mates (TPE's liars, told of a trial the
  // cut run proposed as of one it proposes), so the sweep ends as the whole run.
  expect_cut_and_resumed_as_whole(sweep, "whole", "limited");
  // In arrays of one, a cut falls between a wave's trials: the resumed run
  // reads the trials before it from the cut run's files, and still counts them
  // as the wave-mates of those it proposes (without, this differed from the
  // whole run at cuts after 5, 6 and 7 pieces).
  const std::string alone = write_sweep("alone.yaml", text + "fusion: {max_array: 1}\n");
  ASSERT_EQ(run("run " + alone + " --out " + dir_ + "/alone --workers 1").code, 0);
  expect_cut_and_resumed_as_whole(alone, "alone", "alone-cut", "6");

  // ASHA too, whose promotions, held for company, go with the next wave
  // whatever the wait (a resume replays rounds in no time).
  const std::string asha = write_sweep(
      "asha.yaml", tiny_sweep_searching("{method: asha, eta: 3, trials: 12, searcher: tpe, waves: 3, promotion_wait: 30}"));
  const Result asha_run = run("run " + asha + " --out " + dir_ + "/asha");
  ASSERT_EQ(asha_run.code, 0);
  // Promoting from each wave's results as they come, it can promote more than
  // the plan's counts (those of every trial at once): the plan says so. (The
  // progress count then grows with it: Progress.NeitherCountNorEtaReadsPastTheEnd.)
  EXPECT_NE(asha_run.out.find("note: ASHA promotes the top 1/3 of a rung's results as they come in"), std::string::npos)
      << asha_run.out;
  expect_cut_and_resumed_as_whole(asha, "asha", "asha-limited");

  // A TPE sweep recorded before waves existed (its sweep.json names none)
  // started every trial at once, and resumes so.
  const std::string before = write_sweep("before.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe}"));
  const std::string at_once = write_sweep("at-once.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: tpe, waves: 1}"));
  ASSERT_EQ(run("run " + at_once + " --out " + dir_ + "/at-once").code, 0);
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1", 1);
  ASSERT_EQ(run("run " + before + " --out " + dir_ + "/before --workers 1").code, 0);
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  auto recorded = nlohmann::json::parse(slurp(dir_ + "/before/sweep.json"));
  ASSERT_EQ(recorded.at("search").at("waves"), 3);
  recorded["search"].erase("waves");
  std::ofstream(dir_ + "/before/sweep.json") << recorded.dump(2);
  const Result resumed = run("resume " + dir_ + "/before");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.out.find("waves of"), std::string::npos) << resumed.out;
  expect_same_results(dir_ + "/before", dir_ + "/at-once");
}

// CMA-ES: each generation of search.population trials starts as a wave once
// the one before has its first-rung results, and trains as an array; fused,
// alone, cut and resumed, and grown runs all end alike.
TEST_F(Cli, CmaEsTrainsEachGenerationAsAWaveAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: asha, eta: 3, trials: 12, searcher: cmaes, population: 4}");
  const std::string sweep = write_sweep("cmaes.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("note: CMA-ES draws each generation of 4 new trials from a Gaussian over lr, momentum "
                           "that the generations before it moved"),
            std::string::npos)
      << whole.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/whole/sweep.json")).at("search").at("population"), 4);
  // Not random search's trials, and in their ranges.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: cmaes, population: 4"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto cma_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(cma_trials.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_NE(cma_trials[i].at("params"), random_trials[i].at("params")) << i;
    const double lr = cma_trials[i].at("params").at("lr"), momentum = cma_trials[i].at("params").at("momentum");
    EXPECT_TRUE(lr >= 0.01 && lr <= 0.5 && momentum >= 0 && momentum <= 0.9) << cma_trials[i].at("params");
  }
  // Alone, the same trials and metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  // Stopped inside a rung, and resumed: the later generations are drawn from the same results.
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Grown from 8 trials, finished, to 12: as the run of 12.
  const std::string eight = write_sweep("eight.yaml", std::regex_replace(text, std::regex("trials: 12"), "trials: 8"));
  ASSERT_EQ(run("run " + eight + " --out " + dir_ + "/grown").code, 0);
  std::ofstream(dir_ + "/grown/sweep.yaml") << text;
  const Result grown = run("resume " + dir_ + "/grown");
  ASSERT_EQ(grown.code, 0) << grown.err;
  expect_same_results(dir_ + "/grown", dir_ + "/whole");
  // A new population draws other generations: resume refuses it.
  {
    const ScopedEnv first_piece("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/stopped --workers 1").code, 0);
  }
  std::ofstream(dir_ + "/stopped/sweep.yaml") << std::regex_replace(text, std::regex("population: 4"), "population: 5");
  const Result edited = run("resume " + dir_ + "/stopped");
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("search.population"), std::string::npos) << edited.err;
  // By default Hansen's population (6 for two parameters), after the points to evaluate.
  const Result plan = run("plan " + write_sweep("default.yaml", tiny_sweep_searching(
      "{method: random, trials: 15, searcher: cmaes, points_to_evaluate: [{lr: 0.1, momentum: 0.5}]}")));
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("in 4 waves of 1, 6, 6, 2;"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("each generation of 6 new trials"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("it starts at the best point to evaluate"), std::string::npos) << plan.out;
  // What CMA-ES cannot do with the sweep as written, plan says.
  const Result one = run("plan " + write_sweep("one.yaml", tiny_sweep_searching("{method: sha, eta: 3, trials: 5, searcher: cmaes, population: 8}")));
  EXPECT_NE(one.out.find("note: the 5 trials CMA-ES draws are at most one generation of 8, so its Gaussian never moves"),
            std::string::npos)
      << one.out;
  std::string wide = tiny_sweep_searching("{method: random, trials: 12, searcher: cmaes}");
  wide += "  width: {distribution: int_uniform, min: 16, max: 64, fuse: false}\n";
  const Result unfused = run("plan " + write_sweep("unfused.yaml", wide));
  EXPECT_NE(unfused.out.find("note: CMA-ES searches width (fuse: false), so a generation's trials differ in it"),
            std::string::npos)
      << unfused.out;
}

// The Gaussian process, in waves as TPE: the first is random search's, the
// later ones its proposals; fused, alone and cut-and-resumed runs end alike,
// under successive halving and Hyperband's second pass.
TEST_F(Cli, GaussianProcessProposesLaterWavesAndResumesAsOneRun) {
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 12, searcher: gp, waves: 3}");
  const std::string sweep = write_sweep("gp.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("rung 0: 12 trials to 10 steps in 3 waves of 4, 4, 4;"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("note: the Gaussian process proposes each wave of new trials from the results of the waves "
                           "before"),
            std::string::npos)
      << whole.out;
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: gp, waves: 3"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto gp_trials = results(dir_ + "/whole").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  ASSERT_EQ(gp_trials.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    // (Four results at 10 steps before the second wave: the model needs 4, the parameters + 2.)
    if (i < 4) EXPECT_EQ(gp_trials[i].at("params"), random_trials[i].at("params")) << i;
    if (i >= 4) EXPECT_NE(gp_trials[i].at("params"), random_trials[i].at("params")) << i;
  }
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Hyperband's second pass is proposed from the first's results.
  const std::string twice = write_sweep("twice.yaml", tiny_sweep_searching("{method: hyperband, eta: 3, searcher: gp, iterations: 2}"));
  ASSERT_EQ(run("run " + twice + " --out " + dir_ + "/twice").code, 0);
  expect_cut_and_resumed_as_whole(twice, "twice", "twice-cut", "8");
}

TEST_F(Cli, HyperbandIterationsRunTheBracketsAgainProposedFromTheFirstPassAndResumeAsOneRun) {
  const std::string once = write_sweep("once.yaml", tiny_sweep_searching("{method: hyperband, eta: 3, searcher: tpe}"));
  const std::string text = tiny_sweep_searching("{method: hyperband, eta: 3, searcher: tpe, iterations: 2}");
  const std::string twice = write_sweep("twice.yaml", text);
  ASSERT_EQ(run("run " + once + " --out " + dir_ + "/once").code, 0);
  const Result whole = run("run " + twice + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("bracket s=0 of iteration 1\n  rung 0: 3 trials to 90 steps in round 5"), std::string::npos)
      << whole.out;
  // The first pass is the one-pass sweep, trial for trial (17 trials: 9, 5, 3).
  const auto first = results(dir_ + "/once").at("trials"), both = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(first.size(), 17u);
  ASSERT_EQ(both.size(), 34u);
  for (std::size_t i = 0; i < 17; ++i) {
    for (const char* key : {"params", "history", "metric"}) EXPECT_EQ(both[i].at(key), first[i].at(key)) << i << key;
  }
  // The second pass's trials are TPE's, proposed from the first pass's results:
  // not what random search draws for the same ids.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: tpe"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  const auto drawn = results(dir_ + "/random").at("trials");
  ASSERT_EQ(drawn.size(), 34u);
  int proposed = 0;
  for (std::size_t i = 17; i < 34; ++i) proposed += both[i].at("params") != drawn[i].at("params");
  EXPECT_EQ(proposed, 17);
  // Stopped in the first pass, and in the second (ten pieces of training in all).
  expect_cut_and_resumed_as_whole(twice, "whole", "cut");
  expect_cut_and_resumed_as_whole(twice, "whole", "cut-late", "8");
  // The finished one-pass sweep, grown by a pass in its sweep.yaml, ends as the two-pass one.
  std::ofstream(dir_ + "/once/sweep.yaml") << text;
  const Result grown = run("resume " + dir_ + "/once");
  ASSERT_EQ(grown.code, 0) << grown.err;
  EXPECT_NE(grown.out.find("sweep.yaml's search.iterations grows from 1 to 2: the trials so far are kept, and Hyperband "
                           "runs its brackets 1 more time, with new trials\n"),
            std::string::npos)
      << grown.out;
  expect_same_results(dir_ + "/once", dir_ + "/whole");
  // A stopped one grows alike, and status says that resume grows it.
  {
    const ScopedEnv first_piece("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + once + " --out " + dir_ + "/stopped --workers 1").code, 0);
  }
  ASSERT_FALSE(exists(dir_ + "/stopped/results.json"));
  std::ofstream(dir_ + "/stopped/sweep.yaml") << text;
  const Result status = run("status " + dir_ + "/stopped");
  EXPECT_NE(status.out.find("/stopped/sweep.yaml grows search.iterations from 1 to 2: continue with hfta-tune resume "),
            std::string::npos)
      << status.out;
  ASSERT_EQ(run("resume " + dir_ + "/stopped").code, 0);
  expect_same_results(dir_ + "/stopped", dir_ + "/whole");
}

// A finished random search whose sweep.yaml asks for more trials trains only
// the new ones, and ends as a run of them all; a grid grows by repeats alike.
// What cannot grow is refused, with nothing written.
TEST_F(Cli, ResumeGrowsAFinishedSweepByMoreTrialsAsIfRunWithThemAll) {
  const std::string four = R"(name: grow
seed: 1
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, max: 30}
search: {method: random, trials: 4}
parameters:
  lr: {distribution: log_uniform, min: 0.01, max: 0.5}
  momentum: {distribution: uniform, min: 0.0, max: 0.9}
)";
  auto with = [&](const std::string& from, const std::string& to) { return std::regex_replace(four, std::regex(from), to); };
  ASSERT_EQ(run("run " + write_sweep("four.yaml", four) + " --out " + dir_ + "/grown").code, 0);
  ASSERT_EQ(run("run " + write_sweep("seven.yaml", with("trials: 4", "trials: 7")) + " --out " + dir_ + "/whole").code, 0);
  const std::string before = slurp(dir_ + "/grown/results.json"), recorded = slurp(dir_ + "/grown/sweep.json");
  const std::string edited = dir_ + "/grown/sweep.yaml";
  struct Refusal {
    std::string text, says;
  };
  for (const Refusal& r : {Refusal{with("trials: 4", "trials: 3"), "/sweep.yaml changes search.trials from 4 to 3: a sweep can grow, "
                                                                    "not shrink (sweep.json records 4: the sweep as run, or as "
                                                                    "a resume grew it)\n"},
                           Refusal{with("trials: 4", "trials: 7").replace(four.find("max: 0.5"), 8, "max: 0.6"),
                                   "/sweep.yaml changes search.trials along with parameters.lr.max: resume grows a sweep "
                                   "by search.trials alone, all else as the run started (sweep.json)\n"}}) {
    std::ofstream(edited) << r.text;
    const Result refused = run("resume " + dir_ + "/grown");
    EXPECT_EQ(refused.code, 2);
    EXPECT_NE(refused.err.find(r.says), std::string::npos) << refused.err;
    EXPECT_EQ(slurp(dir_ + "/grown/results.json"), before);  // nothing written
    EXPECT_EQ(slurp(dir_ + "/grown/sweep.json"), recorded);
  }
  std::ofstream(edited) << with("trials: 4", "trials: 7");
  const Result finished = run("status " + dir_ + "/grown");  // finished, and the file would grow it
  EXPECT_NE(finished.out.find("finished, 4 trials"), std::string::npos) << finished.out;
  EXPECT_NE(finished.out.find("/grown/sweep.yaml grows search.trials from 4 to 7: hfta-tune resume "), std::string::npos)
      << finished.out;
  const Result grown = run("resume " + dir_ + "/grown");
  ASSERT_EQ(grown.code, 0) << grown.err;
  EXPECT_NE(grown.out.find("sweep.yaml's search.trials grows from 4 to 7: the trials so far are kept, 3 more trials train\n"),
            std::string::npos)
      << grown.out;
  EXPECT_NE(grown.out.find("\n  7 trials to 30 steps"), std::string::npos) << grown.out;  // the plan: the sweep grown
  expect_same_results(dir_ + "/grown", dir_ + "/whole");
  EXPECT_EQ(results(dir_ + "/grown").at("finished"), true);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/grown/sweep.json")).at("search").at("trials"), 7);
  EXPECT_NE(run("resume " + dir_ + "/grown").out.find("is finished"), std::string::npos);

  // A grid, by repeats: each point once more, with new seeds.
  const std::string grid = R"(name: grow-grid
seed: 1
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, max: 30}
search: {method: grid}
parameters:
  lr: {values: [0.05, 0.2]}
)";
  ASSERT_EQ(run("run " + write_sweep("grid.yaml", grid) + " --out " + dir_ + "/grid").code, 0);
  const std::string twice = std::regex_replace(grid, std::regex("\\{method: grid\\}"), "{method: grid, repeats: 2}");
  ASSERT_EQ(run("run " + write_sweep("grid2.yaml", twice) + " --out " + dir_ + "/grid-whole").code, 0);
  std::ofstream(dir_ + "/grid/sweep.yaml") << twice;
  const Result repeated = run("resume " + dir_ + "/grid");
  ASSERT_EQ(repeated.code, 0) << repeated.err;
  EXPECT_NE(repeated.out.find("sweep.yaml's search.repeats grows from 1 to 2: the trials so far are kept, and each grid "
                              "point runs 1 more time, with new seeds\n"),
            std::string::npos)
      << repeated.out;
  expect_same_results(dir_ + "/grid", dir_ + "/grid-whole");
  EXPECT_EQ(results(dir_ + "/grid").at("trials").size(), 4u);

  // A sweep its metric.target ended would train no new trial: refused.
  const std::string target = with("goal: maximize\\}", "goal: maximize, target: 0.3}");
  ASSERT_EQ(run("run " + write_sweep("target.yaml", target) + " --out " + dir_ + "/target").code, 0);
  std::ofstream(dir_ + "/target/sweep.yaml") << std::regex_replace(target, std::regex("trials: 4"), "trials: 7");
  const Result ended = run("resume " + dir_ + "/target");
  EXPECT_EQ(ended.code, 2);
  EXPECT_NE(ended.err.find("/sweep.yaml grows search.trials, but trial "), std::string::npos) << ended.err;
  EXPECT_NE(ended.err.find("reached the sweep's metric.target 0.3"), std::string::npos) << ended.err;

  // TPE started its trials in waves sized by their count: refused.
  const std::string tpe = with("trials: 4\\}", "trials: 4, searcher: tpe}");
  ASSERT_EQ(run("run " + write_sweep("tpe.yaml", tpe) + " --out " + dir_ + "/tpe").code, 0);
  std::ofstream(dir_ + "/tpe/sweep.yaml") << std::regex_replace(tpe, std::regex("trials: 4"), "trials: 7");
  const Result tpe_refused = run("resume " + dir_ + "/tpe");
  EXPECT_EQ(tpe_refused.code, 2);
  EXPECT_NE(tpe_refused.err.find("search.trials from 4 to 7: TPE started the trials so far in waves sized by their count"),
            std::string::npos)
      << tpe_refused.err;
}

TEST_F(Cli, PercentileStoppingStopsWhatItsRuleSaysFromTheGraceOnAndResumesAsOneRun) {
  const std::string sweep = write_sweep(
      "percentile.yaml",
      tiny_sweep_searching("{method: random, trials: 8, stopping: percentile, percentile: 25, grace_period: 20, "
                           "min_samples: 3}"));
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_NE(whole.out.find("note: percentile stopping trains in steps of 10 steps and first compares the trials at 20 "
                           "steps"),
            std::string::npos)
      << whole.out;
  // Each step (10, 20, ..., 90 steps) ends at an evaluation: told the
  // recorded metrics step by step, the rule stops exactly the trials that
  // trained no further, none inside the grace.
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 8u);
  hfta::search::MedianStopping rule(hfta::search::Goal::kMaximize, hfta::search::StoppingRule{20, 3, 25});
  std::set<std::int64_t> alive = {0, 1, 2, 3, 4, 5, 6, 7};
  int stopped = 0;
  for (int budget = 10; budget <= 90; budget += 10) {
    for (const std::int64_t id : alive) {
      const auto& history = trials[static_cast<std::size_t>(id)].at("history");
      const auto at = std::find_if(history.begin(), history.end(), [&](const auto& h) { return h.at("step") == budget; });
      ASSERT_NE(at, history.end()) << "trial " << id << " at " << budget;
      rule.record(id, budget, at->at("val_accuracy").template get<double>());
    }
    std::set<std::int64_t> next;
    for (const std::int64_t id : alive) {
      const auto& t = trials[static_cast<std::size_t>(id)];
      if (!rule.should_stop(id, budget)) {
        next.insert(id);
        continue;
      }
      ++stopped;
      EXPECT_GE(budget, 20) << id;
      EXPECT_EQ(t.at("budget"), budget) << id;
      EXPECT_EQ(t.at("status"), "completed") << id;  // as a trial Hyperband does not promote
    }
    alive = next;
  }
  for (const std::int64_t id : alive) EXPECT_EQ(trials[static_cast<std::size_t>(id)].at("budget"), 90) << id;
  EXPECT_GT(stopped, 0);
  EXPECT_FALSE(alive.empty());
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
}

TEST_F(Cli, AMetricTargetEndsTheSweepAfterTheRoundThatReachedItAndResumesSo) {
  // Successive halving's first round trains 9 trials to 10 steps: a target
  // at the best of those results ends the sweep there.
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9}");
  ASSERT_EQ(run("run " + write_sweep("whole.yaml", text) + " --out " + dir_ + "/whole").code, 0);
  const auto whole = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(whole.size(), 9u);
  double first_round_best = 0;
  for (const auto& t : whole) first_round_best = std::max(first_round_best, t.at("history")[0].at("val_accuracy").get<double>());
  std::set<std::int64_t> reaching;
  for (const auto& t : whole) {
    if (t.at("history")[0].at("val_accuracy") == first_round_best) reaching.insert(t.at("id").get<std::int64_t>());
  }
  auto with_target = [&](double target) {
    std::string t = text;
    std::ostringstream line;
    line << std::setprecision(17) << "metric: {name: val_accuracy, goal: maximize, target: " << target << "}";
    const std::string plain = "metric: {name: val_accuracy, goal: maximize}";
    return t.replace(t.find(plain), plain.size(), line.str());
  };
  const std::string sweep = write_sweep("target.yaml", with_target(first_round_best));
  const Result reached = run("run " + sweep + " --out " + dir_ + "/reached");
  ASSERT_EQ(reached.code, 0) << reached.err;
  const auto ended = results(dir_ + "/reached");
  ASSERT_EQ(ended.at("trials").size(), 9u);
  for (std::size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(ended.at("trials")[i].at("budget"), 10) << i;
    EXPECT_EQ(ended.at("trials")[i].at("history"), nlohmann::json::array({whole[i].at("history")[0]})) << i;
  }
  EXPECT_EQ(ended.at("metric").at("target"), first_round_best);
  EXPECT_TRUE(reaching.count(ended.at("target_reached").at("id").get<std::int64_t>())) << ended.at("target_reached");
  EXPECT_EQ(ended.at("target_reached").at("metric"), first_round_best);
  EXPECT_EQ(ended.at("target_reached").at("budget"), 10);
  EXPECT_NE(reached.out.find("reached the target val_accuracy"), std::string::npos) << reached.out;
  EXPECT_NE(reached.out.find("the sweep ended after that round"), std::string::npos) << reached.out;
  const Result status = run("status " + dir_ + "/reached");
  EXPECT_NE(status.out.find("reached the target val_accuracy"), std::string::npos) << status.out;
  // Resumed from trials/ (as after a kill before results.json), it ends in the same round.
  std::remove((dir_ + "/reached/results.json").c_str());
  const Result before = run("status " + dir_ + "/reached");
  EXPECT_NE(before.out.find("reached the target val_accuracy"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("resume ends the sweep after that round"), std::string::npos) << before.out;
  ASSERT_EQ(run("resume " + dir_ + "/reached").code, 0);
  EXPECT_EQ(results(dir_ + "/reached").at("trials"), ended.at("trials"));
  EXPECT_EQ(results(dir_ + "/reached").at("target_reached"), ended.at("target_reached"));
  // A target no trial reaches leaves the sweep whole.
  const Result unreached = run("run " + write_sweep("never.yaml", with_target(1.0)) + " --out " + dir_ + "/never");
  ASSERT_EQ(unreached.code, 0) << unreached.err;
  EXPECT_NE(unreached.out.find("no trial reached the target val_accuracy 1"), std::string::npos) << unreached.out;
  EXPECT_TRUE(results(dir_ + "/never").at("target_reached").is_null());
  expect_same_results(dir_ + "/never", dir_ + "/whole");
}

TEST_F(Cli, QuasiRandomTrialsSpreadEvenlyAndResumeAsOneRun) {
  // Successive halving's 9 trials: momentum is the sequence's second
  // dimension (base 3), so its 9 values fall one in each ninth of its range.
  const std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9, searcher: qmc}");
  const std::string sweep = write_sweep("qmc.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 9u);
  std::set<int> ninths;
  for (const auto& t : trials) ninths.insert(static_cast<int>(t.at("params").at("momentum").get<double>() / 0.9 * 9));
  EXPECT_EQ(ninths.size(), 9u);
  // Not random search's draws.
  const std::string random = write_sweep("random.yaml", std::regex_replace(text, std::regex("searcher: qmc"), "searcher: random"));
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  EXPECT_NE(results(dir_ + "/random").at("trials")[1].at("params"), trials[1].at("params"));
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut", "2");  // (the sweep trains in about four pieces)
}

// lr per optimizer, as branches: each trial's lr comes from the branch of its
// optimizer, validate shows the branches, and a cut run resumes as one.
TEST_F(Cli, BranchesGiveEachTrialTheRangeOfItsConditionAndResumeAsOneRun) {
  std::string text = tiny_sweep_searching("{method: sha, eta: 3, trials: 9, searcher: tpe, waves: 3}");
  const std::string plain_lr = "  lr: {distribution: log_uniform, min: 0.01, max: 0.5}\n";
  text.replace(text.find(plain_lr), plain_lr.size(),
               "  optimizer: {values: [sgd, adam]}\n"
               "  lr:\n"
               "    - {distribution: log_uniform, min: 0.05, max: 0.5, when: {optimizer: sgd}}\n"
               "    - {distribution: log_uniform, min: 0.0005, max: 0.005, when: {optimizer: adam}}\n");
  const std::string momentum = "  momentum: {distribution: uniform, min: 0.0, max: 0.9}\n";
  text.replace(text.find(momentum), momentum.size(), "  momentum: [{distribution: uniform, min: 0.0, max: 0.9, when: {optimizer: sgd}}]\n");
  const std::string sweep = write_sweep("branches.yaml", text);
  const Result validated = run("validate " + sweep);
  ASSERT_EQ(validated.code, 0) << validated.err;
  EXPECT_NE(validated.out.find("lr[1]"), std::string::npos) << validated.out;
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  const auto trials = results(dir_ + "/whole").at("trials");
  ASSERT_EQ(trials.size(), 9u);
  std::set<std::string> optimizers;
  for (const auto& t : trials) {
    const auto& params = t.at("params");
    const std::string optimizer = params.at("optimizer");
    const double lr = params.at("lr");
    optimizers.insert(optimizer);
    if (optimizer == "sgd") {
      EXPECT_TRUE(lr >= 0.05 && lr <= 0.5) << params;
      EXPECT_TRUE(params.contains("momentum")) << params;
    } else {
      EXPECT_TRUE(lr >= 0.0005 && lr <= 0.005) << params;
      EXPECT_FALSE(params.contains("momentum")) << params;
    }
  }
  EXPECT_EQ(optimizers.size(), 2u);
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut", "2");
}

TEST_F(Cli, PointsToEvaluateAreTheFirstTrialsAndPartOfTheSweep) {
  const std::string points = "  points_to_evaluate:\n    - {lr: 0.3, momentum: 0.5}\n    - {lr: 0.02}\n";
  std::string text = tiny_sweep_searching("\n  method: sha\n  eta: 3\n  trials: 9\n");
  text.insert(text.find("parameters:"), points);
  const std::string sweep = write_sweep("points.yaml", text);
  const Result whole = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(whole.code, 0) << whole.err;
  // Without the points, the same sweep: the points take trials 0 and 1, a
  // parameter a point leaves out is drawn as that trial draws it, and every
  // later trial is unchanged.
  std::string plain_text = text;
  plain_text.erase(plain_text.find(points), points.size());
  ASSERT_EQ(run("run " + write_sweep("plain.yaml", plain_text) + " --out " + dir_ + "/plain").code, 0);
  const auto with = results(dir_ + "/whole").at("trials"), without = results(dir_ + "/plain").at("trials");
  ASSERT_EQ(with.size(), 9u);
  EXPECT_EQ(with[0].at("params"), nlohmann::json({{"lr", 0.3}, {"momentum", 0.5}}));
  EXPECT_EQ(with[1].at("params"), nlohmann::json({{"lr", 0.02}, {"momentum", without[1].at("params").at("momentum")}}));
  EXPECT_NE(with[1].at("params"), without[1].at("params"));
  for (std::size_t i = 2; i < 9; ++i) EXPECT_EQ(with[i].at("params"), without[i].at("params")) << i;
  EXPECT_EQ(with[0].at("seed"), without[0].at("seed"));  // a trial's seed is its id's

  // The points are part of the sweep: a directory stopped inside a rung
  // refuses to resume with them edited, and resumes as the whole run without.
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1", 1);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cut --workers 1").code, 0);
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  ASSERT_FALSE(exists(dir_ + "/cut/results.json"));
  std::ofstream(dir_ + "/cut/sweep.yaml") << std::regex_replace(text, std::regex("lr: 0.02"), "lr: 0.03");
  const Result edited = run("resume " + dir_ + "/cut");
  EXPECT_EQ(edited.code, 2);
  EXPECT_NE(edited.err.find("differ in what would change its trials: search.points_to_evaluate"), std::string::npos)
      << edited.err;
  std::ofstream(dir_ + "/cut/sweep.yaml") << text;
  ASSERT_EQ(run("resume " + dir_ + "/cut").code, 0);
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

// hfta-tune `args` in the background, watching `dir` (see watched_tuner.h).
std::unique_ptr<test::WatchedTuner> watched_tuner(const std::string& args, const std::string& dir,
                                                  const std::string& err = "/dev/null", bool ignore_hangup = false) {
  return std::make_unique<test::WatchedTuner>(HFTA_TUNE_BINARY, args, dir, err, ignore_hangup);
}

TEST_F(Cli, SigkillAtRandomMomentsThenResumeEndsAsAnUninterruptedRun) {
  // Four brackets (budgets 10 to 270 steps), long enough for several kills.
  const std::string sweep = write_sweep("longer.yaml", longer_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  const std::string dir = dir_ + "/killed";
  // Each process is killed once it has finished 1 to 3 arrays, then 0 to 40
  // files further on (while the next array trains: mid-rung, mid-write,
  // anywhere), paced by its own progress.
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> arrays(1, 3), further_files(0, 40);
  int kills = 0;
  bool finished = false;
  for (int round = 0; round < 8 && !finished; ++round) {
    // Mid-rung checkpoints at every evaluation point, so kills also land between them.
    const auto tuner = watched_tuner(round == 0 ? "run " + sweep + " --out " + dir + " --checkpoint-every 0"
                                                : "resume " + dir + " --checkpoint-every 0",
                                     dir);
    std::optional<int> exited = tuner->await_printed("array of ", arrays(rng));
    if (!exited) exited = tuner->await_files(further_files(rng));
    if (!exited) {
      tuner->signal_and_wait(SIGKILL);
      ++kills;
    } else {
      ASSERT_TRUE(WIFEXITED(*exited) && WEXITSTATUS(*exited) == 0) << "round " << round;
      finished = true;
    }
  }
  RecordProperty("kills", kills);  // (one lands after the last array only if it is quick: not asserted)
  if (!finished) ASSERT_EQ(run("resume " + dir).code, 0);
  expect_same_results(dir, dir_ + "/whole");
  expect_checkpoints_as_named(dir);
  // What a kill left mid-write, each resume removed.
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    EXPECT_NE(f.path().extension(), ".tmp") << f.path();
  }

  // Kills that land whatever the machine's speed: every process exits as
  // SIGKILL would leave it (_exit, nothing flushed or cleaned up) right after
  // its first mid-rung checkpoint, so each continues where the last one died.
  const std::string again = dir_ + "/exited";
  const ScopedEnv exit_at_checkpoint("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "1");
  int exits = 0;
  Result last = run("run " + sweep + " --out " + again + " --checkpoint-every 0 --workers 1");
  for (; last.code == 9 && exits < 50; last = run("resume " + again + " --checkpoint-every 0")) ++exits;
  ASSERT_EQ(last.code, 0) << last.err;
  EXPECT_GE(exits, 3);
  expect_same_results(again, dir_ + "/whole");
  expect_checkpoints_as_named(again);
}

TEST_F(Cli, AReaderThatQuitsOrAHangUpUnderNohupDoesNotStopTheSweep) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  // `| head -1`: its output goes nowhere once head quits, and it trains on.
  const std::string piped = dir_ + "/piped";
  const std::string cmd = "( " + std::string(HFTA_TUNE_BINARY) + " run " + sweep + " --out " + piped +
                          "; echo $? > " + dir_ + "/code ) | head -1 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(slurp(dir_ + "/code"), "0\n");
  ASSERT_TRUE(exists(piped + "/results.json"));
  EXPECT_EQ(results(piped).at("finished"), true);
  // A hang-up it was told to ignore (nohup) leaves it training.
  // The hang-up lands after its first array, paced by the sweep's own log.
  const std::string dir = dir_ + "/nohup";
  const auto tuner = watched_tuner("run " + sweep + " --out " + dir + " --workers 1", dir, "/dev/null", true);
  ASSERT_FALSE(tuner->await_printed("array of ", 1).has_value()) << "it ended before the hang-up: " << tuner->printed();
  const int status = tuner->signal_and_wait(SIGHUP);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by the hang-up";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(results(dir).at("finished"), true);
}

TEST_F(Cli, CtrlCCheckpointsTheTrialsInTrainingAndExits1Resumable) {
  // Budgets 60, 180 and 540 steps, and no mid-rung checkpoint but the one the
  // signal asks for: a resume that continues a rung continues from that one.
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  const std::string dir = dir_ + "/stopped", err = dir_ + "/interrupted-stderr";
  // Each signal once the process has finished 0 to 2 arrays (0: once its
  // first line says it catches signals; before it catches them, a signal's
  // default action ends it), then 0 to 40 files further on. Where each lands is
  // not asserted; the signals the tuner sends itself below land where they must.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> arrays(0, 2), further_files(0, 40);
  int stops = 0, continued = 0;  // continued: stops that left a mid-rung checkpoint
  bool finished = false;
  for (int round = 0; round < 6 && !finished; ++round) {
    const int sig = round % 3 == 0 ? SIGINT : round % 3 == 1 ? SIGTERM : SIGHUP;  // SIGHUP: the terminal closed
    const auto tuner = watched_tuner(round == 0 ? "run " + sweep + " --out " + dir : "resume " + dir, dir, err);
    std::optional<int> exited = tuner->await_printed("array of ", arrays(rng));
    if (!exited) exited = tuner->await_files(further_files(rng));
    if (exited) {
      ASSERT_TRUE(WIFEXITED(*exited) && WEXITSTATUS(*exited) == 0) << "round " << round;
      finished = true;
      break;
    }
    const int status = tuner->signal_and_wait(sig);
    ++stops;
    const std::string said = slurp(err);
    ASSERT_TRUE(WIFEXITED(status)) << "round " << round << ": killed by the signal, not stopped\n" << said;
    if (WEXITSTATUS(status) == 0) {  // it had finished as the signal came
      finished = true;
      break;
    }
    EXPECT_EQ(WEXITSTATUS(status), 1) << said;
    EXPECT_NE(said.find(std::string("stopped by ") + (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP")),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("hfta-tune resume " + dir), std::string::npos) << said;
    // Nothing half-written: every temporary file was renamed into place or removed.
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
      EXPECT_EQ(f.path().string().find(".tmp"), std::string::npos) << f.path();
    }
    const Result status_now = run("status " + dir);
    EXPECT_NE(status_now.out.find("not running"), std::string::npos) << status_now.out;
    // Whether the next process continues a rung from the signal's checkpoint.
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
      continued += f.path().filename() == "partial.pt";
    }
  }
  RecordProperty("stops", stops);
  RecordProperty("continued", continued);  // signals inside a rung (others land in evaluations or start-up)
  if (!finished) ASSERT_EQ(run("resume " + dir).code, 0);
  expect_same_results(dir, dir_ + "/whole");
  expect_checkpoints_as_named(dir);

  // A signal inside a rung, for sure (the tuner sends it itself after its
  // third piece of training, one worker: the first of round 1's first array):
  // the resumed run continues that rung from the checkpoint the signal asked
  // for, the only one taken.
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "3", 1);
  const Result stopped = run("run " + sweep + " --out " + dir_ + "/once --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(stopped.code, 1) << stopped.err;
  EXPECT_NE(stopped.err.find("stopped by SIGINT"), std::string::npos) << stopped.err;
  const Result resumed = run("resume " + dir_ + "/once");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_TRUE(std::regex_search(resumed.out, std::regex("continues its rung from step [1-9]"))) << resumed.out;
  expect_same_results(dir_ + "/once", dir_ + "/whole");

  // A signal in a rung's last piece: the rung ends and is kept (the first
  // array's trials, as many as the probe let it hold), and the sweep stops
  // before the next array.
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "2", 1);
  const Result at_end = run("run " + sweep + " --out " + dir_ + "/at-end --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(at_end.code, 1) << at_end.err;
  std::smatch first;
  ASSERT_TRUE(std::regex_search(at_end.out, first, std::regex("array of ([0-9]+) trial\\(s\\) 0 -> 60 steps")))
      << at_end.out;
  const std::string kept = first[1].str() + " trial(s) with " + first[1].str() + " finished rung(s)";
  const Result status_at_end = run("status " + dir_ + "/at-end");
  EXPECT_NE(status_at_end.out.find(kept), std::string::npos) << kept << "\n" << status_at_end.out;
  EXPECT_TRUE(std::regex_search(status_at_end.out, std::regex("of 22 planned, best val_accuracy so far 0\\.[0-9]+ "
                                                                "\\(trial [0-9]+ at 60 steps\\)")))
      << status_at_end.out;
  ASSERT_EQ(run("resume " + dir_ + "/at-end").code, 0);
  expect_same_results(dir_ + "/at-end", dir_ + "/whole");
}

TEST_F(Cli, ATimeLimitStopsAfterACheckpointExits0AndResumeEndsAsOneRun) {
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);

  // The limit passes inside a rung, for sure (after the third piece of
  // training, one worker): stopped as Ctrl-C stops, but asked for.
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", "3", 1);
  // (The hook alone cuts it, by a count: no clock is passed.)
  const Result limited = run("run " + sweep + " --out " + dir_ + "/limited --workers 1");
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  ASSERT_EQ(limited.code, 0) << limited.err;
  // (How many rungs ended first depends on the array sizes the probe chose.)
  EXPECT_TRUE(std::regex_search(
      limited.out, std::regex("time limit reached: stopped after a checkpoint, with [0-9] of 22 rung results")))
      << limited.out;
  EXPECT_NE(limited.out.find("continue with hfta-tune resume " + dir_ + "/limited"), std::string::npos);
  EXPECT_FALSE(exists(dir_ + "/limited/results.json"));  // written when the sweep finishes
  EXPECT_NE(run("status " + dir_ + "/limited").out.find("not running"), std::string::npos);
  const Result resumed = run("resume " + dir_ + "/limited");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_TRUE(std::regex_search(resumed.out, std::regex("continues its rung from step [1-9]"))) << resumed.out;
  expect_same_results(dir_ + "/limited", dir_ + "/whole");

  // A limit that has passed as the sweep starts (as one shorter than start-up)
  // stops before the first array, and each resume under it too; then one
  // without ends as one run.
  {
    const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");
    const Result at_once = run("run " + sweep + " --out " + dir_ + "/at-once --time-limit 1h");
    ASSERT_EQ(at_once.code, 0) << at_once.err;
    EXPECT_NE(at_once.out.find("time limit of 1h reached: stopped after a checkpoint, with 0 of 22 rung results"),
              std::string::npos)
        << at_once.out;
    EXPECT_NE(at_once.out.find("none yet (failed and diverged trials do not count)"), std::string::npos) << at_once.out;
    ASSERT_EQ(run("resume " + dir_ + "/at-once --time-limit 1h").code, 0);
    EXPECT_FALSE(exists(dir_ + "/at-once/results.json"));
  }
  ASSERT_EQ(run("resume " + dir_ + "/at-once --time-limit 0").code, 0);  // 0: no limit, so no clock decides the end
  expect_same_results(dir_ + "/at-once", dir_ + "/whole");

  // A limit that is no duration is bad usage: nothing is written.
  // Past a double (no throw from inside the parser), and so small it would read as 0, no limit.
  const std::string too_long = "1" + std::string(400, '0') + "s", too_small = "0." + std::string(400, '0') + "1s";
  for (const char* bad : {"10x", "-5", "1h1h", "30m2h", "m", "1e3h", "0x10m", "1.2.3s", ".", "", too_long.c_str(),
                          too_small.c_str()}) {
    const Result r = run("run " + sweep + " --out " + dir_ + "/bad --time-limit '" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find("--time-limit: expected a duration such as 90s, 30m, 2h or 1h30m, got '" + std::string(bad) + "'"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(exists(dir_ + "/bad")) << bad;
  }
}

TEST_F(Cli, ASweepReadFromAPipeIsKeptAsGiven) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  // Read once: a pipe has nothing left for a second read, and an empty
  // sweep.yaml would leave the directory unresumable.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/piped";
  const std::string cmd = "cat '" + sweep + "' | " + HFTA_TUNE_BINARY + " run /dev/stdin --out '" + dir +
                          "' >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(slurp(dir + "/sweep.yaml"), kTinySweep);
  const Result resumed = run("resume " + dir + "");
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("time limit reached"), std::string::npos) << resumed.out << resumed.err;
}

TEST_F(Cli, AKillMidRungResumesFromTheLastCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(expect_cut_mid_rung_resumes_as_whole("", ""));
  // A finished rung leaves no partial checkpoint behind.
  const auto cut = results(dir_ + "/cut");  // (held: a range-for over a temporary's .at() would read it freed)
  for (const auto& t : cut.at("trials")) {
    EXPECT_FALSE(exists(dir_ + "/cut/trials/" + t.at("id").dump() + "/partial.pt"));
  }
}

TEST_F(Cli, EveryKillMidRungResumesFromTheLatestCheckpointEvenInAResumedRung) {
  // Each process stops right after its third mid-rung checkpoint, so every
  // resume finds one to continue from; in a rung that was itself resumed, it
  // must be recorded from the rung's start, not the resumed array's.
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "3", 1);
  Result r = run("run " + sweep + " --out " + dir_ + "/cut --checkpoint-every 0");
  int resumes = 0;
  for (; resumes < 40 && r.code == 9; ++resumes) {
    r = run("resume " + dir_ + "/cut --checkpoint-every 0");
    EXPECT_NE(r.out.find("continues its rung from step"), std::string::npos) << "resume " << resumes << ":\n" << r.out;
  }
  unsetenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GE(resumes, 3);
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

TEST_F(Cli, ADamagedCheckpointFallsBackToThePreviousRungs) {
  // Budgets 10, 30, 90 and 270 steps. Stopped (after mid-rung checkpoints)
  // until some trial is inside a rung after two finished ones; then its
  // mid-rung checkpoint is lost and its last rung's checkpoint damaged (in a
  // copy, both of its rungs' checkpoints). Resume loads the rung before
  // (checkpoint.prev.pt), or, with none left, trains from the start, rung by
  // rung, recording each rung's evaluation as the uninterrupted run did.
  const std::string sweep = write_sweep("longer.yaml", longer_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  const std::string dir = dir_ + "/cut";
  setenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "3", 1);
  Result r = run("run " + sweep + " --out " + dir + " --checkpoint-every 0");
  std::string victim, start, first, second;  // the trial, its first rung's and last two rungs' budgets ("10 steps")
  std::size_t finished_rungs = 0;
  for (int i = 0; i < 40 && r.code == 9; ++i) {
    for (int id = 0; id < 64 && victim.empty(); ++id) {
      const std::string json = slurp(dir + "/trials/" + std::to_string(id) + "/trial.json");
      if (json.empty()) continue;
      const auto t = nlohmann::json::parse(json);
      if (t.contains("partial") && t.at("rungs").size() >= 2) {
        victim = std::to_string(id);
        const auto& rungs = t.at("rungs");
        start = std::to_string(rungs[0].at("budget").get<int>()) + " steps";
        first = std::to_string(rungs[rungs.size() - 2].at("budget").get<int>()) + " steps";
        second = std::to_string(rungs.back().at("budget").get<int>()) + " steps";
        finished_rungs = rungs.size();
      }
    }
    if (!victim.empty()) break;
    r = run("resume " + dir + " --checkpoint-every 0");
  }
  unsetenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS");
  ASSERT_FALSE(victim.empty()) << "no trial was stopped inside its third rung";
  const std::string trial = "/trials/" + victim;
  ASSERT_TRUE(exists(dir + trial + "/checkpoint.prev.pt"));
  const std::string none_left = dir_ + "/none-left", fails_again = dir_ + "/fails-again";
  std::system(("rm '" + dir + trial + "/partial.pt' && cp -a '" + dir + "' '" + none_left + "' && truncate -s 100 '" +
               dir + trial + "/checkpoint.pt' && truncate -s 100 '" + none_left + trial + "/checkpoint.pt' '" +
               none_left + trial + "/checkpoint.prev.pt' && cp -a '" + none_left + "' '" + fails_again + "'")
                  .c_str());
  const Result resumed = run("resume " + dir);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const std::string fell_back = ": falling back to its checkpoint at " + first + " and training its rung to " + second +
                               " again";
  EXPECT_NE(resumed.out.find("trial " + victim + fell_back), std::string::npos) << resumed.out;
  expect_same_results(dir, dir_ + "/whole");
  const Result restarted = run("resume " + none_left);
  ASSERT_EQ(restarted.code, 0) << restarted.err;
  for (const std::string& said :
       {": no intact checkpoint at " + first, ": training from the start its rung to " + start + " again", fell_back}) {
    EXPECT_NE(restarted.out.find("trial " + victim + said), std::string::npos) << said << "\n" << restarted.out;
  }
  expect_same_results(none_left, dir_ + "/whole");
  // Rungs trained again count once in the progress line: results never pass the total.
  const std::regex count("results ([0-9]+)/([0-9]+)");
  for (auto m = std::sregex_iterator(restarted.out.begin(), restarted.out.end(), count); m != std::sregex_iterator(); ++m) {
    EXPECT_LE(std::stoi((*m)[1]), std::stoi((*m)[2])) << m->str();
  }
  EXPECT_EQ(nlohmann::json::parse(slurp(none_left + trial + "/trial.json")).at("rungs"),
            nlohmann::json::parse(slurp(dir_ + "/whole" + trial + "/trial.json")).at("rungs"));

  // Where training the lost rungs again fails, the trial keeps the rungs the
  // scheduler promoted it on, and fails at the rung it could not start: what
  // trial.json says is what the scheduler was told (state.json).
  setenv("HFTA_TUNE_FAULT_TRIALS", victim.c_str(), 1);
  const Result failed = run("resume " + fails_again);
  unsetenv("HFTA_TUNE_FAULT_TRIALS");
  ASSERT_EQ(failed.code, 0) << failed.err;
  EXPECT_NE(failed.out.find("trial " + victim + " failed: its checkpoint at " + second +
                            " was lost, and training its rungs again failed: injected fault"),
            std::string::npos)
      << failed.out;
  const auto whole = nlohmann::json::parse(slurp(dir_ + "/whole" + trial + "/trial.json"));
  const auto kept = nlohmann::json::parse(slurp(fails_again + trial + "/trial.json"));
  const auto& rungs = kept.at("rungs");
  const std::size_t n = finished_rungs;
  ASSERT_EQ(rungs.size(), n + 1) << kept.dump(1);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(rungs[i], whole.at("rungs")[i]) << i;
  EXPECT_EQ(rungs[n].at("budget"), whole.at("rungs")[n].at("budget"));
  EXPECT_EQ(rungs[n].at("status"), "failed");
  const std::int64_t last_step = rungs[n - 1].at("steps");
  nlohmann::json history_then = nlohmann::json::array();
  for (const auto& e : whole.at("history")) {
    if (e.at("step") <= last_step) history_then.push_back(e);
  }
  EXPECT_EQ(kept.at("history"), history_then);
  nlohmann::json told = nlohmann::json::array();
  const auto state = nlohmann::json::parse(slurp(fails_again + "/state.json"));
  for (const auto& e : state.at("scheduler").at("results")) {
    if (std::to_string(e.at("trial").get<int>()) == victim) told.push_back({e.at("budget"), e.at("status")});
  }
  nlohmann::json recorded = nlohmann::json::array();
  for (const auto& e : rungs) recorded.push_back({e.at("budget"), e.at("status") == "failed" ? "diverged" : e.at("status")});
  EXPECT_EQ(told, recorded);
  const auto result = results(fails_again);
  EXPECT_EQ(result.at("trials")[std::stoi(victim)].at("status"), "failed");
  EXPECT_EQ(result.at("trials")[std::stoi(victim)].at("budget"), rungs[n - 1].at("budget"));
}

TEST_F(Cli, ACheckpointDamagedDuringARunIsTrainedAgainWhenItsTrialIsPromoted) {
  // Hyperband at 10, 30 and 90 steps. As soon as they are written, the 30-step
  // checkpoint of a trial that goes on to 90 is damaged (it falls back to its
  // 10-step one, checkpoint.prev.pt), and the 10-step one of another trial
  // that is promoted (it has none before: it trains from the start). Each is
  // found when its trial is promoted, and trained again as it was. A third
  // trial's is damaged after its round checked it, as its array reads it: it
  // trains again after the round's other arrays. The sweep ends as one whose
  // disk never failed, and the progress line counts each result once.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  std::string to_90, to_30, at_load;
  for (int id = 0; id < 17; ++id) {
    const auto rungs = nlohmann::json::parse(slurp(dir_ + "/whole/trials/" + std::to_string(id) + "/trial.json")).at("rungs");
    if (rungs.size() == 3 && to_90.empty()) to_90 = std::to_string(id);
    else if (rungs.size() >= 2 && rungs[0].at("budget") == 10 && to_30.empty()) to_30 = std::to_string(id);
    else if (rungs.size() >= 2 && rungs[0].at("budget") == 10 && at_load.empty()) at_load = std::to_string(id);
  }
  ASSERT_FALSE(to_90.empty() || to_30.empty() || at_load.empty());
  // (Unset however the test ends: every later test's runs would damage checkpoints.)
  const ScopedEnv damage("HFTA_TUNE_DAMAGE_CHECKPOINTS", to_90 + "@30," + to_30 + "@10");
  const ScopedEnv at_load_damage("HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD", at_load + "@10");
  for (const std::string workers : {"1", "2"}) {
    SCOPED_TRACE("workers " + workers);
    const std::string dir = dir_ + "/damaged-" + workers;
    const Result r = run("run " + sweep + " --out " + dir + " --workers " + workers);
    ASSERT_EQ(r.code, 0) << r.err;
    for (const std::string& said :
         {"trial " + to_90 + ": no intact checkpoint at 30 steps",
          "trial " + to_90 + ": falling back to its checkpoint at 10 steps and training its rung to 30 steps again",
          "trial " + to_30 + ": no intact checkpoint at 10 steps",
          "trial " + to_30 + ": training from the start its rung to 10 steps again",
          "trial " + at_load + ": its checkpoint at 10 steps could not be read: ",
          std::string("; it trains its lost rungs again once this round's arrays are done")}) {
      EXPECT_NE(r.out.find(said), std::string::npos) << said << "\n" << r.out;
    }
    EXPECT_LT(r.out.find("trial " + at_load + ": its checkpoint at 10 steps could not be read: "),
              r.out.find("trial " + at_load + ": training from the start its rung to 10 steps again"))
        << r.out;
    expect_same_results(dir, dir_ + "/whole");
    EXPECT_NE(r.out.find("| trials done 17/17, results 22/22"), std::string::npos) << r.out;
    // (Each rung counted once: the total is the plan's, and never passed.)
    const std::regex count("results ([0-9]+)/([0-9]+)");
    for (auto m = std::sregex_iterator(r.out.begin(), r.out.end(), count); m != std::sregex_iterator(); ++m) {
      EXPECT_EQ(std::stoi((*m)[2]), 22) << m->str();
    }
  }
  // A checkpoint lost again once trained again (here: damaged at both reads)
  // fails its trial rather than training it for ever; the sweep goes on.
  const ScopedEnv twice("HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD", at_load + "@10," + at_load + "@10");
  const Result r = run("run " + sweep + " --out " + dir_ + "/lost-twice");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("trial " + at_load + " failed: trial " + at_load + ": its checkpoint at 10 steps could not be read"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| trials done 17/17, results 22/22"), std::string::npos) << r.out;
  const auto lost = results(dir_ + "/lost-twice").at("trials");
  EXPECT_EQ(lost[std::stoi(at_load)].at("status"), "failed");
  EXPECT_EQ(lost[std::stoi(at_load)].at("budget"), 10);
}

TEST_F(Cli, ASecondRunOnTheSameDirectoryRefusesNamingTheHolder) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  ::mkdir((dir_ + "/busy").c_str(), 0755);
  std::string holder;
  auto lock = hfta::core::ExperimentLock::take(dir_ + "/busy", &holder);
  ASSERT_TRUE(lock.has_value());
  const Result r = run("run " + sweep + " --out " + dir_ + "/busy");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("pid " + std::to_string(::getpid())), std::string::npos) << r.err;
  EXPECT_FALSE(exists(dir_ + "/busy/results.json"));
  // Once the holder has written its sweep, run names it too (resume would refuse).
  std::ofstream(dir_ + "/busy/sweep.json") << "{}\n";
  const Result again = run("run " + sweep + " --out " + dir_ + "/busy");
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("in use by another hfta-tune (pid " + std::to_string(::getpid())), std::string::npos)
      << again.err;
  // A directory it cannot write in (here: its lock file cannot be opened) is
  // refused as bad input, before anything is written.
  std::filesystem::create_directories(dir_ + "/unwritable/lock");
  const Result unwritable = run("run " + sweep + " --out " + dir_ + "/unwritable");
  EXPECT_EQ(unwritable.code, 2);
  EXPECT_NE(unwritable.err.find("hfta-tune run: cannot write in " + dir_ + "/unwritable: cannot open "), std::string::npos)
      << unwritable.err;
  EXPECT_FALSE(exists(dir_ + "/unwritable/sweep.yaml"));
  const Result status = run("status " + dir_ + "/nowhere");
  EXPECT_EQ(status.code, 2);
  EXPECT_NE(status.err.find("does not exist"), std::string::npos) << status.err;
}

TEST_F(Cli, EveryShippedConfigValidatesAndPlans) {
  // validate and plan also refuse what the trainer cannot train (run's checks).
  for (const auto& entry : std::filesystem::directory_iterator(std::string(HFTA_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string path = entry.path().string();
    const Result valid = run("validate " + path);
    EXPECT_EQ(valid.code, 0) << path << "\n" << valid.err;
    const Result plan = run("plan --json " + path);
    ASSERT_EQ(plan.code, 0) << path << "\n" << plan.err;
    EXPECT_FALSE(nlohmann::json::parse(plan.out).at("brackets").empty()) << path;
  }
}

TEST_F(Cli, PlanPrintsBracketsAndJson) {
  const Result text = run("plan " + quickstart_);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("bracket s=2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("total budget"), std::string::npos);
  const Result json = run("plan --json --fusion off " + quickstart_);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("format"), 1);
  EXPECT_EQ(j.at("brackets").size(), 3u);
  EXPECT_EQ(j.at("brackets")[0].at("rungs")[0].at("n"), 9);
  EXPECT_EQ(j.at("brackets")[0].at("rungs")[0].at("arrays").size(), 9u);  // alone
  EXPECT_EQ(run("plan " + quickstart_ + " --device tpu").code, 2);
  const std::string bad = write_sweep("bad.yaml", hfta::test::sweep_yaml({{"metric", ""}}));
  EXPECT_EQ(run("plan " + bad).code, 2);
}

TEST_F(Cli, HelpForEveryVerb) {
  // Each verb's help names the verb's own arguments.
  const std::vector<std::pair<std::string, std::string>> verbs = {
      {"run", "--fusion"}, {"resume", "dir"},        {"plan", "--json"},
      {"validate", "--json"}, {"status", "dir"}, {"export", "--format"}};
  for (const auto& [verb, option] : verbs) {
    SCOPED_TRACE(verb);
    const Result r = run(verb + " --help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find(option), std::string::npos) << r.out;
  }
  const Result top = run("--help");
  EXPECT_EQ(top.code, 0);
  for (const auto& [verb, option] : verbs) {
    EXPECT_NE(top.out.find(verb), std::string::npos);
  }
}

TEST_F(Cli, CanonicalJsonValidatesAsASweep) {
  const Result first = run("validate --json " + quickstart_);
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string path = write_sweep("canonical.json", first.out);
  const Result second = run("validate --json " + path);
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
}

TEST_F(Cli, WhatARunKilledBeforeItsSweepBeganLeavesIsTakenOverAndADamagedSweepJsonIsNamed) {
  // A kill before sweep.json is in place (it is written last, after run.json)
  // leaves the lock, sweep.yaml, run.json and perhaps sweep.json.tmp: resume
  // points at run, and run takes the directory over.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const std::string dir = dir_ + "/killed";
  ::mkdir(dir.c_str(), 0755);
  // (A lock holds the pid of the run that wrote it; the others, what was written of them.)
  for (const char* name : {"sweep.yaml", "run.json", "sweep.json.tmp"}) std::ofstream(dir + "/" + name) << "{";
  std::ofstream(dir + "/lock") << "4242\n";
  const Result resumed = run("resume " + dir);
  EXPECT_EQ(resumed.code, 2);
  EXPECT_NE(resumed.err.find("start it again with hfta-tune run"), std::string::npos) << resumed.err;
  // Killed earlier still: only the lock and a sweep.yaml not yet in place.
  const std::string earlier = dir_ + "/killed-earlier";
  ::mkdir(earlier.c_str(), 0755);
  std::ofstream(earlier + "/sweep.yaml.tmp") << "{";
  std::ofstream(earlier + "/lock") << "4242\n";
  for (const char* verb : {"resume ", "status "}) {
    const Result r = run(verb + earlier);
    EXPECT_EQ(r.code, 2) << verb;
    EXPECT_NE(r.err.find("start it again with hfta-tune run"), std::string::npos) << verb << r.err;
  }
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", "1", 1);
  const Result again = run("run " + sweep + " --out " + dir + " --fusion off");
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/run.json")).at("fusion"), "off");
  // sweep.json damaged from outside: status names it (resume would refuse it).
  std::ofstream(dir + "/sweep.json") << "{";
  const Result damaged = run("status " + dir);
  EXPECT_EQ(damaged.code, 1);
  EXPECT_NE(damaged.err.find("sweep.json is damaged"), std::string::npos) << damaged.err;
  EXPECT_EQ(damaged.out.find("continue with hfta-tune resume"), std::string::npos) << damaged.out;
  for (const char* verb : {"resume ", "export "}) {  // as status: a damaged file of the run's, not bad usage
    const Result r = run(verb + dir);
    EXPECT_EQ(r.code, 1) << verb;
    EXPECT_NE(r.err.find(dir + "/sweep.json is damaged (it was written whole: changed from outside)"), std::string::npos)
        << verb << r.err;
  }
}

TEST_F(Cli, Version) {
  const Result r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("hfta-tune ", 0), 0u) << r.out;
}

TEST_F(Cli, BadUsageExits2) {
  EXPECT_EQ(run("").code, 2);
  const Result verb = run("rnu " + quickstart_);
  EXPECT_EQ(verb.code, 2);
  EXPECT_NE(verb.err.find("unknown verb 'rnu' (did you mean 'run'?)"), std::string::npos) << verb.err;
  // An --out of other files, or one that cannot be made, is refused before anything is written.
  ::mkdir((dir_ + "/project").c_str(), 0755);
  std::ofstream(dir_ + "/project/notes.txt") << "mine\n";
  const Result cluttered = run("run " + quickstart_ + " --out " + dir_ + "/project");
  EXPECT_EQ(cluttered.code, 2);
  EXPECT_NE(cluttered.err.find("holds other files (notes.txt)"), std::string::npos) << cluttered.err;
  EXPECT_FALSE(exists(dir_ + "/project/sweep.json"));
  EXPECT_EQ(run("run " + quickstart_ + " --out " + dir_ + "/project/notes.txt/sub").code, 2);
  EXPECT_EQ(run("validate").code, 2);
  EXPECT_EQ(run("validate " + quickstart_ + " --no-such-flag").code, 2);
  // Values the options cannot take are refused before anything is written.
  for (const std::string flags : {"--checkpoint-every nan", "--workers 0", "--seed 9223372036854775808", "--out ''",
                                  "--prefetch 65", "--prefetch -1", "--prefetch some"}) {
    const Result r = run("run " + quickstart_ + " --out " + dir_ + "/never " + flags);
    EXPECT_EQ(r.code, 2) << flags << ": " << r.err;
    EXPECT_NE(r.err.find("expected"), std::string::npos) << flags << ": " << r.err;
  }
  EXPECT_FALSE(exists(dir_ + "/never"));
  // A flag that lost its value is no path ("--out --workers" made a folder named --workers).
  const Result flag_as_path = run("run " + quickstart_ + " --out --workers");
  EXPECT_EQ(flag_as_path.code, 2);
  EXPECT_NE(flag_as_path.err.find("got '--workers' (a path that starts with '-': write ./--workers)"), std::string::npos)
      << flag_as_path.err;
  EXPECT_FALSE(exists("--workers"));
  for (const std::string output : {"--output --format", "--output ''"}) {
    EXPECT_EQ(run("export " + dir_ + "/project " + output).code, 2) << output;
  }
  EXPECT_FALSE(exists("--format"));
}

}  // namespace

namespace {

// `command` in a shell; its exit code (-1: killed by a signal).
int shell(const std::string& command) {
  const int status = std::system(("bash -c '" + command + "'").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_F(Cli, ClosedStandardStreamsNeverTakeTheLockFilesPlace) {
  // Closed, descriptor 1 went to the first file opened, the lock: the plan
  // overwrote the pid, and status and a second run said "pid unknown".
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/closed";
  for (const std::string closed : {">&- 2>/dev/null", "<&- >&- 2>&-"}) {
    SCOPED_TRACE(closed);
    std::filesystem::remove_all(dir);
    EXPECT_EQ(shell(std::string(HFTA_TUNE_BINARY) + " run " + sweep + " --out " + dir + " --workers 1 " + closed), 0);
    EXPECT_TRUE(std::regex_match(slurp(dir + "/lock"), std::regex("[0-9]+\n"))) << slurp(dir + "/lock");
    EXPECT_TRUE(exists(dir + "/results.json"));
  }
}

TEST_F(Cli, AFileSizeLimitFailsTheWriteResumablyRatherThanKillingTheRun) {
  // Past `ulimit -f` the kernel sends SIGXFSZ, which killed hfta-tune mid-write
  // with no word (exit 153) and a temporary file left.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/limited";
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole --workers 1").code, 0);
  const std::string err = dir_ + "/limited.err";
  EXPECT_EQ(shell("ulimit -f 40; " + std::string(HFTA_TUNE_BINARY) + " run " + sweep + " --out " + dir +
                  " --workers 1 >/dev/null 2>" + err),
            1);
  EXPECT_NE(slurp(err).find("File too large"), std::string::npos) << slurp(err);
  EXPECT_NE(slurp(err).find("hfta-tune resume " + dir), std::string::npos) << slurp(err);
  const Result resumed = run("resume " + dir + " --workers 1");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  expect_same_results(dir, dir_ + "/whole");
}

TEST_F(Cli, ResumeTrainsWithTheThreadsTheRunBeganWith) {
  // Sums split into as many parts as there are threads: OMP_NUM_THREADS=3 on
  // resume gave other results than the run's 1, and said nothing.
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  {
    const ScopedEnv one("OMP_NUM_THREADS", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole --workers 1").code, 0);
    const ScopedEnv kill("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "2");
    ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/cut --workers 1 --checkpoint-every 0").code, 9);
  }
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ + "/cut/run.json")).at("threads"), 1);
  const ScopedEnv three("OMP_NUM_THREADS", "3");
  const Result resumed = run("resume " + dir_ + "/cut --checkpoint-every 0");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("note: 1 thread per array, as the run that began the sweep had (3 here)"),
            std::string::npos)
      << resumed.out;
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

TEST_F(Cli, APathThatStartsWithADashIsToldHowToWriteIt) {
  const Result r = run("validate -dash.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'-dash.yaml' reads as an option: a path that starts with '-' is written ./-dash.yaml"),
            std::string::npos)
      << r.err;
}

TEST_F(Cli, PlanSizesArraysWithinTheAddressSpaceLimit) {
  // `ulimit -v` (like a cgroup's limit) is not in MemAvailable: arrays were
  // planned within the machine's free memory, and failed with std::bad_alloc.
  if (hfta::test::kAddressSanitizer) GTEST_SKIP() << "ASan's shadow memory needs more address space than any ulimit -v";
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), out = dir_ + "/plan.out";
  ASSERT_EQ(shell("ulimit -v 6000000; " + std::string(HFTA_TUNE_BINARY) + " plan " + sweep + " >" + out), 0);
  std::smatch m;
  const std::string plan = slurp(out);
  ASSERT_TRUE(std::regex_search(plan, m, std::regex("arrays planned within ([0-9]+) MiB"))) << plan;
  EXPECT_LT(std::stod(m[1]), 6000000.0 / 1024) << plan;
  EXPECT_GT(std::stod(m[1]), 0) << plan;
}

// A --out so long that the files inside it would pass PATH_MAX failed mid-run
// (trials/<id>/checkpoint.next.pt.tmp), and every resume again: refused first.
TEST_F(Cli, AnOutTooLongForTheFilesInsideItIsRefusedBeforeAnythingIsWritten) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  std::string out = dir_ + "/deep";
  while (out.size() < 4060) out += "/" + std::string(200, 'c');
  const Result r = run("run " + sweep + " --out " + out.substr(0, 4060));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bytes long, and the files written inside it add up to 64 more, past the 4095 bytes a path may "
                       "have; give a shorter one"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(dir_ + "/deep"));
}

// A file named lock that hfta-tune did not write is never written over: not
// through a symbolic link, and not a file of someone's (it held "precious").
TEST_F(Cli, ALockFileNotOfHftaTunesIsNeverWrittenOver) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const std::string victim = dir_ + "/victim.txt", linked = dir_ + "/linked", foreign = dir_ + "/foreign";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_directory(linked);
  std::filesystem::create_symlink(victim, linked + "/lock");
  const Result through_link = run("run " + sweep + " --out " + linked);
  EXPECT_EQ(through_link.code, 2);
  EXPECT_NE(through_link.err.find("lock is a symbolic link, not a lock hfta-tune made: remove it"), std::string::npos)
      << through_link.err;
  std::filesystem::create_directory(foreign);
  std::ofstream(foreign + "/lock") << "precious\n";
  const Result someones = run("run " + sweep + " --out " + foreign);
  EXPECT_EQ(someones.code, 2);
  EXPECT_NE(someones.err.find("lock holds something other than a pid"), std::string::npos) << someones.err;
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_EQ(slurp(foreign + "/lock"), "precious\n");
  EXPECT_FALSE(exists(linked + "/sweep.yaml"));
  EXPECT_FALSE(exists(foreign + "/sweep.yaml"));
  // status of a stopped sweep names such a lock first, rather than offer a resume that refuses it.
  const std::string stopped = dir_ + "/stopped";
  ASSERT_EQ(run("run " + sweep + " --out " + stopped + " --workers 1").code, 0);
  std::filesystem::remove(stopped + "/results.json");
  std::filesystem::remove(stopped + "/lock");
  std::filesystem::create_symlink(victim, stopped + "/lock");
  const Result linked_status = run("status " + stopped);
  EXPECT_NE(linked_status.out.find("lock is a symbolic link, not a lock hfta-tune made: remove it, then continue with "
                                   "hfta-tune resume"),
            std::string::npos)
      << linked_status.out;
  std::filesystem::remove(stopped + "/lock");
  std::ofstream(stopped + "/lock") << "precious\n";
  EXPECT_NE(run("status " + stopped).out.find("lock holds something other than a pid, so it is not a lock hfta-tune "
                                              "made: move it away, then continue with hfta-tune resume"),
            std::string::npos);
  std::ofstream(stopped + "/lock") << "123\n";  // a lock a killed run left
  EXPECT_NE(run("status " + stopped).out.find("; continue with hfta-tune resume"), std::string::npos);
  EXPECT_EQ(slurp(victim), "precious\n");
}

// Runs hfta-tune `args` (stderr to `err`) and returns its exit code; `opened`
// says whether it opened `fifo` while it ran. A writer opening a FIFO blocks
// until a reader comes, so a thread here waits as that writer, again after
// each open: a tuner that opens the FIFO to read lets the thread on (and then
// reads an empty file rather than waiting for ever). Once the tuner has
// ended, this side holds the FIFO open to read, which lets the thread go.
// Nothing reads a clock. (A tuner that opened the FIFO and ended at once
// could end before the thread marks the open: this can miss such an open,
// never invent one.)
int exit_code_watching_fifo(const std::string& args, const std::string& fifo, const std::string& err, bool& opened) {
  test::WatchedTuner tuner(HFTA_TUNE_BINARY, args, "", err);
  std::atomic<bool> ended{false};
  std::thread writer([&] {
    while (!ended) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
      if (!ended) opened = true;
      if (fd >= 0) ::close(fd);
    }
  });
  const int status = tuner.wait();
  ended = true;
  const int release = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // held until the thread is gone
  writer.join();
  if (release >= 0) ::close(release);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A FIFO put in an experiment directory from outside blocked status and
// resume for ever (reading it waits for a writer): they now say what it is.
TEST_F(Cli, AFifoInTheExperimentDirectoryIsNamedNotWaitedOn) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/sweep";
  ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 0);
  std::filesystem::remove(dir + "/results.json");  // unfinished again: status and resume read trials/
  ASSERT_TRUE(exists(dir + "/trials/0/trial.json"));
  std::filesystem::remove(dir + "/trials/0/trial.json");
  ASSERT_EQ(::mkfifo((dir + "/trials/0/trial.json").c_str(), 0644), 0);
  const std::string status = dir_ + "/status.err";
  bool read_fifo = false;
  EXPECT_EQ(exit_code_watching_fifo("status " + dir, dir + "/trials/0/trial.json", status, read_fifo), 0);
  EXPECT_FALSE(read_fifo);
  EXPECT_NE(slurp(status).find("trial.json cannot be opened (not a regular file)"), std::string::npos) << slurp(status);
  std::filesystem::remove(dir + "/sweep.yaml");
  ASSERT_EQ(::mkfifo((dir + "/sweep.yaml").c_str(), 0644), 0);
  const std::string resume = dir_ + "/resume.err";
  EXPECT_EQ(exit_code_watching_fifo("resume " + dir, dir + "/sweep.yaml", resume, read_fifo), 2);
  EXPECT_FALSE(read_fifo);
  EXPECT_NE(slurp(resume).find("sweep.yaml: not a regular file (changed from outside)"), std::string::npos)
      << slurp(resume);
}

// The resume command printed for a directory whose name a shell would split
// pastes back as one word.
TEST_F(Cli, TheResumeCommandPrintedQuotesADirectoryAShellWouldSplit) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/exp 1's";
  const Result r = run("run " + sweep + " --out \"" + dir + "\" --workers 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("continue with hfta-tune resume '" + dir_ + "/exp 1'\\''s'"), std::string::npos) << r.out;
  const int pasted =
      std::system((std::string(HFTA_TUNE_BINARY) + " resume '" + dir_ + "/exp 1'\\''s' >/dev/null").c_str());
  EXPECT_TRUE(WIFEXITED(pasted) && WEXITSTATUS(pasted) == 0);
}

// A file name within NAME_MAX whose NAME.tmp is not: the temporary is cut to fit.
TEST_F(Cli, ExportWritesAFileWhoseNameIsNearTheLongestAllowed) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/sweep";
  ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 0);
  const std::string name = dir_ + "/" + std::string(250, 'f') + ".json";
  const Result r = run("export " + dir + " --output " + name);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(name)).contains("trials"));
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

// An experiment inside another's directory would mix with its files.
TEST_F(Cli, AnOutInsideAnotherExperimentIsRefused) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), dir = dir_ + "/outer";
  ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 0);
  for (const std::string inner : {dir + "/trials/99", dir + "/trials/0/sub", dir + "/inner"}) {
    const Result r = run("run " + sweep + " --out " + inner);
    EXPECT_EQ(r.code, 2) << inner;
    EXPECT_NE(r.err.find("is inside the experiment " + dir + "; give --out a directory outside it"), std::string::npos)
        << r.err;
    EXPECT_FALSE(exists(inner)) << inner;
  }
}

// A quoted ~ reaches run as it is, and names ./~: said, and the run goes on.
TEST_F(Cli, AnOutWithAnUnexpandedTildeIsNoted) {
  const ScopedEnv time_up("HFTA_TUNE_TIME_UP_AT_START", "1");  // each run stops as it starts: no clock is read
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep), out = dir_ + "/tilde.out";
  ASSERT_EQ(shell("cd " + dir_ + " && " + std::string(HFTA_TUNE_BINARY) + " run " + sweep +
                  " --out \"~/exp\" --workers 1 >" + out),
            0);
  EXPECT_NE(slurp(out).find("note: --out ~/exp begins with a ~ that no shell expanded (it was quoted): the directory is "
                            "./~/exp, not one in your home directory"),
            std::string::npos)
      << slurp(out);
  EXPECT_TRUE(exists(dir_ + "/~/exp/sweep.json"));
}

// A model that does not fit even alone fails its trials saying what ran out,
// how much the model needs, and what to change (std::bad_alloc alone said none
// of it); the sweep still ends, with no best trial and exit 1 (every trial failed).
TEST_F(Cli, AModelPastTheMemoryFailsItsTrialsSayingWhatToChange) {
  if (hfta::test::kAddressSanitizer) GTEST_SKIP() << "ASan's shadow memory needs more address space than any ulimit -v";
  std::string text = kTinySweep;
  text.replace(text.find("depth: 1, width: 32"), 19, "depth: 4, width: 65536");
  text.replace(text.find("method: hyperband, eta: 3"), 25, "method: random, trials: 2");
  const std::string sweep = write_sweep("huge.yaml", text), out = dir_ + "/run.out";
  const std::string dir = dir_ + "/huge";
  // (Threads and malloc arenas pinned: each reserves address space, by the core count.)
  ASSERT_EQ(shell("ulimit -v 6000000; OMP_NUM_THREADS=2 MALLOC_ARENA_MAX=2 " + std::string(HFTA_TUNE_BINARY) + " run " +
                  sweep + " --out " + dir + " --workers 1 >" + out + " 2>&1"),
            1)
      << slurp(out);
  EXPECT_NE(slurp(out).find("hfta-tune run: every trial failed (trial 0: out of memory on cpu with the model alone (a "
                            "host allocation was refused)"),
            std::string::npos)
      << slurp(out);
  const auto r = results(dir);
  ASSERT_EQ(r.at("trials").size(), 2u) << slurp(out);
  for (const auto& t : r.at("trials")) {
    EXPECT_EQ(t.at("status"), "failed");
    const std::string error = t.at("error");
    EXPECT_NE(error.find("out of memory on cpu with the model alone ("), std::string::npos) << error;
    EXPECT_TRUE(std::regex_search(error, std::regex(": it is estimated at [0-9]+ MiB, and arrays are planned within "
                                                    "[0-9]+ MiB; make it smaller: its task options or batch_size$")))
        << error;
  }
  EXPECT_TRUE(r.at("best").is_null());
  EXPECT_NE(slurp(out).find("will likely fail out of memory"), std::string::npos) << slurp(out);
}

// Each trial of a results.json, by id.
std::map<std::int64_t, nlohmann::json> trials_by_id(const nlohmann::json& results) {
  std::map<std::int64_t, nlohmann::json> out;
  for (const auto& t : results.at("trials")) out[t.at("id")] = t;
  return out;
}

// Population based training over kTinySweep's MLP: 4 members, a generation
// every 10 steps up to 90, the worst member replaced by a clone of the best.
std::string tiny_pbt_sweep(const std::string& more = "") {
  std::string text = tiny_sweep_searching("{method: pbt, population: 4" + more + "}");
  return text.replace(text.find("max: 0.5"), 8, "max: 0.2");  // (no member diverges)
}

TEST_F(Cli, PopulationBasedTrainingClonesTheBestAndExploresItsHyperparameters) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep());
  const Result r = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("generation 0: 4 trials to 10 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("generation 8: 4 trials to 90 steps"), std::string::npos) << r.out;
  const auto all = results(dir_ + "/whole");
  const auto& trials = all.at("trials");
  // One member replaced after each of the 8 generations before the last.
  ASSERT_EQ(trials.size(), 12u);
  const auto by_id = trials_by_id(all);
  std::set<double> replaced_at;
  int perturbed = 0;
  for (const auto& [id, t] : by_id) {
    SCOPED_TRACE("trial " + std::to_string(id));
    if (id < 4) {
      EXPECT_FALSE(t.contains("parent"));
      continue;
    }
    ASSERT_TRUE(t.contains("parent"));
    const auto parent = by_id.at(t.at("parent").at("trial"));
    const double from = t.at("parent").at("budget");
    replaced_at.insert(from);
    EXPECT_LT(parent.at("id").get<std::int64_t>(), id);
    // Up to where it took over, its history is its parent's.
    std::size_t k = 0;
    for (; k < parent.at("history").size() && parent.at("history")[k].at("step").get<double>() <= from; ++k) {
      ASSERT_LT(k, t.at("history").size());
      EXPECT_EQ(t.at("history")[k], parent.at("history")[k]);
    }
    EXPECT_GT(t.at("history").size(), k);  // and it trained on from there
    // Each hyperparameter perturbed by 1.2 or 0.8 (clamped), or drawn again.
    for (const auto& [name, lo, hi] : {std::tuple{"lr", 0.01, 0.2}, std::tuple{"momentum", 0.0, 0.9}}) {
      const double mine = t.at("params").at(name), theirs = parent.at("params").at(name);
      perturbed += mine == std::clamp(theirs * 1.2, lo, hi) || mine == std::clamp(theirs * 0.8, lo, hi);
    }
    EXPECT_GE(t.at("params").at("lr").get<double>(), 0.01);
    EXPECT_LE(t.at("params").at("lr").get<double>(), 0.2);
  }
  EXPECT_EQ(replaced_at, (std::set<double>{10, 20, 30, 40, 50, 60, 70, 80}));
  EXPECT_GE(perturbed, 8);  // of 16 values, 12 perturbed on average, 4 drawn again
  // Four trials reach the end; the best, when it is a clone, shows its lineage.
  int at_end = 0;
  for (const auto& t : trials) at_end += t.at("budget") == 90;
  EXPECT_EQ(at_end, 4);
  const auto& best = all.at("best");
  if (by_id.at(best.at("id")).contains("parent")) {
    ASSERT_TRUE(best.contains("lineage"));
    EXPECT_EQ(best.at("lineage").back().at("id"), best.at("id"));
    EXPECT_EQ(best.at("lineage").front().at("from_budget"), 0);
    EXPECT_LT(best.at("lineage").front().at("id").get<std::int64_t>(), 4);
  }
  // CSV names each trial's parent.
  const Result csv = run("export " + dir_ + "/whole --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",parent,parent_budget,model_params,"
                         "final_val_balanced_accuracy,final_val_f1\n"), std::string::npos) << csv.out;

  // Cut after 5 arrays (generations) and resumed: as one run.
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  // Each trial alone, with the same math: the same metrics.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  const auto alone = results(dir_ + "/alone");
  ASSERT_EQ(alone.at("trials").size(), trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(alone.at("trials")[i].at("params"), trials[i].at("params")) << i;
    EXPECT_NEAR(alone.at("trials")[i].at("metric").get<double>(), trials[i].at("metric").get<double>(), 1e-6) << i;
  }
}

TEST_F(Cli, APopulationBasedTrainingCloneContinuesExactlyAsItsParent) {
  // Explore that changes nothing: a clone trains on as its parent does (the
  // same state, hyperparameters, data order and, without dropout, math).
  const std::string sweep =
      write_sweep("pbt.yaml", tiny_pbt_sweep(", resample_probability: 0, perturbation_factors: [1]"));
  const Result r = run("run " + sweep + " --out " + dir_ + "/same");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/same");
  const auto by_id = trials_by_id(all);
  int compared = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    SCOPED_TRACE("trial " + std::to_string(id));
    const auto& parent = by_id.at(t.at("parent").at("trial"));
    EXPECT_EQ(t.at("params"), parent.at("params"));
    // Every evaluation both made, equal (the parent may have been replaced since).
    const auto& mine = t.at("history");
    const auto& theirs = parent.at("history");
    for (std::size_t k = 0; k < std::min(mine.size(), theirs.size()); ++k) {
      EXPECT_EQ(mine[k].at("step"), theirs[k].at("step"));
      EXPECT_NEAR(mine[k].at("val_loss").get<double>(), theirs[k].at("val_loss").get<double>(), 1e-6) << k;
      EXPECT_NEAR(mine[k].at("train_loss").get<double>(), theirs[k].at("train_loss").get<double>(), 1e-6) << k;
      ++compared;
    }
  }
  EXPECT_GT(compared, 8);
}

TEST_F(Cli, APopulationBasedTrainingCloneWhoseInheritedCheckpointIsLostFailsAndIsReplaced) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep());
  // Trial 4 is the first clone, from a parent's state at 10 steps.
  const ScopedEnv at_load_damage("HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD", "4@10");
  const Result r = run("run " + sweep + " --out " + dir_ + "/damaged");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/damaged");
  const auto by_id = trials_by_id(all);
  ASSERT_TRUE(by_id.count(4));
  EXPECT_EQ(by_id.at(4).at("status"), "failed");
  EXPECT_NE(by_id.at(4).at("error").get<std::string>().find(
                "came from trial " + by_id.at(4).at("parent").at("trial").dump() + " (population based training)"),
            std::string::npos)
      << by_id.at(4).at("error");
  // The population goes on: a new clone takes the failed one's place after generation 1.
  int at_20 = 0, at_end = 0;
  for (const auto& [id, t] : by_id) {
    at_20 += t.contains("parent") && t.at("parent").at("budget") == 20;
    at_end += t.at("budget") == 90;
  }
  EXPECT_GE(at_20, 1);
  EXPECT_EQ(at_end, 4);
}

TEST_F(Cli, PopulationBasedTrainingExploresOnlyWhatSearchExploreLists) {
  const std::string sweep = write_sweep("pbt.yaml", tiny_pbt_sweep(", explore: [momentum]"));
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/explore").code, 0);
  const auto all = results(dir_ + "/explore");
  const auto by_id = trials_by_id(all);
  int changed = 0, clones = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    const auto& parent = by_id.at(t.at("parent").at("trial"));
    EXPECT_EQ(t.at("params").at("lr"), parent.at("params").at("lr")) << id;  // a lineage keeps its first lr
    changed += t.at("params").at("momentum") != parent.at("params").at("momentum");
    ++clones;
  }
  EXPECT_EQ(clones, 8);
  EXPECT_GE(changed, 6);  // (unchanged only where clamped at 0.9 or multiplied from 0)
}

TEST_F(Cli, APopulationBasedTrainingCloneUnderReduceOnPlateauTrainsAtItsOwnLr) {
  // The plateau schedule holds the lr it reached; a clone's is its own
  // explored lr (here the parent's times 0.25), reduced as often as the parent's.
  std::string text = tiny_pbt_sweep(", resample_probability: 0, perturbation_factors: [0.25], explore: [lr]");
  text += "  schedule: {value: plateau}\n";
  const std::string sweep = write_sweep("pbt.yaml", text);
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/plateau").code, 0);
  const auto all = results(dir_ + "/plateau");
  const auto by_id = trials_by_id(all);
  int clones = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("parent")) continue;
    SCOPED_TRACE("trial " + std::to_string(id));
    const double lr = t.at("params").at("lr"), parents = by_id.at(t.at("parent").at("trial")).at("params").at("lr");
    EXPECT_NEAR(lr, std::max(0.01, parents * 0.25), 1e-15);
    const auto rungs = nlohmann::json::parse(slurp(dir_ + "/plateau/trials/" + std::to_string(id) + "/trial.json")).at("rungs");
    EXPECT_NEAR(rungs.at(0).at("progress").at("plateau").at("lr").get<double>(), lr, 1e-12);  // never reduced this early
    // And it trains on otherwise than its parent did.
    const auto& parent_history = by_id.at(t.at("parent").at("trial")).at("history");
    const std::size_t k = rungs.at(0).at("steps") == 0 ? 0 : t.at("history").size() - 1;
    if (k < parent_history.size() && lr != parents) EXPECT_NE(t.at("history")[k], parent_history[k]);
    ++clones;
  }
  EXPECT_EQ(clones, 8);
}

TEST_F(Cli, APopulationThatAllDivergesEndsSayingSo) {
  const std::string sweep = write_sweep("pbt.yaml", R"(name: diverging
seed: 1
task: {model: mlp, batch_size: 128, options: {depth: 1, width: 32}, eval_steps: 10}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 20, max: 80}
search: {method: pbt, population: 3}
parameters:
  lr: {distribution: log_uniform, min: 50, max: 100}
early_stopping: {patience: 0, divergence: 3.0}
)");
  const Result r = run("run " + sweep + " --out " + dir_ + "/diverged");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("population based training ended at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no member of the population completed its generation"), std::string::npos) << r.out;
  EXPECT_EQ(results(dir_ + "/diverged").at("trials").size(), 3u);  // no clone: none to clone from
}

// kTinySweep with two objectives, accuracy and size, over two widths.
std::string tiny_two_objective_sweep() {
  std::string text = kTinySweep;
  text.replace(text.find("metric: {name: val_accuracy, goal: maximize}"), 44,
               "metric: [{name: val_accuracy, goal: maximize}, {name: params, goal: minimize}]");
  // Seed 6: the three most accurate trials of the first rung are all of width 32.
  text.replace(text.find("seed: 1"), 7, "seed: 6");
  return text + "  width: {values: [16, 32]}\n";
}

// A trial's validation accuracy at a step of its history (NaN where it has none).
double accuracy_at(const nlohmann::json& trial, std::int64_t step) {
  for (const auto& e : trial.at("history")) {
    if (e.at("step") == step) return e.at("val_accuracy");
  }
  return NAN;
}

// Whether objectives a (accuracy, size) dominate b's: no worse in both, better in one.
bool dominates_accuracy_size(const nlohmann::json& a, const nlohmann::json& b) {
  const double acc_a = a.at("val_accuracy"), acc_b = b.at("val_accuracy");
  const double size_a = a.at("params"), size_b = b.at("params");
  return acc_a >= acc_b && size_a <= size_b && (acc_a > acc_b || size_a < size_b);
}

TEST_F(Cli, SeveralObjectivesPromoteParetoFrontsAndReportTheFront) {
  const std::string sweep = write_sweep("two.yaml", tiny_two_objective_sweep());
  const Result r = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/whole");
  EXPECT_EQ(all.at("objectives"), nlohmann::json::parse(R"([{"name": "val_accuracy", "goal": "maximize"},
                                                             {"name": "params", "goal": "minimize"}])"));
  const auto by_id = trials_by_id(all);
  // Each trial's size is its plain MLP's: 784 w + w + 10 w + 10 parameters.
  for (const auto& [id, t] : by_id) {
    if (t.at("status") == "failed") continue;
    const std::int64_t w = t.at("params").at("width");
    EXPECT_EQ(t.at("objectives").at("params"), 795 * w + 10) << id;
    EXPECT_EQ(t.at("model_params"), 795 * w + 10) << id;
    EXPECT_EQ(t.at("objectives").at("val_accuracy"), t.at("metric")) << id;
  }
  // Bracket 0's first rung (trials 0 to 8, 10 steps): of the three promoted,
  // two are its front's ends, the most accurate and the most accurate of the
  // smallest, which ranking by accuracy alone would pass over.
  std::vector<std::pair<double, std::int64_t>> accurate, small;
  std::set<std::int64_t> promoted;
  for (std::int64_t id = 0; id < 9; ++id) {
    const auto& t = by_id.at(id);
    if (t.at("budget").get<double>() > 10) promoted.insert(id);
    const double at_10 = accuracy_at(t, 10);
    if (t.at("budget").get<double>() < 10 || (t.at("budget").get<double>() == 10 && t.at("status") != "completed")) continue;
    accurate.push_back({-at_10, id});
    if (t.at("params").at("width") == 16) small.push_back({-at_10, id});
  }
  ASSERT_EQ(promoted.size(), 3u);
  ASSERT_FALSE(small.empty()) << "no width-16 trial in the first rung: pick another seed";
  EXPECT_TRUE(promoted.count(std::min_element(accurate.begin(), accurate.end())->second));
  EXPECT_TRUE(promoted.count(std::min_element(small.begin(), small.end())->second));
  std::sort(accurate.begin(), accurate.end());
  ASSERT_GE(accurate.size(), 3u);
  EXPECT_NE(promoted, (std::set<std::int64_t>{accurate[0].second, accurate[1].second, accurate[2].second}));
  // The front: trials that finished training, none dominated by another that
  // did, and every other one dominated by a member; each evaluated on the test split.
  std::set<std::int64_t> front;
  for (const auto& f : all.at("pareto_front")) {
    front.insert(f.at("id").get<std::int64_t>());
    EXPECT_EQ(f.at("objectives"), by_id.at(f.at("id")).at("objectives"));
    EXPECT_GT(f.at("test").at("accuracy").get<double>(), 0.3);
  }
  ASSERT_FALSE(front.empty());
  for (const auto& [id, t] : by_id) {
    const bool finished = t.at("status") == "stopped" || (t.at("status") == "completed" && t.at("budget") == 90.0);
    if (!finished) {
      EXPECT_FALSE(front.count(id)) << id;
      continue;
    }
    bool dominated = false;
    for (const auto& [other, o] : by_id) {
      const bool other_finished = o.at("status") == "stopped" || (o.at("status") == "completed" && o.at("budget") == 90.0);
      if (other_finished && dominates_accuracy_size(o.at("objectives"), t.at("objectives"))) dominated = true;
    }
    EXPECT_EQ(front.count(id) == 1, !dominated) << id;
  }
  EXPECT_NE(r.out.find("Pareto front (val_accuracy maximized and params minimized): " + std::to_string(front.size())),
            std::string::npos)
      << r.out;
  const Result status = run("status " + dir_ + "/whole");
  EXPECT_NE(status.out.find("Pareto front (val_accuracy maximized and params minimized)"), std::string::npos) << status.out;
  const Result csv = run("export " + dir_ + "/whole --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",objective_val_accuracy,objective_params,pareto,model_params,"
                         "final_val_balanced_accuracy,final_val_f1\n"), std::string::npos) << csv.out;

  // Trained alone, and cut and resumed: the same trials, front included.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  for (const char* other : {"alone", "cut"}) {
    const auto again = results(dir_ + "/" + other);
    ASSERT_EQ(again.at("pareto_front").size(), all.at("pareto_front").size()) << other;
    for (std::size_t i = 0; i < all.at("pareto_front").size(); ++i) {
      EXPECT_EQ(again.at("pareto_front")[i].at("id"), all.at("pareto_front")[i].at("id")) << other;
      EXPECT_EQ(again.at("pareto_front")[i].at("objectives"), all.at("pareto_front")[i].at("objectives")) << other;
    }
  }
}

TEST_F(Cli, SeveralObjectivesWithTpeProposeFromTheFront) {
  const std::string text = tiny_two_objective_sweep();
  const auto with_search = [&](const std::string& search) {
    return text.substr(0, text.find("search:")) + "search: " + search + "\n" + text.substr(text.find("parameters:"));
  };
  const std::string tpe_search = "{method: asha, eta: 3, trials: 15, searcher: tpe, waves: 3}";
  const std::string tpe = write_sweep("tpe.yaml", with_search(tpe_search));
  const std::string random = write_sweep("random.yaml", with_search("{method: asha, eta: 3, trials: 15}"));
  std::string one_metric = with_search(tpe_search);
  one_metric.replace(one_metric.find("metric: ["), one_metric.find("]\n") + 1 - one_metric.find("metric: ["),
                     "metric: {name: val_accuracy, goal: maximize}");
  const Result r = run("run " + tpe + " --out " + dir_ + "/tpe");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(run("run " + random + " --out " + dir_ + "/random").code, 0);
  ASSERT_EQ(run("run " + write_sweep("one.yaml", one_metric) + " --out " + dir_ + "/one").code, 0);
  const auto tpe_trials = results(dir_ + "/tpe").at("trials"), random_trials = results(dir_ + "/random").at("trials");
  const auto one_trials = results(dir_ + "/one").at("trials");
  ASSERT_EQ(tpe_trials.size(), 15u);
  EXPECT_FALSE(results(dir_ + "/tpe").at("pareto_front").empty());
  // The first wave is random search's; TPE proposes most later ones from the
  // fronts of the results before them (a third stay random search's), which
  // are not what accuracy alone makes its good group.
  int proposed = 0, unlike_one = 0;
  for (std::size_t i = 0; i < 15; ++i) {
    if (i < 5) EXPECT_EQ(tpe_trials[i].at("params"), random_trials[i].at("params")) << i;
    proposed += tpe_trials[i].at("params") != random_trials[i].at("params");
    unlike_one += tpe_trials[i].at("params") != one_trials[i].at("params");
  }
  EXPECT_GE(proposed, 4);
  EXPECT_GE(unlike_one, 1);
}

// kTinySweep over two widths under a size bound only width 16 meets (12,730
// parameters; width 32 has 25,450).
std::string tiny_constrained_sweep() {
  return std::string(kTinySweep) + "  width: {values: [16, 32]}\nconstraints:\n  - {name: params, max: 20000}\n";
}

TEST_F(Cli, ConstraintsRankTheTrialsThatMeetThemFirstAndNameOnlyThemBest) {
  const std::string sweep = write_sweep("bounded.yaml", tiny_constrained_sweep());
  const Result r = run("run " + sweep + " --out " + dir_ + "/whole");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto all = results(dir_ + "/whole");
  const auto by_id = trials_by_id(all);
  int narrow = 0;
  for (const auto& [id, t] : by_id) {
    if (!t.contains("feasible")) continue;  // (failed: no result)
    EXPECT_EQ(t.at("feasible"), t.at("params").at("width") == 16) << id;
    // The size the bound judged, which no objective records here.
    EXPECT_EQ(t.at("model_params"), 795 * t.at("params").at("width").get<std::int64_t>() + 10) << id;
  }
  // Bracket 0's first rung (trials 0 to 8): the three promoted meet the bound,
  // though wider trials measured better.
  double best_wide = 0, best_promoted = 1;
  for (std::int64_t id = 0; id < 9; ++id) {
    const auto& t = by_id.at(id);
    narrow += t.at("params").at("width") == 16;
    const double at_10 = accuracy_at(t, 10);
    if (t.at("params").at("width") == 32) best_wide = std::max(best_wide, at_10);
    if (t.at("budget").get<double>() > 10) {
      EXPECT_EQ(t.at("params").at("width"), 16) << id;
      best_promoted = std::min(best_promoted, at_10);
    }
  }
  ASSERT_GE(narrow, 3) << "too few width-16 trials in the first rung: pick another seed";
  EXPECT_GT(best_wide, best_promoted);  // (ranking by accuracy alone would have promoted a wider one)
  ASSERT_TRUE(all.at("best").is_object());
  EXPECT_EQ(by_id.at(all.at("best").at("id")).at("params").at("width"), 16);
  EXPECT_EQ(all.at("constraints"), nlohmann::json::parse(R"([{"name": "params", "max": 20000.0}])"));
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\\([0-9]+ trials ended outside the constraints: never best\\)"))) << r.out;
  const Result csv = run("export " + dir_ + "/whole --format csv");
  EXPECT_NE(csv.out.find(",feasible,model_params,"
                         "final_val_balanced_accuracy,final_val_f1\n"), std::string::npos) << csv.out;
  const Result status = run("status " + dir_ + "/whole");
  EXPECT_TRUE(std::regex_search(status.out, std::regex("[0-9]+ of " + std::to_string(by_id.size()) +
                                                        " trials ended outside the constraints \\(never best\\)\n")))
      << status.out;
  // Alone, and cut and resumed (each rung's violation kept in trial.json): the same.
  ASSERT_EQ(run("run " + sweep + " --fusion off --out " + dir_ + "/alone").code, 0);
  expect_same_results(dir_ + "/alone", dir_ + "/whole");
  expect_cut_and_resumed_as_whole(sweep, "whole", "cut");
  for (const char* other : {"alone", "cut"}) {
    const auto again = trials_by_id(results(dir_ + "/" + other));
    for (const auto& [id, t] : by_id) {
      EXPECT_EQ(again.at(id).value("feasible", nlohmann::json()), t.value("feasible", nlohmann::json())) << other << " " << id;
      EXPECT_EQ(again.at(id).value("model_params", nlohmann::json()), t.value("model_params", nlohmann::json())) << other << " " << id;
    }
  }
}

// No result outside the constraints is called best, by a run's progress line
// or by a resume's, which replays the results so far.
TEST_F(Cli, NoProgressLineCallsAResultOutsideTheConstraintsBest) {
  std::string text = tiny_constrained_sweep();
  text.replace(text.find("max: 20000"), 10, "max: 1000");  // no width meets it
  const std::string sweep = write_sweep("unmet.yaml", text);
  setenv("HFTA_TUNE_TIME_UP_AFTER_PIECES", "5", 1);
  const Result cut = run("run " + sweep + " --out " + dir_ + "/cut --workers 1");
  unsetenv("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  ASSERT_EQ(cut.code, 0) << cut.err;
  const Result resumed = run("resume " + dir_ + "/cut");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  for (const Result* r : {&cut, &resumed}) {
    EXPECT_NE(r->out.find("best val_accuracy -"), std::string::npos) << r->out;
    EXPECT_FALSE(std::regex_search(r->out, std::regex("best val_accuracy [0-9]"))) << r->out;
  }
  EXPECT_TRUE(results(dir_ + "/cut").at("best").is_null());
  // And where every trial meets them, status says so (not "0 of 17 ended outside").
  text.replace(text.find("max: 1000"), 9, "max: 1000000");
  ASSERT_EQ(run("run " + write_sweep("met.yaml", text) + " --out " + dir_ + "/met").code, 0);
  EXPECT_NE(run("status " + dir_ + "/met").out.find("every trial with a result ended within the constraints\n"),
            std::string::npos);
}
