// `hfta-tune resume`: what a cut run left is continued, never trained again, and ends as the
// uninterrupted run; damaged files are named and trained again; what would change the trials is refused.
#include <gtest/gtest.h>

#include "../support/cli_fixture.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

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
    const ScopedEnv first_piece("HFTA_TUNE_SIGINT_AFTER_PIECES", "1");
    ASSERT_EQ(run("run " + sweep + " --out " + dir + " --workers 1").code, 1);
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
    EXPECT_EQ(refused.code, 1) << damaged;
    EXPECT_NE(refused.err.find("/cut/run.json is damaged"), std::string::npos) << refused.err;
  }
  // Removed, it is lost (it was taken for a directory from before run.json,
  // and the resume trained with other threads than the run's, saying nothing).
  std::remove((dir_ + "/cut/run.json").c_str());
  EXPECT_NE(run("status " + dir_ + "/cut").out.find("/cut/run.json is missing (removed from outside)"), std::string::npos);
  const Result lost = run("resume " + dir_ + "/cut");
  EXPECT_EQ(lost.code, 1);
  EXPECT_NE(lost.err.find("/cut/run.json is missing (removed from outside)"), std::string::npos) << lost.err;
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
  // With sweep.yaml edited too, resume would refuse before writing it: status says what to mend first.
  const std::string given = slurp(dir + "/sweep.yaml");
  std::ofstream(dir + "/sweep.yaml") << std::string(given).replace(given.find("seed: 1"), 7, "seed: 4");
  const Result edited_too = run("status " + dir);
  EXPECT_EQ(edited_too.code, 1);
  EXPECT_NE(edited_too.err.find("sweep.yaml was edited in what would change its trials (seed), which resume "
                                "refuses: restore it, then continue with hfta-tune resume " + dir +
                                ", which writes it again"),
            std::string::npos)
      << edited_too.err;
  std::ofstream(dir + "/sweep.yaml") << given;
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
  const Result status = run("status " + dir);  // (as resume says: it writes none over a folder)
  EXPECT_EQ(status.code, 1);
  EXPECT_NE(status.err.find("results.json is damaged (not a file); remove it, then "), std::string::npos)
      << status.err;
}

// A finished random search whose sweep.yaml asks for more trials trains only
// the new ones, and ends as a run of them all; a grid grows by repeats alike.
// What cannot grow is refused, with nothing written.
TEST_F(Cli, AWeightsFileChangedSinceItsRungWroteItIsNotScoredOnTheTestSplit) {
  // With --keep-checkpoints live the best trial's test score reads its
  // weights.pt. Four bytes of it flipped (LibTorch reads such a file, and
  // scored it 0.13 where it had 0.85), results.json is written again without
  // a test score, saying why; the file as written scores as before.
  const std::string sweep = write_sweep("tiny.yaml", kTinySweep);
  const std::string dir = dir_ + "/live";
  ASSERT_EQ(run("run " + sweep + " --out " + dir + " --keep-checkpoints live").code, 0);
  const auto whole = results(dir);
  ASSERT_TRUE(whole.at("best").contains("test"));
  const std::string id = std::to_string(whole.at("best").at("id").get<int>());
  const std::string weights = dir + "/trials/" + id + "/weights.pt";
  const auto rungs = nlohmann::json::parse(slurp(dir + "/trials/" + id + "/trial.json")).at("rungs");
  ASSERT_TRUE(rungs.back().contains("weights_crc"));
  EXPECT_TRUE(rungs.back().contains("state_dict_crc"));
  const std::string written = slurp(weights);
  std::string flipped = written;
  for (std::size_t i = flipped.size() / 2; i < flipped.size() / 2 + 4; ++i) flipped[i] = static_cast<char>(~flipped[i]);
  std::ofstream(weights, std::ios::binary) << flipped;
  std::remove((dir + "/results.json").c_str());
  const Result damaged = run("resume " + dir);
  ASSERT_EQ(damaged.code, 0) << damaged.err;
  EXPECT_NE(damaged.out.find("trial " + id + ": " + weights + " does not match the rung's CRC-32"), std::string::npos)
      << damaged.out;
  EXPECT_NE(damaged.out.find(", so no test evaluation"), std::string::npos) << damaged.out;
  EXPECT_FALSE(results(dir).at("best").contains("test"));
  std::ofstream(weights, std::ios::binary) << written;
  std::remove((dir + "/results.json").c_str());
  ASSERT_EQ(run("resume " + dir).code, 0);
  EXPECT_EQ(results(dir).at("best").at("test"), whole.at("best").at("test"));
}

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
    r = run("resume " + dir);  // (run.json's --checkpoint-every 0: mid-rung checkpoints at each chance)
  }
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/run.json")).at("checkpoint_every"), 0);
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
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "1", 1);
  const Result again = run("run " + sweep + " --out " + dir + " --fusion off");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(again.code, 1) << again.err;
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
  // Removed: lost, as damaged (not "stopped before its sweep started", which
  // told the user to run again into a directory run then refused).
  ASSERT_TRUE(exists(dir + "/trials"));
  std::remove((dir + "/sweep.json").c_str());
  for (const char* verb : {"resume ", "export ", "status "}) {
    const Result r = run(verb + dir);
    EXPECT_EQ(r.code, 1) << verb;
    EXPECT_NE(r.err.find(dir + " has lost its sweep.json (removed from outside"), std::string::npos) << verb << r.err;
  }
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

}  // namespace
