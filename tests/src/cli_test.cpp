// The hfta-tune executable as a user runs it: its verbs, options and help, and bad usage and bad
// sweeps refused with exit code 2 and nothing written.
#include <gtest/gtest.h>

#include "../support/cli_fixture.h"
#include "../support/sanitizer.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

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
           {"", "hfta-tune: a verb is required: validate, run, resume, plan, status or export (hfta-tune --help)"},
           // A verb's option before its verb, an option of none, a sweep file in the verb's place.
           {"--json plan s.yaml", "hfta-tune: options go after the verb: hfta-tune plan --json s.yaml"},
           {"--out a status b", "hfta-tune: unknown option '--out' (status takes no such option: hfta-tune status --help)"},
           {"--versoin",
            "hfta-tune: unknown option '--versoin' (did you mean '--version'?); a verb is required: validate, run, "
            "resume, plan, status or export (hfta-tune --help)"},
           {quickstart_, "hfta-tune: unknown verb '" + quickstart_ +
                             "'; the verbs are validate, run, resume, plan, status or export (hfta-tune --help); to "
                             "run that sweep: hfta-tune run " + quickstart_}}) {
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
  EXPECT_NE(resumed.out.find("continue with hfta-tune resume"), std::string::npos) << resumed.out << resumed.err;
}

}  // namespace
