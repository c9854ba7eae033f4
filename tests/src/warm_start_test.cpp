// search.warm_start as a user goes through it: a first sweep, then a second
// over a narrower space that starts its searcher from the first one's results;
// cut, resumed without the first directory; and refused where it cannot work.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/run_cli.h"
#include "../support/sweep_text.h"
#include "hfta/core/experiment_dir.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/search/searcher.h"

namespace hfta::core {
namespace {

using nlohmann::json;
using test::line_of;
using test::slurp;

// The earlier sweep: test::kTinySweep, Hyperband over lr in [0.01, 0.5] and
// momentum, 17 trials, rungs of 10, 30 and 90 steps.
const std::string kEarlier = test::kTinySweep;

// A narrower lr, six trials drawn by `searcher` at once, started from dir_/A.
std::string later(const std::string& searcher = "tpe", const std::string& warm = "A") {
  std::string text = kEarlier;
  text = std::regex_replace(text, std::regex("name: tiny"), "name: later");
  text = std::regex_replace(text, std::regex("seed: 1"), "seed: 2");
  text = std::regex_replace(text, std::regex("min: 0.01"), "min: 0.05");
  return std::regex_replace(text, std::regex("\\{method: hyperband, eta: 3\\}"),
                            "{method: random, trials: 6, searcher: " + searcher + ", warm_start: " + warm + "}");
}

TEST(WarmStartKey, IsReadFromTheSweepFilesDirectoryAndRecordedAsWritten) {
  const std::string yaml = later("tpe", "[runs/a, /abs/b, ~/c]");
  const char* home = std::getenv("HOME");
  const std::string was = home ? home : "";
  setenv("HOME", "/home/u", 1);
  const SweepConfig s = load_sweep_string(yaml, "/home/u/project/sweep.yaml");
  setenv("HOME", was.c_str(), 1);
  EXPECT_EQ(s.search.warm_start, (std::vector<std::string>{"runs/a", "/abs/b", "~/c"}));
  ASSERT_EQ(s.search.warm_sources.size(), 3u);
  EXPECT_EQ(s.search.warm_sources[0].dir, "/home/u/project/runs/a");
  EXPECT_EQ(s.search.warm_sources[1].dir, "/abs/b");
  EXPECT_EQ(s.search.warm_sources[2].dir, "/home/u/c");
  EXPECT_EQ(s.search.warm_sources[1].at, "search.warm_start[1]");
  EXPECT_EQ(s.search.warm_sources[1].line, line_of(yaml, "search:"));
  // sweep.json holds them as written, and is the same sweep read back; other directories are another sweep.
  const json j = to_json(s);
  EXPECT_EQ(j.at("search").at("warm_start"), json::parse(R"(["runs/a", "/abs/b", "~/c"])"));
  EXPECT_EQ(load_sweep_string(j.dump(), "/runs/x/sweep.json"), s);
  EXPECT_NE(load_sweep_string(later("tpe", "runs/a"), "/home/u/project/sweep.yaml"), s);
}

class WarmStart : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hfta-warm-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // No clock decides what a sweep does (Cli's fixture says why).
    setenv("HFTA_TUNE_RATES_UNTIMED", "1", 1);
    write("a.yaml", kEarlier);
    ASSERT_EQ(run("run " + dir_ + "/a.yaml --out " + dir_ + "/A").code, 0);
  }
  void TearDown() override {
    unsetenv("HFTA_TUNE_RATES_UNTIMED");
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ + "/" + name) << text; }
  test::CliResult run(const std::string& args) const { return test::run_cli(args, dir_); }
  json read(const std::string& path) const { return json::parse(slurp(dir_ + "/" + path)); }

  // What dir_/A's trials measured, as a warm start must pass it on: each
  // trial's rungs up to `max_budget` whose lr lies in [0.05, 0.5], `metric`
  // at each (from the history at the rung's last step), in trial order.
  struct Expected {
    std::int64_t trial;
    json params;
    double budget, metric;
    std::string status;
  };
  std::vector<Expected> earlier_results(const std::string& metric = "val_accuracy", double max_budget = 90) const {
    std::map<std::int64_t, json> trials;
    for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/A/trials")) {
      trials[std::stoll(entry.path().filename().string())] = json::parse(slurp(entry.path().string() + "/trial.json"));
    }
    std::vector<Expected> out;
    for (const auto& [id, t] : trials) {
      const double lr = t.at("params").at("lr");
      if (lr < 0.05 || lr > 0.5) continue;
      for (const auto& rung : t.at("rungs")) {
        if (rung.at("budget").get<double>() > max_budget) continue;
        double value = std::numeric_limits<double>::quiet_NaN();
        for (const auto& point : t.at("history")) {
          if (point.at("step") == rung.at("steps") && point.at(metric).is_number()) value = point.at(metric);
        }
        out.push_back({id, t.at("params"), rung.at("budget"), value, rung.at("status")});
      }
    }
    return out;
  }

  std::string dir_;
};

TEST_F(WarmStart, TheSearcherStartsFromTheEarlierResultsThatLieInItsSpace) {
  write("b.yaml", later());
  const auto plan = run("plan " + dir_ + "/b.yaml");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto r = run("run " + dir_ + "/b.yaml --out " + dir_ + "/B");
  ASSERT_EQ(r.code, 0) << r.err;
  // What was kept: A's results in B's space (lr from 0.05), value for value.
  const auto expected = earlier_results();
  const json kept = read("B/warm_start.json");
  ASSERT_EQ(kept.at("results").size(), expected.size());
  ASSERT_GE(expected.size(), 6u);
  std::map<std::int64_t, int> trials;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const json& k = kept.at("results")[i];
    EXPECT_EQ(k.at("trial"), expected[i].trial) << i;
    EXPECT_EQ(k.at("source"), "A");
    EXPECT_EQ(k.at("params"), expected[i].params) << i;
    EXPECT_EQ(k.at("budget").get<double>(), expected[i].budget) << i;
    EXPECT_EQ(k.at("metric").get<double>(), expected[i].metric) << i;
    trials[expected[i].trial]++;
  }
  EXPECT_LT(trials.size(), 17u);  // some of A's lay outside: lr below 0.05
  // validate says what it starts from, plan what it left out too.
  const auto valid = run("validate " + dir_ + "/b.yaml");
  const std::string starting = "starting from " + std::to_string(expected.size()) + " results of " +
                               std::to_string(trials.size()) + " earlier trials (search.warm_start)";
  EXPECT_NE(valid.out.find(starting), std::string::npos) << valid.out;
  EXPECT_NE(plan.out.find("outside this sweep's space (trial "), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("TPE proposes them all from the earlier results of search.warm_start"), std::string::npos);
  {  // An earlier sweep still running is read as far as it got, and said to be running.
    std::string holder;
    const auto lock = ExperimentLock::take(dir_ + "/A", &holder);
    ASSERT_TRUE(lock.has_value());
    EXPECT_NE(run("plan " + dir_ + "/b.yaml").out.find("start the searcher (it is running, pid " +
                                                       std::to_string(::getpid()) + ": only the rungs it had "
                                                       "finished are read)"),
              std::string::npos);
  }
  // plan --json counts them as the text does.
  const auto plan_json = run("plan --json " + dir_ + "/b.yaml");
  ASSERT_EQ(plan_json.code, 0) << plan_json.err;
  EXPECT_EQ(json::parse(plan_json.out).at("warm_start"),
            (json{{"sources", {"A"}}, {"results", expected.size()}, {"trials", trials.size()}}));
  // B's trials are what TPE proposes, told those results first (ids -T .. -1 a trial, in order).
  const SweepConfig b = load_sweep_file(dir_ + "/B/sweep.json");
  search::TpeSearcher tpe(make_search_space(b), b.seed, Goal::kMaximize);
  std::int64_t id = -static_cast<std::int64_t>(trials.size()) - 1;
  std::int64_t last = -1;
  for (const auto& e : expected) {
    if (e.trial != last) ++id, last = e.trial;
    search::Config params;
    for (const auto& [name, value] : e.params.items()) params[name] = param_value_of(value);
    tpe.observe(id, params, search::TrialResult{id, e.budget, e.metric, search::TrialStatus::kCompleted});
  }
  const json results = read("B/results.json");
  ASSERT_EQ(results.at("trials").size(), 6u);
  for (std::int64_t t = 0; t < 6; ++t) {
    json proposed = json::object();
    for (const auto& [name, value] : tpe.suggest(t)) proposed[name] = to_json(value);
    EXPECT_EQ(results.at("trials")[t].at("params"), proposed) << t;
  }
  // ...not what it draws without them (random search's draws).
  json drawn = json::object();
  for (const auto& [name, value] : make_search_space(b).sample(b.seed, 0)) drawn[name] = to_json(value);
  EXPECT_NE(results.at("trials")[0].at("params"), drawn);
  EXPECT_EQ(results.at("warm_start"), json::parse(R"({"sources": ["A"], "results": "warm_start.json"})"));
  EXPECT_NE(run("status " + dir_ + "/B").out.find("search.warm_start: the searcher started from " +
                                                  std::to_string(expected.size()) + " results of " +
                                                  std::to_string(trials.size()) + " earlier trials (A)\n"),
            std::string::npos);
}

TEST_F(WarmStart, TheGaussianProcessAndCmaEsStartFromThemToo) {
  for (const std::string searcher : {"gp", "cmaes"}) {
    SCOPED_TRACE(searcher);
    write("warm.yaml", later(searcher));
    write("cold.yaml", std::regex_replace(later(searcher), std::regex(", warm_start: A"), ""));
    ASSERT_EQ(run("run " + dir_ + "/warm.yaml --out " + dir_ + "/warm-" + searcher).code, 0);
    ASSERT_EQ(run("run " + dir_ + "/cold.yaml --out " + dir_ + "/cold-" + searcher).code, 0);
    const json warm = read("warm-" + searcher + "/results.json"), cold = read("cold-" + searcher + "/results.json");
    EXPECT_NE(warm.at("trials")[0].at("params"), cold.at("trials")[0].at("params"));
  }
}

TEST_F(WarmStart, AResumedSweepReadsTheResultsItKeptNotTheEarlierDirectory) {
  write("b.yaml", later());
  ASSERT_EQ(run("run " + dir_ + "/b.yaml --out " + dir_ + "/whole").code, 0);
  {  // Stopped after its first piece of training, as Ctrl-C stops it.
    setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "1", 1);
    const auto cut = run("run " + dir_ + "/b.yaml --out " + dir_ + "/cut --workers 1");
    unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
    ASSERT_EQ(cut.code, 1) << cut.err;
    ASSERT_FALSE(std::filesystem::exists(dir_ + "/cut/results.json"));
  }
  std::filesystem::copy(dir_ + "/cut", dir_ + "/damaged", std::filesystem::copy_options::recursive);
  std::filesystem::copy(dir_ + "/cut", dir_ + "/edited", std::filesystem::copy_options::recursive);
  std::filesystem::rename(dir_ + "/A", dir_ + "/A.moved");  // the earlier directory goes
  // The experiment's own sweep file reads the results kept there, as resume does.
  const auto own = run("validate " + dir_ + "/cut/sweep.yaml");
  ASSERT_EQ(own.code, 0) << own.err;
  const auto kept = read("cut/warm_start.json").at("results").size();
  EXPECT_NE(own.out.find("starting from " + std::to_string(kept) + " results of"), std::string::npos) << own.out;
  const auto resumed = run("resume " + dir_ + "/cut");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const json whole = read("whole/results.json"), cut = read("cut/results.json");
  ASSERT_EQ(cut.at("trials").size(), whole.at("trials").size());
  for (std::size_t i = 0; i < whole.at("trials").size(); ++i) {
    for (const char* key : {"params", "history", "metric", "status"}) {
      EXPECT_EQ(cut.at("trials")[i].at(key), whole.at("trials")[i].at(key)) << i << " " << key;
    }
  }
  // A kept copy changed from outside is refused, not replaced by other results:
  // one that is no JSON, and one whose result this sweep could not have drawn.
  json outside = read("damaged/warm_start.json");
  outside["results"][1]["params"]["lr"] = 99;
  for (const std::string& text : {std::string("{"), outside.dump()}) {
    std::ofstream(dir_ + "/damaged/warm_start.json") << text;
    const auto damaged = run("resume " + dir_ + "/damaged");
    EXPECT_EQ(damaged.code, 1);
    EXPECT_NE(damaged.err.find(dir_ + "/damaged/warm_start.json is gone or damaged"), std::string::npos) << damaged.err;
    if (text != "{") EXPECT_NE(damaged.err.find("(result 1: lr: expected a value in [0.05, 0.5]"), std::string::npos);
  }
  // And one still valid, each result drawable, but not as written: a result
  // dropped, a metric changed, or the CRC-32 gone.
  const json written = read("cut/warm_start.json");
  json dropped = written, changed = written, unchecked = written;
  dropped["results"].erase(dropped["results"].begin() + 1);
  changed["results"][0]["metric"] = 0.999;
  unchecked.erase("crc32");
  for (const json& text : {dropped, changed, unchecked}) {
    std::ofstream(dir_ + "/damaged/warm_start.json") << text.dump(1);
    const auto damaged = run("resume " + dir_ + "/damaged");
    EXPECT_EQ(damaged.code, 1);
    EXPECT_NE(damaged.err.find(dir_ + "/damaged/warm_start.json is gone or damaged (run wrote it whole: changed from "
                                      "outside); it holds the earlier results search.warm_start started the searcher "
                                      "from (its results are not those it was written with)"),
              std::string::npos)
        << damaged.err;
  }
  // Other earlier sweeps would change the trials: resume names the key.
  const std::string edited = std::regex_replace(later(), std::regex("warm_start: A"), "warm_start: [A, whole]");
  std::ofstream(dir_ + "/edited/sweep.yaml") << edited;
  const auto refused = run("resume " + dir_ + "/edited");
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("search.warm_start"), std::string::npos) << refused.err;
}

TEST_F(WarmStart, IsRefusedAtItsLineWithNothingWrittenWhereItCannotStartTheSearcher) {
  std::filesystem::create_directory(dir_ + "/empty");
  write("cnn.yaml", std::regex_replace(later(), std::regex("model: mlp, batch_size: 256, options: \\{depth: 1, width: 32\\}"),
                                       "model: cnn"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {later("tpe", "nowhere"), "search.warm_start: nowhere: no such directory (" + dir_ + "/nowhere)"},
      {later("tpe", "a.yaml"), "search.warm_start: a.yaml: not a directory"},
      {later("tpe", "empty"), "search.warm_start: empty: holds no sweep (no sweep.json)"},
      {later("tpe", "[A, A]"), "search.warm_start[1]: names A a second time"},
      {later("tpe", "[]"), "search.warm_start: expected an experiment directory of an earlier sweep, or a list of 1 to "
                           "16 of them, got an empty list"},
      {later("random"), "search.warm_start: earlier results start a searcher that learns from results (tpe, gp or "
                        "cmaes); searcher random draws its trials whatever the results"},
      {std::regex_replace(later(), std::regex("model: mlp, batch_size: 256, options: \\{depth: 1, width: 32\\}"),
                          "model: cnn"),
       "search.warm_start: A: model mlp there, cnn here: its results measure another problem"},
      {std::regex_replace(later(), std::regex("unit: steps, min: 10, max: 90"), "unit: samples, min: 2560, max: 23040"),
       "search.warm_start: A: budgets in steps there, samples here"},
      {later("tpe", "[A, ./A]"), "search.warm_start[1]: ./A: the directory A names too; its results would count twice"},
  };
  for (const auto& [yaml, message] : cases) {
    SCOPED_TRACE(message);
    write("b.yaml", yaml);
    for (const char* verb : {"validate", "run"}) {
      const auto r = run(std::string(verb) + " " + dir_ + "/b.yaml" + (verb == std::string("run") ? " --out " + dir_ + "/B" : ""));
      EXPECT_EQ(r.code, 2) << verb;
      EXPECT_NE(r.err.find(dir_ + "/b.yaml:" + std::to_string(line_of(yaml, "search:")) + ":"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
      EXPECT_FALSE(std::filesystem::exists(dir_ + "/B"));
    }
  }
}

// A trial counts where it trained with what this sweep would give it: a
// constant or option this sweep adds at the value the earlier trials had keeps
// them (weight decay 0 is the default), another leaves them out, said.
TEST_F(WarmStart, WhatThisSweepFixesTheEarlierTrialsMustHaveTrainedWith) {
  const std::string kept = std::regex_replace(later(), std::regex("parameters:\n"),
                                              "parameters:\n  weight_decay: {value: 0.0}\n  width: {value: 32}\n");
  write("same.yaml", kept);
  const auto same = run("validate " + dir_ + "/same.yaml");
  ASSERT_EQ(same.code, 0) << same.err;
  const std::string all = "starting from " + std::to_string(earlier_results().size()) + " results";
  EXPECT_NE(same.out.find(all), std::string::npos) << same.out;
  write("wider.yaml", std::regex_replace(later(), std::regex("width: 32"), "width: 64"));
  const auto wider = run("plan " + dir_ + "/wider.yaml");
  ASSERT_EQ(wider.code, 0) << wider.err;
  EXPECT_NE(wider.out.find("0 results of 0 of its 17 trials start the searcher; left out: 17 outside this sweep's "
                           "space (trial 0's width: 32 there, 64 here)"),
            std::string::npos)
      << wider.out;
  write("tuned.yaml", std::regex_replace(kept, std::regex(R"(width: \{value: 32\})"), "width: {values: [32, 64]}"));
  const auto tuned = run("validate " + dir_ + "/tuned.yaml");
  EXPECT_NE(tuned.out.find(all), std::string::npos) << tuned.out;
  // A longer budget.max keeps them under a constant rate; a cosine schedule, which the earlier trials did not train
  // with, does not, nor (earlier trials of cosine) one whose length, budget.max in steps, is another.
  auto longer = [](std::string yaml) { return std::regex_replace(yaml, std::regex("max: 90"), "max: 270"); };
  write("longer.yaml", longer(later()));
  EXPECT_NE(run("validate " + dir_ + "/longer.yaml").out.find(all), std::string::npos);
  const std::string cosine = "parameters:\n  schedule: {value: cosine}\n";
  write("cosine.yaml", std::regex_replace(later(), std::regex("parameters:\n"), cosine));
  EXPECT_NE(run("plan " + dir_ + "/cosine.yaml")
                .out.find("(trial 0's schedule: expected the parameter's constant 'cosine', got the string 'constant' "
                          "(what the earlier sweep trained it with))"),
            std::string::npos);
  write("c.yaml", std::regex_replace(std::regex_replace(kEarlier, std::regex("parameters:\n"), cosine),
                                     std::regex("name: tiny"), "name: cosine"));
  ASSERT_EQ(run("run " + dir_ + "/c.yaml --out " + dir_ + "/C").code, 0);
  const std::string from_c = std::regex_replace(later(), std::regex("warm_start: A"), "warm_start: C");
  write("same-length.yaml", std::regex_replace(from_c, std::regex("parameters:\n"), cosine));
  EXPECT_NE(run("validate " + dir_ + "/same-length.yaml").out.find(all), std::string::npos);
  write("other-length.yaml", longer(std::regex_replace(from_c, std::regex("parameters:\n"), cosine)));
  EXPECT_NE(run("plan " + dir_ + "/other-length.yaml").out.find("(trial 0's learning-rate schedule, in steps: t_max 90 "
                                                                  "there, 270 here)"),
            std::string::npos);
}

TEST_F(WarmStart, AnotherMetricIsReadFromTheHistoryAndWhatCannotBeToldIsSaid) {
  // val_loss, minimized, to 30 steps: the loss at each rung's end, and nothing past 30.
  std::string yaml = std::regex_replace(later(), std::regex("name: val_accuracy, goal: maximize"),
                                        "name: val_loss, goal: minimize");
  yaml = std::regex_replace(yaml, std::regex("max: 90"), "max: 30");
  write("b.yaml", yaml);
  const auto plan = run("plan " + dir_ + "/b.yaml");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("results past this sweep's budget.max 30"), std::string::npos) << plan.out;
  ASSERT_EQ(run("run " + dir_ + "/b.yaml --out " + dir_ + "/B").code, 0);
  const auto expected = earlier_results("val_loss", 30);
  const json kept = read("B/warm_start.json");
  ASSERT_EQ(kept.at("results").size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(kept.at("results")[i].at("metric").get<double>(), expected[i].metric) << i;
    EXPECT_LE(kept.at("results")[i].at("budget").get<double>(), 30);
  }
  // A metric the earlier sweep never measured (ROC AUC is computed only where named): said, and none are told.
  write("auc.yaml", std::regex_replace(later(), std::regex("name: val_accuracy"), "name: val_auc"));
  const auto auc = run("plan " + dir_ + "/auc.yaml");
  ASSERT_EQ(auc.code, 0) << auc.err;
  EXPECT_NE(auc.out.find("note: search.warm_start: A: its trials never measured val_auc"), std::string::npos) << auc.out;
  const auto valid = run("validate " + dir_ + "/auc.yaml");
  EXPECT_NE(valid.out.find("starting from 0 results of 0 earlier trials"), std::string::npos) << valid.out;
  // Other task settings are noted, and the results taken: Fashion-MNIST's default validation size written out is none.
  for (const std::string size : {"10000", "5000"}) {
    write("v.yaml", std::regex_replace(later(), std::regex("batch_size: 256"), "batch_size: 256, validation_size: " + size));
    const auto plan = run("plan " + dir_ + "/v.yaml");
    EXPECT_EQ(plan.out.find("its task differs (validation_size 10000 there, 5000 here): its results are taken as they are") !=
                  std::string::npos,
              size == "5000")
        << plan.out;
  }
}

}  // namespace
}  // namespace hfta::core
