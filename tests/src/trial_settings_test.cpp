#include <gtest/gtest.h>

#include "../support/sweep_text.h"
#include "hfta/core/search_setup.h"
#include "hfta/core/sweep_loader.h"
#include "hfta/core/trial_settings.h"

namespace hfta::core {
namespace {

using search::Config;

SweepConfig sweep_with(const std::string& task, const std::string& budget = "") {
  std::map<std::string, std::string> sections{{"task", task}};
  if (!budget.empty()) sections["budget"] = budget;
  return load_sweep_string(test::sweep_yaml(sections));
}

const std::string kTask = "task:\n  model: mlp\n  batch_size: 100\n  options: {width: 32}\n";

TEST(TrialSettings, AnEpochIsTheTrainingSplitInBatchesTheLastOnePartial) {
  const SweepConfig s = sweep_with(kTask);
  const TrialSettings settings(s, 1050);  // 11 batches of 100, the last of 50
  EXPECT_EQ(settings.steps_for(1, {}), 11);
  EXPECT_EQ(settings.steps_for(3, {}), 33);
  EXPECT_EQ(settings.steps_for(3, {{"batch_size", std::int64_t{50}}}), 63);  // the trial's batch size, not the task's
  EXPECT_DOUBLE_EQ(settings.budget_of(33, {}), 3);
  EXPECT_DOUBLE_EQ(settings.budget_of(5, {}), 5.0 / 11);
}

TEST(TrialSettings, EveryPositiveBudgetTrainsAStepAndNothingTrainsNone) {
  const SweepConfig s = sweep_with(kTask, "budget:\n  unit: samples\n  min: 100\n  max: 900\n");
  const TrialSettings settings(s, 1000);
  EXPECT_EQ(settings.raw_steps(10, {}), 0);  // a tenth of a batch rounds to nothing...
  EXPECT_EQ(settings.steps_for(10, {}), 1);  // ...but trains one step
  EXPECT_EQ(settings.steps_for(0, {}), 0);
  EXPECT_EQ(settings.steps_for(1000, {}), 10);
  EXPECT_DOUBLE_EQ(settings.budget_of(10, {}), 1000);
}

TEST(TrialSettings, ABudgetInSamplesCountsTheExamplesAStepTrains) {
  // A batch of 100 over a table of 30 rows is the 30 rows, every step.
  const SweepConfig s = sweep_with(kTask, "budget:\n  unit: samples\n  min: 300\n  max: 900\n");
  const TrialSettings settings(s, 30);
  EXPECT_EQ(settings.steps_for(900, {}), 30);
  EXPECT_DOUBLE_EQ(settings.budget_of(30, {}), 900);
  EXPECT_EQ(settings.steps_for(900, {{"batch_size", std::int64_t{10}}}), 90);  // a batch within the rows
}

TEST(TrialSettings, StepsAreTheBudgetWhenItCountsSteps) {
  const SweepConfig s = sweep_with(kTask, "budget:\n  unit: steps\n  min: 10\n  max: 90\n");
  const TrialSettings settings(s, 60000);
  EXPECT_EQ(settings.steps_for(30, {}), 30);
  EXPECT_DOUBLE_EQ(settings.budget_of(30, {}), 30);
}

TEST(TrialSettings, TheTrialsParameterOverridesTheTasksWhichOverridesTheCatalog) {
  const SweepConfig s = sweep_with(kTask);
  EXPECT_EQ(model_options(s, {}).at("width"), "32");
  EXPECT_EQ(model_options(s, {}).at("depth"), "2");  // the catalog's, as the loader filled it in
  EXPECT_EQ(model_options(s, {{"width", std::int64_t{64}}}).at("width"), "64");
  EXPECT_EQ(model_options(s, {{"lr", 0.1}}).count("lr"), 0u);  // a training hyperparameter, no model option
  const TrialSettings settings(s, 1000);
  EXPECT_EQ(settings.array_options({}).batch_size, 100);
  EXPECT_EQ(settings.array_options({{"batch_size", std::int64_t{64}}}).batch_size, 64);
  EXPECT_EQ(settings.array_options({}).optimizer, "sgd");
  const auto slot = settings.slot_of(7, {{"lr", 0.5}}, 99);
  EXPECT_EQ(slot.trial_id, 7);
  EXPECT_EQ(slot.seed, 99u);
  EXPECT_DOUBLE_EQ(slot.lr, 0.5);
  EXPECT_DOUBLE_EQ(slot.momentum, 0);  // the catalog's default
  EXPECT_DOUBLE_EQ(slot.beta2, 0.999);
}

// The image models' flip and crop options augment an array's batches: the
// task's, or a trial's where they are parameters (unfused: an array's models
// share each batch, so trials of different values never share an array).
TEST(TrialSettings, FlipsAndCropsAreTheImageModelsOptionsAndSplitArrays) {
  const SweepConfig none = sweep_with("task:\n  model: cnn\n");
  EXPECT_FALSE(TrialSettings(none, 1000).array_options({}).augmentation.any());
  // Left at their defaults, they stay out of the fusion key (as before they existed, so that a
  // directory's kept measurements are found again); set, they are in it.
  EXPECT_EQ(task_key(none).find("flip"), std::string::npos) << task_key(none);
  EXPECT_EQ(task_key(none).find("crop"), std::string::npos) << task_key(none);
  const SweepConfig task = sweep_with("task:\n  model: resnet18\n  options: {flip: true, crop: 4}\n");
  const auto a = TrialSettings(task, 1000).array_options({}).augmentation;
  EXPECT_TRUE(a.flip);
  EXPECT_EQ(a.crop, 4);
  EXPECT_NE(task_key(task).find("|crop=4|flip=true"), std::string::npos) << task_key(task);
  const SweepConfig swept = load_sweep_string(test::sweep_yaml(
      {{"task", "task:\n  model: mobilenet_v3_small\n"},
       {"parameters", "parameters:\n  lr: {values: [0.1, 0.01]}\n  crop: {values: [0, 2]}\n  flip: {values: [false, true]}\n"}}));
  for (const auto& p : swept.parameters) EXPECT_EQ(p.fuse, p.name == "lr") << p.name;
  const auto b = TrialSettings(swept, 1000).array_options({{"crop", std::int64_t{2}}, {"flip", true}}).augmentation;
  EXPECT_TRUE(b.flip);
  EXPECT_EQ(b.crop, 2);
}

TEST(TrialSettings, AnUnsetEpsIsEachOptimizersOwnDefault) {
  const SweepConfig s = sweep_with(kTask);
  const TrialSettings settings(s, 1000);
  auto eps = [&](const std::string& optimizer) { return settings.slot_of(0, {{"optimizer", optimizer}}, 0).eps; };
  EXPECT_DOUBLE_EQ(eps("adam"), 1e-8);  // PyTorch's defaults
  EXPECT_DOUBLE_EQ(eps("rmsprop"), 1e-8);
  EXPECT_DOUBLE_EQ(eps("adagrad"), 1e-10);
  EXPECT_DOUBLE_EQ(eps("adadelta"), 1e-6);
  EXPECT_DOUBLE_EQ(settings.slot_of(0, {{"optimizer", std::string("adagrad")}, {"eps", 1e-3}}, 0).eps, 1e-3);
}

TEST(TrialSettings, ScheduleLengthsCountTrainingStepsOfTheFullBudget) {
  const SweepConfig s = sweep_with(kTask);  // budget.max 9 epochs
  const TrialSettings settings(s, 1000);    // 10 steps an epoch: 90 in all
  const Config c{{"schedule", std::string("multistep")}, {"milestones", std::string("0.5,0.75")}};
  const auto o = settings.schedule_of(c);
  EXPECT_EQ(o.kind, fusion::ScheduleKind::kMultiStep);
  EXPECT_EQ(o.milestones, (std::vector<std::int64_t>{45, 68}));  // 67.5 rounds away from zero
  EXPECT_EQ(o.t_max, 90);                                        // cosine's and linear's length, unless t_max is set
  EXPECT_EQ(o.total_steps, 90);
  EXPECT_EQ(settings.schedule_of({{"t_max", std::int64_t{20}}}).t_max, 20);
  EXPECT_EQ(settings.schedule_of({}).kind, fusion::ScheduleKind::kConstant);
  const auto linear = settings.schedule_of({{"schedule", std::string("linear")}, {"eta_min", 1e-4}});
  EXPECT_EQ(linear.kind, fusion::ScheduleKind::kLinear);
  EXPECT_EQ(linear.t_max, 90);
  EXPECT_DOUBLE_EQ(linear.eta_min, 1e-4);
  // A warm-up in steps, or as a share of the full budget's 90 steps.
  EXPECT_EQ(settings.schedule_of({{"warmup", std::int64_t{7}}}).warmup, 7);
  EXPECT_EQ(settings.schedule_of({{"warmup_ratio", 0.1}}).warmup, 9);
  EXPECT_EQ(settings.schedule_of({}).warmup, 0);
}

}  // namespace
}  // namespace hfta::core
