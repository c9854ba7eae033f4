// How a run stops and goes on: SIGKILL anywhere, Ctrl-C, a hang-up, a reader that quits, and a stop
// after a checkpoint (as --time-limit asks); each paced by the run's own progress or a count, never a clock.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <random>

#include "../support/cli_fixture.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

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

TEST_F(Cli, AReaderThatQuitsOrASignalIgnoredAtTheStartDoesNotStopTheSweep) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  // `| head -1`: its output goes nowhere once head quits, and it trains on.
  const std::string piped = dir_ + "/piped";
  const std::string cmd = "( " + std::string(HFTA_TUNE_BINARY) + " run " + sweep + " --out " + piped +
                          "; echo $? > " + dir_ + "/code ) | head -1 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(slurp(dir_ + "/code"), "0\n");
  ASSERT_TRUE(exists(piped + "/results.json"));
  EXPECT_EQ(results(piped).at("finished"), true);
  // A hang-up it was told to ignore (nohup) leaves it training, as does a
  // Ctrl-C it was told to ignore (a shell script's background job). The
  // signal lands after its first array, paced by the sweep's own log.
  for (const int sig : {SIGHUP, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    const std::string dir = dir_ + "/ignored-" + std::to_string(sig);
    const auto tuner = watched_tuner("run " + sweep + " --out " + dir + " --workers 1", dir, "/dev/null", sig);
    ASSERT_FALSE(tuner->await_printed("array of ", 1).has_value()) << "it ended before the signal: " << tuner->printed();
    const int status = tuner->signal_and_wait(sig);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(results(dir).at("finished"), true);
  }
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
    // SIGHUP: the terminal closed; SIGUSR1: a batch system's warning before its time limit.
    const int sig = std::vector<int>{SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGINT, SIGTERM}[static_cast<std::size_t>(round)];
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
    EXPECT_NE(said.find(std::string("stopped by SIG") + sigabbrev_np(sig)),
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
    EXPECT_NE(at_once.out.find("time limit of 1h reached: stopped before any trial began training, with 0 of 22 rung results"),
              std::string::npos)
        << at_once.out;
    EXPECT_NE(at_once.out.find("none yet (failed and diverged trials do not count)"), std::string::npos) << at_once.out;
    ASSERT_EQ(run("resume " + dir_ + "/at-once --time-limit 1h").code, 0);
    EXPECT_FALSE(exists(dir_ + "/at-once/results.json"));
  }
  ASSERT_EQ(run("resume " + dir_ + "/at-once --time-limit 0").code, 0);  // 0: no limit, so no clock decides the end
  expect_same_results(dir_ + "/at-once", dir_ + "/whole");

  // A limit that is no duration is bad usage, said as the option's: nothing is
  // written. (What is a duration: Duration.* in duration_test.cpp.)
  const Result bad = run("run " + sweep + " --out " + dir_ + "/bad --time-limit 30m2h");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--time-limit: expected a duration such as 90s, 30m, 2h or 1h30m, got '30m2h'"), std::string::npos)
      << bad.err;
  EXPECT_FALSE(exists(dir_ + "/bad"));
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

}  // namespace
