// The fixture of the tests that run the hfta-tune executable as a user does
// (tests/src/cli_*_test.cpp): a scratch directory per test, the sweeps they
// share, and what they compare runs by.
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "run_cli.h"
#include "sweep_text.h"
#include "watched_tuner.h"

namespace hfta::test {

using Result = CliResult;

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

  Result run(const std::string& args) { return run_cli(args, dir_); }

  std::string write_sweep(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static std::string slurp(const std::string& path) { return hfta::test::slurp(path); }

  static nlohmann::json results(const std::string& dir) { return nlohmann::json::parse(slurp(dir + "/results.json")); }

  // What PyTorch in Python (python3-torch) prints running `script`, with
  // scripts/ on its path for plain_models; nullopt where it is not installed.
  std::optional<std::string> python(const std::string& script) {
    const std::string file = dir_ + "/script.py";
    std::ofstream(file) << "import sys\nsys.path.insert(0, \"" HFTA_SOURCE_DIR "/scripts\")\nimport torch\n" << script;
    FILE* p = popen(("/usr/bin/python3 " + file + " 2>&1").c_str(), "r");
    if (!p) return std::nullopt;
    std::string out;
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, p)) out.append(buffer, n);
    pclose(p);
    if (out.find("No module named 'torch'") != std::string::npos) return std::nullopt;
    return out;
  }

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

  // Defined below.
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

// An environment variable set for a scope: the runs it starts see it.
struct ScopedEnv {
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) { setenv(name_.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name_.c_str()); }
  std::string name_;
};

// kTinySweep at budgets of 60, 180 and 540 steps.
inline std::string long_tiny_sweep() {
  std::string text = kTinySweep;
  return text.replace(text.find("min: 10, max: 90"), 16, "min: 60, max: 540");
}

// kTinySweep at budgets of 60, 180 and 540 steps at batch 256 (196 steps an
// epoch: the rungs have mid-rung checkpoints every 50 steps, and evaluation
// points at 196 and 392, where the training-loss average restarts), run whole
// into dir_/whole, and into dir_/cut stopped right after its second mid-rung
// checkpoint, as if killed, then resumed: it continues a rung from its
// checkpoint and ends as the whole run.
inline void Cli::expect_cut_mid_rung_resumes_as_whole(const std::string& run_flags, const std::string& resume_flags) {
  const std::string sweep = write_sweep("long.yaml", long_tiny_sweep());
  ASSERT_EQ(run("run " + sweep + " --out " + dir_ + "/whole").code, 0);
  setenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS", "2", 1);
  const Result killed = run("run " + sweep + " --out " + dir_ + "/cut --checkpoint-every 0 " + run_flags);
  unsetenv("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS");
  ASSERT_EQ(killed.code, 9) << killed.err;
  // resume counts what it starts from as status does.
  const Result status = run("status " + dir_ + "/cut");
  std::smatch counted;
  ASSERT_TRUE(std::regex_search(status.out, counted, std::regex("([0-9]+) trial\\(s\\) with ([0-9]+) finished rung\\(s\\)")))
      << status.out;
  std::smatch mid;
  ASSERT_TRUE(std::regex_search(status.out, mid, std::regex("([1-9][0-9]*) checkpointed mid-rung"))) << status.out;
  const Result resumed = run("resume " + dir_ + "/cut --checkpoint-every 0 " + resume_flags);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE((resumed.out + resumed.err).find("resuming: " + counted[0].str() + ", " + mid[0].str()), std::string::npos)
      << resumed.out << resumed.err;
  // Which trials had checkpointed where depends on the order the workers took the arrays in.
  EXPECT_TRUE(std::regex_search(resumed.out, std::regex("continues its rung from step [1-9]"))) << resumed.out;
  expect_same_results(dir_ + "/cut", dir_ + "/whole");
}

// kTinySweep with four brackets (budgets 10 to 270 steps).
inline std::string longer_tiny_sweep() {
  std::string text = kTinySweep;
  return text.replace(text.find("max: 90"), 7, "max: 270");
}

// kTinySweep with another search section.
inline std::string tiny_sweep_searching(const std::string& search) {
  std::string text = kTinySweep;
  const std::string hyperband = "{method: hyperband, eta: 3}";
  return text.replace(text.find(hyperband), hyperband.size(), search);
}

// Runs `sweep` into dir_/cut stopped inside a rung as Ctrl-C stops it (one
// worker, after its fifth piece of training, or `pieces`), resumes it, and
// expects it to end as dir_/whole.
inline void Cli::expect_cut_and_resumed_as_whole(const std::string& sweep, const std::string& whole, const std::string& cut,
                                          const char* pieces) {
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", pieces, 1);
  const Result stopped = run("run " + sweep + " --out " + dir_ + "/" + cut + " --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(stopped.code, 1) << stopped.err;
  ASSERT_FALSE(exists(dir_ + "/" + cut + "/results.json")) << stopped.out;
  ASSERT_EQ(run("resume " + dir_ + "/" + cut).code, 0);
  expect_same_results(dir_ + "/" + cut, dir_ + "/" + whole);
}

// hfta-tune `args` in the background, watching `dir` (see watched_tuner.h).
inline std::unique_ptr<::test::WatchedTuner> watched_tuner(const std::string& args, const std::string& dir,
                                                  const std::string& err = "/dev/null", int ignored = 0) {
  return std::make_unique<::test::WatchedTuner>(HFTA_TUNE_BINARY, args, dir, err, ignored);
}

// Each trial of a results.json, by id.
inline std::map<std::int64_t, nlohmann::json> trials_by_id(const nlohmann::json& results) {
  std::map<std::int64_t, nlohmann::json> out;
  for (const auto& t : results.at("trials")) out[t.at("id")] = t;
  return out;
}

// `command` in a shell; its exit code (-1: killed by a signal).
inline int shell(const std::string& command) {
  const int status = std::system(("bash -c '" + command + "'").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace hfta::test
