#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "hfta/search/pbt_explore.h"
#include "hfta/search/pbt_scheduler.h"

namespace hfta::search {
namespace {

// Reports every trial of the scheduler's one job with metric[id] (NaN: diverged).
std::vector<std::int64_t> run_generation(PbtScheduler& s, const std::map<std::int64_t, double>& metric) {
  const auto jobs = s.next_jobs(100, 0);
  EXPECT_EQ(jobs.size(), 1u);
  std::vector<std::int64_t> ids;
  for (const auto& t : jobs.at(0).trials) ids.push_back(t.trial_id);
  for (std::int64_t id : ids) {
    const double m = metric.count(id) ? metric.at(id) : 0.0;
    s.report({id, jobs[0].budget, m, std::isnan(m) ? TrialStatus::kDiverged : TrialStatus::kCompleted});
  }
  return ids;
}

TEST(PbtQuantile, IsCeilOfTheFractionAndAtMostHalf) {
  EXPECT_EQ(pbt_quantile(8, 0.25), 2);
  EXPECT_EQ(pbt_quantile(4, 0.25), 1);
  EXPECT_EQ(pbt_quantile(2, 0.25), 1);
  EXPECT_EQ(pbt_quantile(10, 0.25), 3);
  EXPECT_EQ(pbt_quantile(5, 0.5), 2);   // ceil(2.5) = 3, but at most half
  EXPECT_EQ(pbt_quantile(3, 0.01), 1);
}

TEST(PbtScheduler, TrainsGenerationsAndReplacesTheBottomQuantileByClonesOfTheTop) {
  PbtScheduler s(/*population=*/4, /*max=*/6, /*interval=*/2, Goal::kMaximize, 0.25, /*seed=*/7);
  ASSERT_EQ(s.plan().size(), 1u);
  EXPECT_EQ(s.plan()[0].rungs, (std::vector<RungPlan>{{4, 2}, {4, 4}, {4, 6}}));
  EXPECT_EQ(s.planned_trials(), 4 + 1 * 2);
  auto jobs = s.next_jobs(100, 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].budget, 2);
  EXPECT_EQ(jobs[0].trials, (std::vector<TrialJob>{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
  EXPECT_TRUE(s.next_jobs(100, 0).empty());  // one generation at a time
  // Trial 2 is best and trial 0 worst: 0 is replaced by trial 4, a clone of 2 at budget 2.
  const std::map<std::int64_t, double> m = {{0, 0.1}, {1, 0.5}, {2, 0.9}, {3, 0.4}};
  for (std::int64_t id = 0; id < 4; ++id) s.report({id, 2, m.at(id), TrialStatus::kCompleted});
  EXPECT_FALSE(s.may_train_again(0));
  EXPECT_TRUE(s.may_train_again(2));
  EXPECT_TRUE(s.may_train_again(4));
  ASSERT_TRUE(s.parent_of(4).has_value());
  EXPECT_EQ(*s.parent_of(4), (Parent{2, 2}));
  EXPECT_FALSE(s.parent_of(1).has_value());
  jobs = s.next_jobs(100, 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].budget, 4);
  // The clone takes the replaced member's place, from the generation's budget.
  EXPECT_EQ(jobs[0].trials, (std::vector<TrialJob>{{4, 2}, {1, 2}, {2, 2}, {3, 2}}));
  for (const auto& t : jobs[0].trials) s.report({t.trial_id, 4, t.trial_id == 3 ? 0.0 : 0.8, TrialStatus::kCompleted});
  EXPECT_EQ(*s.parent_of(5), (Parent{1, 4}));  // the best, ties to the smaller id: 1
  EXPECT_FALSE(s.finished());
  run_generation(s, {});
  EXPECT_TRUE(s.finished());
  EXPECT_TRUE(s.next_jobs(100, 0).empty());
  EXPECT_FALSE(s.may_train_again(2));
  EXPECT_FALSE(s.parent_of(6).has_value());  // none after the last generation
}

TEST(PbtScheduler, MembersThatDivergedOrStoppedAreReplacedToo) {
  PbtScheduler s(6, 4, 2, Goal::kMinimize, 0.25, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Quantile 2 of 6; trials 1, 3 and 4 diverged: all three are replaced, each
  // by a clone of one of the best two (5 and 0, losses 0.1 and 0.2).
  run_generation(s, {{0, 0.2}, {1, nan}, {2, 0.5}, {3, nan}, {4, nan}, {5, 0.1}});
  const auto ids = run_generation(s, {});
  EXPECT_EQ(ids, (std::vector<std::int64_t>{0, 6, 2, 7, 8, 5}));
  for (std::int64_t child : {6, 7, 8}) {
    const auto parent = s.parent_of(child);
    ASSERT_TRUE(parent.has_value());
    EXPECT_TRUE(parent->trial == 5 || parent->trial == 0) << parent->trial;
    EXPECT_EQ(parent->budget, 2);
  }
  EXPECT_TRUE(s.finished());
}

TEST(PbtScheduler, APopulationThatAllDivergedEnds) {
  PbtScheduler s(2, 4, 1, Goal::kMaximize, 0.25, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  run_generation(s, {{0, nan}, {1, nan}});
  EXPECT_TRUE(s.finished());
  EXPECT_TRUE(s.next_jobs(10, 0).empty());
}

TEST(PbtScheduler, ParentsAreDrawnFromTheTopByTheSeedAlone) {
  // Ten members, quantile 3: over the seeds, every top member is drawn, never another.
  std::set<std::int64_t> parents;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    PbtScheduler a(10, 2, 1, Goal::kMaximize, 0.25, seed), b(10, 2, 1, Goal::kMaximize, 0.25, seed);
    std::map<std::int64_t, double> m;
    for (std::int64_t id = 0; id < 10; ++id) m[id] = static_cast<double>(id);
    run_generation(a, m);
    run_generation(b, m);
    for (std::int64_t child = 10; child < 13; ++child) {
      EXPECT_EQ(a.parent_of(child), b.parent_of(child));
      parents.insert(a.parent_of(child)->trial);
    }
    EXPECT_FALSE(a.parent_of(13).has_value());
  }
  EXPECT_EQ(parents, (std::set<std::int64_t>{7, 8, 9}));
}

TEST(PbtScheduler, RefusesWhatCannotRun) {
  EXPECT_THROW(PbtScheduler(1, 4, 1, Goal::kMaximize, 0.25, 0), std::invalid_argument);
  EXPECT_THROW(PbtScheduler(4, 4, 5, Goal::kMaximize, 0.25, 0), std::invalid_argument);
  EXPECT_THROW(PbtScheduler(4, 4, 1, Goal::kMaximize, 0.75, 0), std::invalid_argument);
  EXPECT_THROW(PbtScheduler(4, 4, 1, Goal::kMaximize, 0.25, 0).report({0, 1, 0.5, TrialStatus::kCompleted}),
               std::invalid_argument);  // nothing handed out yet
}

TEST(PbtScheduler, NoGenerationEndingInsideTheBurnInExploits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  PbtScheduler s(4, 8, 2, Goal::kMaximize, 0.25, 3, /*burn_in=*/5);
  EXPECT_EQ(s.planned_trials(), 4 + 1 * 1);  // only the generation ending at 6 exploits (8 is the last)
  // At 2 and 4 nobody is replaced for ranking low, but a diverged member is.
  run_generation(s, {{0, 0.1}, {1, 0.5}, {2, 0.9}, {3, 0.4}});
  EXPECT_FALSE(s.parent_of(4).has_value());
  EXPECT_EQ(run_generation(s, {{0, 0.1}, {1, nan}, {2, 0.9}, {3, 0.4}}), (std::vector<std::int64_t>{0, 1, 2, 3}));
  ASSERT_TRUE(s.parent_of(4).has_value());
  EXPECT_EQ(s.parent_of(4)->budget, 4);
  EXPECT_FALSE(s.parent_of(5).has_value());
  // At 6 the worst is replaced as usual.
  EXPECT_EQ(run_generation(s, {{0, 0.1}, {4, 0.5}, {2, 0.9}, {3, 0.4}}), (std::vector<std::int64_t>{0, 4, 2, 3}));
  EXPECT_EQ(run_generation(s, {}), (std::vector<std::int64_t>{5, 4, 2, 3}));
  EXPECT_EQ(s.parent_of(5)->budget, 6);
  EXPECT_TRUE(s.finished());
}

TEST(PbtScheduler, ALastGenerationShorterThanTheInterval) {
  PbtScheduler s(2, 5, 2, Goal::kMaximize, 0.5, 0);
  EXPECT_EQ(s.plan()[0].rungs, (std::vector<RungPlan>{{2, 2}, {2, 4}, {2, 5}}));
}

ParameterSpec spec(const std::string& name, Distribution d, double min, double max) {
  ParameterSpec p;
  p.name = name, p.distribution = d, p.min = min, p.max = max;
  return p;
}

TEST(PbtExplore, PerturbsByAFactorWithinTheRangeAndLeavesTheRestAlone) {
  ParameterSpec lr = spec("lr", Distribution::kLogUniform, 1e-3, 0.5);
  ParameterSpec width = spec("width", Distribution::kIntUniform, 16, 64);
  ParameterSpec layers = spec("layers", Distribution::kIntUniform, 1, 3);
  const SearchSpace space({lr, width, layers});
  const Config parent = {{"lr", 0.1}, {"width", std::int64_t{32}}, {"layers", std::int64_t{2}}};
  const Perturbation never_resample{0.0, {1.2, 0.8}};
  std::set<double> lrs;
  std::set<std::int64_t> layer_counts;
  for (std::int64_t child = 0; child < 40; ++child) {
    const Config c = explore(parent, space, {"lr", "layers"}, never_resample, 3, child);
    lrs.insert(std::get<double>(c.at("lr")));
    layer_counts.insert(std::get<std::int64_t>(c.at("layers")));
    EXPECT_EQ(c.at("width"), parent.at("width"));  // not mutable: the parent's
    EXPECT_EQ(c, explore(parent, space, {"lr", "layers"}, never_resample, 3, child));  // keyed, not stateful
  }
  EXPECT_EQ(lrs.size(), 2u);
  EXPECT_NEAR(*lrs.begin(), 0.08, 1e-15);
  EXPECT_NEAR(*lrs.rbegin(), 0.12, 1e-15);
  // 2 * 1.2 and 2 * 0.8 round back to 2: an integer moves by one instead.
  EXPECT_EQ(layer_counts, (std::set<std::int64_t>{1, 3}));
  // Clamped at the range's ends.
  const Config high = explore({{"lr", 0.45}, {"width", std::int64_t{32}}, {"layers", std::int64_t{3}}}, space,
                              {"lr", "layers"}, {0.0, {1.2}}, 3, 0);
  EXPECT_EQ(std::get<double>(high.at("lr")), 0.5);
  EXPECT_EQ(std::get<std::int64_t>(high.at("layers")), 3);
}

TEST(PbtExplore, ListedValuesMoveToANeighbourAndResamplingDrawsFromTheDistribution) {
  ParameterSpec dropout;
  dropout.name = "dropout", dropout.distribution = Distribution::kChoice;
  dropout.values = {0.0, 0.1, 0.2, 0.3};
  ParameterSpec lr = spec("lr", Distribution::kUniform, 0.0, 1.0);
  const SearchSpace space({dropout, lr});
  std::set<double> dropouts;
  for (std::int64_t child = 0; child < 40; ++child) {
    const Config c = explore({{"dropout", 0.1}, {"lr", 0.5}}, space, {"dropout"}, {0.0, {1.2, 0.8}}, 0, child);
    dropouts.insert(std::get<double>(c.at("dropout")));
  }
  EXPECT_EQ(dropouts, (std::set<double>{0.0, 0.2}));
  // Always resampled: values from all over lr's range, not 0.5 times a factor.
  int far = 0;
  for (std::int64_t child = 0; child < 200; ++child) {
    const double x = std::get<double>(explore({{"dropout", 0.1}, {"lr", 0.5}}, space, {"lr"}, {1.0, {1.2}}, 0, child).at("lr"));
    EXPECT_GE(x, 0.0);
    EXPECT_LE(x, 1.0);
    far += std::abs(x - 0.5) > 0.2;
  }
  EXPECT_GT(far, 80);  // 60% of uniform draws lie that far
}

TEST(PbtExplore, ResamplesAtItsProbability) {
  const SearchSpace space({spec("lr", Distribution::kUniform, 0.0, 1.0)});
  int resampled = 0;
  for (std::int64_t child = 0; child < 2000; ++child) {
    const double x = std::get<double>(explore({{"lr", 0.5}}, space, {"lr"}, {0.25, {1.2, 0.8}}, 9, child).at("lr"));
    resampled += std::abs(x - 0.6) > 1e-12 && std::abs(x - 0.4) > 1e-12;
  }
  EXPECT_NEAR(resampled / 2000.0, 0.25, 0.04);
}

TEST(PbtExplore, ABranchedNamePerturbsWithinTheBranchThatHolds) {
  ParameterSpec optimizer;
  optimizer.name = "optimizer", optimizer.distribution = Distribution::kChoice, optimizer.values = {std::string("sgd"),
                                                                                                     std::string("adam")};
  ParameterSpec sgd_lr = spec("lr", Distribution::kLogUniform, 0.01, 0.5);
  sgd_lr.when = {{"optimizer", {std::string("sgd")}}}, sgd_lr.branch = 0;
  ParameterSpec adam_lr = spec("lr", Distribution::kLogUniform, 1e-4, 3e-3);
  adam_lr.when = {{"optimizer", {std::string("adam")}}}, adam_lr.branch = 1;
  const SearchSpace space({optimizer, sgd_lr, adam_lr});
  for (std::int64_t child = 0; child < 50; ++child) {
    const Config c = explore({{"optimizer", std::string("adam")}, {"lr", 2.9e-3}}, space, {"lr"}, {0.5, {1.2, 0.8}}, 1, child);
    EXPECT_EQ(c.at("optimizer"), ParamValue(std::string("adam")));
    const double x = std::get<double>(c.at("lr"));
    EXPECT_GE(x, 1e-4);
    EXPECT_LE(x, 3e-3);
  }
}

}  // namespace
}  // namespace hfta::search
