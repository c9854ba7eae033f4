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
  EXPECT_TRUE(e.packing.empty());
  EXPECT_FALSE(e.renamed);
  EXPECT_EQ(sweep_edits(sweep(), sweep({{"task", "task:\n  model: mlp\n  batch_size: 64\n"}}), false, false).changed,
            Strings{"task.batch_size"});
}

// Objectives added or changed are named by their item; the one that stays is not.
TEST(ResumeChecks, ObjectivesAreNamedByTheirPlaceInTheList) {
  const std::string two = "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: minimize}\n";
  EXPECT_EQ(sweep_edits(sweep(), sweep({{"metric", two}}), false, false).changed,
            (Strings{"metric[1].goal", "metric[1].name"}));
  EXPECT_EQ(sweep_edits(sweep({{"metric", two}}), sweep(), false, false).changed,
            (Strings{"metric[1].goal", "metric[1].name"}));
  const std::string flipped = "metric:\n  - {name: val_accuracy, goal: maximize}\n  - {name: params, goal: maximize}\n";
  EXPECT_EQ(sweep_edits(sweep({{"metric", two}}), sweep({{"metric", flipped}}), false, false).changed,
            Strings{"metric[1].goal"});
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
  EXPECT_EQ(run_options_of(dir.string()), nlohmann::json::object());  // none: a run from before run.json
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
