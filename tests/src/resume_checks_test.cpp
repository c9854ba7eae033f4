#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/sweep_text.h"
#include "hfta/core/resume_checks.h"
#include "hfta/core/sweep_loader.h"

namespace hfta::core {
namespace {

using Strings = std::vector<std::string>;

SweepConfig sweep(const std::map<std::string, std::string>& sections = {}) {
  return load_sweep_string(test::sweep_yaml(sections));
}

TEST(ResumeChecks, EditsThatChangeTheTrialsAreNamedByTheirKeys) {
  const auto e = sweep_edits(sweep(), sweep({{"parameters",
                                              "parameters:\n  lr:\n    distribution: log_uniform\n"
                                              "    min: 0.001\n    max: 0.5\n"}}),
                             false, false);
  EXPECT_EQ(e.changed, Strings{"parameters.lr.max"});
  ASSERT_EQ(e.changed_values.size(), 1u);  // with the values, as recorded -> as given
  EXPECT_EQ(e.changed_values[0].rfind("parameters.lr.max (", 0), 0u) << e.changed_values[0];
  EXPECT_NE(e.changed_values[0].find(" -> 0.5)"), std::string::npos) << e.changed_values[0];
  EXPECT_TRUE(e.packing.empty());
  EXPECT_FALSE(e.renamed);
  EXPECT_EQ(sweep_edits(sweep(), sweep({{"task", "task:\n  model: mlp\n  batch_size: 64\n"}}), false, false).changed,
            Strings{"task.batch_size"});
}

// What resume takes as a sweep grown (sweep_growth), and why it refuses the rest.
TEST(ResumeChecks, ASweepGrowsByItsMethodsCountAloneAndSaysWhyNotOtherwise) {
  auto growth = [](const std::string& from, const std::string& to, std::string& why) {
    // (A grid takes listed values.)
    const std::string listed = "parameters:\n  lr: {values: [0.01, 0.1]}\n";
    const SweepConfig a = sweep({{"search", from}, {"parameters", listed}}), b = sweep({{"search", to}, {"parameters", listed}});
    return sweep_growth(a, b, sweep_edits(a, b, false, false), why);
  };
  std::string why;
  const auto random = growth("search: {method: random, trials: 4}\n", "search: {method: random, trials: 9}\n", why);
  ASSERT_TRUE(random.has_value()) << why;
  EXPECT_EQ(random->key, "search.trials");
  EXPECT_EQ(random->from, 4);
  EXPECT_EQ(random->to, 9);
  EXPECT_EQ(growth("search: {method: grid}\n", "search: {method: grid, repeats: 3}\n", why)->key, "search.repeats");
  // (ASHA grows under CMA-ES, whose range parameters this helper has none of: Cli.CmaEsTrains...)
  EXPECT_EQ(growth("search: {method: hyperband, searcher: tpe}\n", "search: {method: hyperband, searcher: tpe, iterations: 2}\n", why)->key,
            "search.iterations");
  // Not a growth, nothing to say: no edit, or edits of other keys.
  EXPECT_FALSE(growth("search: {method: random, trials: 4}\n", "search: {method: random, trials: 4}\n", why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(growth("search: {method: asha, trials: 4}\n", "search: {method: asha, trials: 4, eta: 4}\n", why));
  EXPECT_EQ(why, "");
  // Refused, saying why.
  const std::pair<std::string, std::string> refused[] = {
      {"search: {method: random, trials: 4}\n", "search: {method: random, trials: 3}\n"},
      {"search: {method: hyperband, iterations: 1}\n", "search: {method: hyperband, iterations: 2, eta: 4}\n"},
      // TPE's default waves follow the count (1 for 4 trials, more for 12): the reason is TPE's, not the waves'.
      {"search: {method: random, trials: 4, searcher: tpe}\n", "search: {method: random, trials: 12, searcher: tpe}\n"},
      {"search: {method: random, trials: 4, stopping: median}\n", "search: {method: random, trials: 8, stopping: median}\n"},
      {"search: {method: sha, trials: 9}\n", "search: {method: sha, trials: 27}\n"},
      {"search: {method: asha, trials: 4}\n", "search: {method: asha, trials: 5}\n"}};
  const char* says[] = {"search.trials from 4 to 3: a sweep can grow, not shrink",
                        "search.iterations along with search.eta: resume grows a sweep by search.iterations alone",
                        "search.trials from 4 to 12: TPE started the trials so far in waves sized by their count",
                        "search.trials from 4 to 8: search.stopping median trains the trials together",
                        "search.trials: successive halving sizes every rung by it",
                        "search.trials: ASHA promotes trials in the order their results arrive"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_FALSE(growth(refused[i].first, refused[i].second, why)) << i;
    EXPECT_EQ(why.rfind(says[i], 0), 0u) << why;
  }
}

// Objectives added or changed are named by their item; the one that stays is not.
TEST(ResumeChecks, ObjectivesAreNamedByTheirPlaceInTheList) {
  const std::string two = "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: minimize}\n";
  const auto added = sweep_edits(sweep(), sweep({{"metric", two}}), false, false);
  EXPECT_EQ(added.changed, Strings{"metric[1]"});
  EXPECT_EQ(added.changed_values, Strings{"metric[1] (none -> {\"goal\":\"minimize\",\"name\":\"params\"})"});
  EXPECT_EQ(sweep_edits(sweep({{"metric", two}}), sweep(), false, false).changed, Strings{"metric[1]"});
  const std::string flipped = "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: maximize}\n";
  EXPECT_EQ(sweep_edits(sweep({{"metric", two}}), sweep({{"metric", flipped}}), false, false).changed,
            Strings{"metric[1].goal"});
}

// A section added whole is named once, as the user wrote it, not as each key
// its defaults fill in (early_stopping.min_delta, which was never written).
TEST(ResumeChecks, ASectionAddedOrRemovedWholeIsNamedOnce) {
  const auto added = sweep_edits(sweep(), sweep({{"early_stopping", "early_stopping:\n  patience: 0\n"}}), false, false);
  EXPECT_EQ(added.changed, Strings{"early_stopping"});
  ASSERT_EQ(added.changed_values.size(), 1u);
  EXPECT_EQ(added.changed_values[0].rfind("early_stopping (none -> {", 0), 0u) << added.changed_values[0];
  const auto removed = sweep_edits(sweep({{"early_stopping", "early_stopping:\n  patience: 2\n"}}), sweep(), false, false);
  EXPECT_EQ(removed.changed, Strings{"early_stopping"});
  EXPECT_EQ(removed.changed_values[0].find(" -> none)"), removed.changed_values[0].size() - 9) << removed.changed_values[0];
  // A key edited inside a section both have is named by itself.
  EXPECT_EQ(sweep_edits(sweep({{"early_stopping", "early_stopping:\n  patience: 2\n"}}),
                        sweep({{"early_stopping", "early_stopping:\n  patience: 3\n"}}), false, false)
                .changed,
            Strings{"early_stopping.patience"});
}

TEST(ResumeChecks, PackingAndTheNameAreTakenNotRefused) {
  const auto e = sweep_edits(sweep(), sweep({{"name", "name: renamed\n"}, {"fusion", "fusion:\n  max_array: 4\n"}}),
                             false, false);
  EXPECT_TRUE(e.changed.empty());
  EXPECT_EQ(e.packing, Strings{"fusion.max_array"});
  EXPECT_TRUE(e.renamed);
  const auto none = sweep_edits(sweep(), sweep(), false, false);
  EXPECT_TRUE(none.changed.empty() && none.packing.empty() && !none.renamed);
}

TEST(ResumeChecks, ASeedGivenToRunOverridesTheFilesSeed) {
  SweepConfig recorded = sweep();
  recorded.seed = 77;  // run --seed 77: the file still says 3
  EXPECT_EQ(sweep_edits(recorded, sweep(), false, false).changed, Strings{"seed"});
  EXPECT_TRUE(sweep_edits(recorded, sweep(), /*seed_given=*/true, false).changed.empty());
}

TEST(ResumeChecks, RunOptionsOfTheWrongTypeAreDamage) {
  const auto dir = std::filesystem::temp_directory_path() / "hfta_resume_checks_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(run_options_of(dir.string()));  // lost: every run writes it before its sweep.json
  EXPECT_NE(run_json_damage(dir.string()).find("/run.json is missing (removed from outside)"), std::string::npos);
  auto write = [&](const std::string& text) { std::ofstream(dir / "run.json") << text; };
  write(R"({"fusion": "off", "workers": 2, "device": "cpu", "seed_given": false, "threads": 4})");
  ASSERT_TRUE(run_options_of(dir.string()));
  EXPECT_EQ(run_options_of(dir.string())->at("workers"), 2);
  for (const char* damaged : {R"({"fusion": "sometimes"})", R"({"workers": -1})", R"({"workers": "2"})",
                              R"({"device": ""})", R"({"seed_given": 1})", R"({"threads": 0})",
                              R"({"threads": "2"})", "[1]", "{\"fusion\": "}) {
    write(damaged);
    EXPECT_FALSE(run_options_of(dir.string())) << damaged;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hfta::core
