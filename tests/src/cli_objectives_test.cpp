// Several objectives and constraints through the CLI: Pareto fronts promoted and reported, and only
// trials within the constraints called best.
#include <gtest/gtest.h>

#include "../support/cli_fixture.h"

namespace {

using namespace hfta::test;  // NOLINT: the CLI tests' fixture and sweeps

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
  setenv("HFTA_TUNE_SIGINT_AFTER_PIECES", "5", 1);
  const Result cut = run("run " + sweep + " --out " + dir_ + "/cut --workers 1");
  unsetenv("HFTA_TUNE_SIGINT_AFTER_PIECES");
  ASSERT_EQ(cut.code, 1) << cut.err;
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

}  // namespace
