#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "hfta/search/asha_scheduler.h"
#include "hfta/search/searcher.h"
#include "../support/parameter_specs.h"
#include "../support/wave_runs.h"

namespace hfta::search {
namespace {

using test::listed;
using test::number;
using test::range;
using test::run_in_waves;

TEST(CmaEsSearcher, ConvergesOnAnEllipsoidGenerationByGeneration) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1), range("y", Distribution::kUniform, -5, 5)});
  auto loss = [](const Config& c) {
    return std::pow(number(c, "x") - 0.3, 2) + 10 * std::pow((number(c, "y") - 2) / 10, 2);
  };
  CmaEsSearcher es(space, 5, Goal::kMinimize, 6);
  std::map<std::int64_t, Config> configs;
  const auto means = run_in_waves(es, 90, Waves::sized(0, 6), loss, configs);
  ASSERT_EQ(means.size(), 15u);  // one wave a generation
  EXPECT_LT(means.back(), 1e-3 * means.front()) << means.front() << " -> " << means.back();
  for (std::int64_t id = 84; id < 90; ++id) {
    EXPECT_NEAR(number(configs[id], "x"), 0.3, 0.05);
    EXPECT_NEAR(number(configs[id], "y"), 2, 0.5);
  }
  // Random search over the same trials stays where it started.
  RandomSearcher random(space, 5);
  double random_late = 0;
  for (std::int64_t id = 84; id < 90; ++id) random_late += loss(random.suggest(id)) / 6;
  EXPECT_GT(random_late, 100 * means.back());
}

// Log distributions are searched in log space, integers and grids rounded, and a
// maximised metric is climbed; choices are random search's draws.
TEST(CmaEsSearcher, SearchesEachParameterOnItsScaleAndLeavesChoicesToRandomDraws) {
  auto width = range("width", Distribution::kIntUniform, 16, 256);
  auto lr = range("lr", Distribution::kLogUniform, 1e-5, 1);
  auto wd = range("wd", Distribution::kQuantized, 0, 0.1);
  wd.q = 0.01;
  auto act = listed("act", Distribution::kChoice, {std::string("relu"), std::string("gelu")});
  SearchSpace space({width, lr, wd, act});
  ASSERT_EQ(CmaEsSearcher::dimensions(space).size(), 3u);
  auto accuracy = [](const Config& c) {
    return -std::pow(std::log10(number(c, "lr")) + 3, 2) - std::pow((number(c, "width") - 100) / 24.0, 2) -
           std::pow((number(c, "wd") - 0.03) * 20, 2);
  };
  CmaEsSearcher climbs(space, 9, Goal::kMaximize, 8);
  std::map<std::int64_t, Config> configs;
  run_in_waves(climbs, 160, Waves::sized(0, 8), accuracy, configs);
  int relu = 0;
  for (std::int64_t id = 152; id < 160; ++id) {
    const Config& c = configs[id];
    EXPECT_TRUE(std::holds_alternative<std::int64_t>(c.at("width")));
    EXPECT_NEAR(std::log10(number(c, "lr")), -3, 0.3) << id;
    EXPECT_NEAR(number(c, "width"), 100, 12) << id;
    EXPECT_NEAR(number(c, "wd"), 0.03, 0.011) << id;
    EXPECT_EQ(c.at("act"), RandomSearcher(space, 9).suggest(id).at("act"));
    relu += c.at("act") == ParamValue(std::string("relu"));
  }
  EXPECT_GT(relu, 0);
  EXPECT_LT(relu, 8);
}

// What a generation is drawn from depends on the results before it, not on
// the order they came in; a trial with no result (it failed) and a diverged one rank last.
TEST(CmaEsSearcher, DrawsAGenerationFromItsPredecessorsResultsWhateverTheirOrder) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1), range("y", Distribution::kUniform, 0, 1)});
  auto loss = [](const Config& c) { return std::pow(number(c, "x") - 0.9, 2) + std::pow(number(c, "y") - 0.1, 2); };
  CmaEsSearcher forward(space, 3, Goal::kMinimize, 4), backward(space, 3, Goal::kMinimize, 4);
  std::vector<Config> first;
  for (std::int64_t id = 0; id < 4; ++id) {
    first.push_back(forward.suggest(id));
    EXPECT_EQ(first.back(), backward.suggest(id));
  }
  for (std::int64_t id = 0; id < 4; ++id) forward.observe(id, first[id], TrialResult{id, 1.0, loss(first[id])});
  for (std::int64_t id = 3; id >= 0; --id) {
    // A later rung's result does not re-rank it: its first does.
    backward.observe(id, first[id], TrialResult{id, 3.0, -1.0});
    backward.observe(id, first[id], TrialResult{id, 1.0, loss(first[id])});
  }
  for (std::int64_t id = 4; id < 8; ++id) EXPECT_EQ(forward.suggest(id), backward.suggest(id));

  // The best of the first generation failed (no result) or diverged: the draws move elsewhere.
  std::int64_t best = 0;
  for (std::int64_t id = 1; id < 4; ++id) best = loss(first[id]) < loss(first[best]) ? id : best;
  CmaEsSearcher failed(space, 3, Goal::kMinimize, 4), diverged(space, 3, Goal::kMinimize, 4);
  for (std::int64_t id = 0; id < 4; ++id) {
    failed.suggest(id);
    diverged.suggest(id);
    if (id != best) failed.observe(id, first[id], TrialResult{id, 1.0, loss(first[id])});
    diverged.observe(id, first[id],
                     TrialResult{id, 1.0, id == best ? std::numeric_limits<double>::quiet_NaN() : loss(first[id])});
  }
  EXPECT_EQ(failed.suggest(4), diverged.suggest(4));
  EXPECT_NE(failed.suggest(4), forward.suggest(4));

  // Fewer than half measured (3 of 4 diverged): the Gaussian stays at the start, and the
  // next generation draws from it as a searcher that starts there at trial 4 would.
  CmaEsSearcher poorly(space, 3, Goal::kMinimize, 4), starting(space, 3, Goal::kMinimize, 4, 4);
  for (std::int64_t id = 0; id < 4; ++id) {
    poorly.suggest(id);
    poorly.observe(id, first[id],
                   TrialResult{id, 1.0, id == 2 ? loss(first[id]) : std::numeric_limits<double>::quiet_NaN()});
  }
  for (std::int64_t id = 4; id < 8; ++id) EXPECT_EQ(poorly.suggest(id), starting.suggest(id)) << id;
  // Half measured is enough to move it.
  CmaEsSearcher half(space, 3, Goal::kMinimize, 4);
  for (std::int64_t id = 0; id < 4; ++id) {
    half.suggest(id);
    half.observe(id, first[id], TrialResult{id, 1.0, id < 2 ? loss(first[id]) : std::numeric_limits<double>::quiet_NaN()});
  }
  EXPECT_NE(half.suggest(4), starting.suggest(4));
}

// The points to evaluate come first, as a wave of their own; the Gaussian starts at the best of them.
TEST(CmaEsSearcher, StartsAtTheBestPointToEvaluate) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1), range("y", Distribution::kUniform, 0, 1)});
  const std::vector<Config> points = {{{"x", 0.1}, {"y", 0.1}}, {{"x", 0.85}, {"y", 0.2}}};
  PointsFirstSearcher es(std::make_unique<CmaEsSearcher>(space, 4, Goal::kMinimize, 6, 2), points, space, 4);
  for (std::int64_t id = 0; id < 2; ++id) {
    const Config c = es.suggest(id);
    EXPECT_EQ(c, points[static_cast<std::size_t>(id)]);
    es.observe(id, c, TrialResult{id, 1.0, id == 1 ? 0.5 : 2.0});
  }
  double x = 0, y = 0;
  for (std::int64_t id = 2; id < 8; ++id) {
    const Config c = es.suggest(id);
    x += number(c, "x") / 6, y += number(c, "y") / 6;
  }
  EXPECT_NEAR(x, 0.85, 0.15);
  EXPECT_NEAR(y, 0.2, 0.15);
  // Waves: the two points, then generations of six.
  const Waves waves = Waves::sized(2, 6);
  EXPECT_EQ(waves.among(15), 4);
  EXPECT_EQ(waves.end(15, 0), 2);
  EXPECT_EQ(waves.end(15, 1), 8);
  EXPECT_EQ(waves.end(15, 2), 14);
  EXPECT_EQ(waves.end(15, 3), 15);
  EXPECT_EQ(Waves::sized(0, 6).among(12), 2);
  EXPECT_EQ(Waves::sized(0, 6).end(12, 0), 6);
}

// search.warm_start tells earlier sweeps' results under ids -1, -2, ... before
// any trial: the Gaussian starts at the best of them, as at a point to evaluate.
TEST(CmaEsSearcher, StartsAtTheBestEarlierResult) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1), range("y", Distribution::kUniform, 0, 1)});
  CmaEsSearcher es(space, 4, Goal::kMinimize, 6);
  es.observe(-1, {{"x", 0.1}, {"y", 0.1}}, TrialResult{-1, 1.0, 2.0});
  es.observe(-2, {{"x", 0.85}, {"y", 0.2}}, TrialResult{-2, 1.0, 0.5});
  es.observe(-3, {{"x", 0.5}, {"y", 0.9}}, TrialResult{-3, 1.0, std::numeric_limits<double>::quiet_NaN()});
  double x = 0, y = 0;
  for (std::int64_t id = 0; id < 6; ++id) {
    const Config c = es.suggest(id);
    x += number(c, "x") / 6, y += number(c, "y") / 6;
  }
  EXPECT_NEAR(x, 0.85, 0.15);
  EXPECT_NEAR(y, 0.2, 0.15);
  // Without them it starts at the centre.
  CmaEsSearcher cold(space, 4, Goal::kMinimize, 6);
  x = 0;
  for (std::int64_t id = 0; id < 6; ++id) x += number(cold.suggest(id), "x") / 6;
  EXPECT_NEAR(x, 0.5, 0.15);
}

TEST(CmaEsSearcher, NeedsANumericRangeEveryTrialHas) {
  auto act = listed("act", Distribution::kChoice, {std::string("relu"), std::string("gelu")});
  auto momentum = range("momentum", Distribution::kUniform, 0, 1);
  momentum.when = {{"act", {std::string("relu")}}};
  EXPECT_THROW(CmaEsSearcher(SearchSpace({act, momentum}), 1, Goal::kMinimize, 4), std::invalid_argument);
  // A condition every trial meets (on a constant) leaves it searched.
  const auto sgd = listed("optimizer", Distribution::kConst, {std::string("sgd")});
  auto always = range("momentum", Distribution::kUniform, 0, 1);
  always.when = {{"optimizer", {std::string("sgd")}}};
  const SearchSpace constant({sgd, always});
  ASSERT_EQ(CmaEsSearcher::dimensions(constant).size(), 1u);
  CmaEsSearcher searched(constant, 1, Goal::kMinimize, 4);
  EXPECT_TRUE(searched.suggest(0).count("momentum"));
  EXPECT_EQ(CmaEsSearcher::default_population(SearchSpace({act, momentum, range("lr", Distribution::kLogUniform, 1e-4, 1)})), 4u);
}

// ASHA holds each wave until the one before has its first-rung results, so the
// generations are drawn from whole generations.
TEST(CmaEsSearcher, AshaStartsAGenerationOnceTheOneBeforeHasReported) {
  AshaScheduler asha(12, 9, 1, 3, Goal::kMinimize, 0, Waves::sized(0, 4));
  auto jobs = asha.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].trials.size(), 4u);
  for (const auto& t : jobs[0].trials) EXPECT_LT(t.trial_id, 4);
  EXPECT_TRUE(asha.next_jobs(std::numeric_limits<std::size_t>::max(), 0).empty());
  for (std::int64_t id = 0; id < 4; ++id) asha.report({id, 1.0, static_cast<double>(id)});
  bool next = false;
  for (const auto& job : asha.next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
    if (job.rung != 0) continue;
    next = true;
    ASSERT_EQ(job.trials.size(), 4u);
    EXPECT_EQ(job.trials.front().trial_id, 4);
  }
  EXPECT_TRUE(next);
}

}  // namespace
}  // namespace hfta::search
