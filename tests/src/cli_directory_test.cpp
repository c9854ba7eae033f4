// The experiment directory on a real file system: --out checked before anything is written, the
// lock, a full disk, a file-size limit, closed streams, FIFOs, and names a shell would split.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../support/cli_fixture.h"
#include "hfta/core/experiment_dir.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

TEST_F(Cli, RunRefusesAnOutThatIsAFile) {
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  std::ofstream(dir_ + "/afile") << "x";
  const Result r = run("run " + sweep + " --out " + dir_ + "/afile");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "hfta-tune run: cannot create --out " + dir_ + "/afile: it is a file, not a directory\n");
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

TEST_F(Cli, AWorkersFullDiskStopsTheOtherWorkersAtTheirNextStep) {
  // Two arrays, one a worker each: a small MLP and a larger one, whose
  // mid-rung checkpoint cannot be written (a full disk). The small one
  // stopped only once its array was done (4000 steps); now at its next
  // step, checkpointed, as Ctrl-C stops it, and the sweep resumes whole.
  const std::string sweep = write_sweep("two.yaml", R"(name: two
seed: 1
task: {model: mlp, batch_size: 128, options: {depth: 2}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, max: 4000}
search: {method: grid}
parameters:
  width: {values: [16, 256]}
)");
  const std::string dir = dir_ + "/full";
  {
    const ScopedEnv cut("HFTA_TUNE_SIGINT_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 2 --checkpoint-every 0").code, 1);
  }
  const std::string full = dir + "/trials/1/partial.next.pt.tmp";
  ASSERT_TRUE(exists(dir + "/trials/1/trial.json"));
  ::symlink("/dev/full", full.c_str());
  const Result failed = run("resume " + dir + " --workers 2");
  EXPECT_EQ(failed.code, 1);
  EXPECT_NE(failed.err.find("No space left on device"), std::string::npos) << failed.err;
  const auto small = nlohmann::json::parse(slurp(dir + "/trials/0/trial.json"));
  EXPECT_TRUE(small.at("rungs").empty()) << "the small array trained on to its end";
  ASSERT_TRUE(small.contains("partial"));
  EXPECT_LT(small.at("partial").at("steps"), 4000);
  std::remove(full.c_str());
  ASSERT_EQ(run("resume " + dir + " --workers 2").code, 0);
  EXPECT_EQ(results(dir).at("finished"), true);
  EXPECT_EQ(results(dir).at("trials")[0].at("budget"), 4000);
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
  // Before the holder's sweep.json (a run still copying a large table):
  // starting, not "stopped before its sweep started".
  const std::string pid = std::to_string(::getpid());
  const Result starting = run("status " + dir_ + "/busy");
  EXPECT_EQ(starting.code, 0) << starting.err;
  EXPECT_EQ(starting.out, dir_ + "/busy: starting (pid " + pid + "), writing its first files; no trial has begun\n");
  for (const char* verb : {"resume ", "export "}) {
    const Result refused = run(verb + dir_ + "/busy");
    EXPECT_EQ(refused.code, 2) << verb;
    EXPECT_NE(refused.err.find(" is in use by another hfta-tune (pid " + pid + "), which is starting its sweep"),
              std::string::npos)
        << refused.err;
  }
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

TEST_F(Cli, APathThatStartsWithADashIsToldHowToWriteIt) {
  const Result r = run("validate -dash.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'-dash.yaml' reads as an option: a path that starts with '-' is written ./-dash.yaml"),
            std::string::npos)
      << r.err;
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
  ::test::WatchedTuner tuner(HFTA_TUNE_BINARY, args, "", err);
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

}  // namespace
