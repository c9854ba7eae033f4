// Several objectives: dominance, non-dominated fronts, NSGA-II's order, and the
// schedulers and TPE ranking by them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "hfta/search/asha_scheduler.h"
#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/pareto.h"
#include "hfta/search/rng.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

const std::vector<Goal> kMaxMin{Goal::kMaximize, Goal::kMinimize};

TEST(Pareto, DominatesNeedsNoWorseEverywhereAndBetterSomewhere) {
  EXPECT_TRUE(dominates({0.9, 10}, {0.8, 20}, kMaxMin));
  EXPECT_TRUE(dominates({0.9, 10}, {0.9, 20}, kMaxMin));
  EXPECT_FALSE(dominates({0.9, 10}, {0.9, 10}, kMaxMin));  // equal: neither
  EXPECT_FALSE(dominates({0.9, 30}, {0.8, 20}, kMaxMin));  // a trade-off: neither
  EXPECT_FALSE(dominates({0.8, 20}, {0.9, 30}, kMaxMin));
  EXPECT_TRUE(dominates({1, 1, 1}, {1, 2, 1}, {Goal::kMinimize, Goal::kMinimize, Goal::kMinimize}));
}

// Against the definition, on random points with many ties (values on a small
// grid) and with few (on a fine one), for two objectives (a sweep) and three
// (Deb's sort): a point's front is one more than the largest front of the
// points that dominate it (0 when none does).
TEST(Pareto, FrontsMatchTheDefinition) {
  for (const auto& [objectives, n, grid] : {std::tuple<std::size_t, std::size_t, std::uint64_t>{2, 60, 6}, {2, 400, 1000},
                                            {3, 60, 6}, {3, 200, 1000}}) {
    std::vector<Goal> goals{Goal::kMaximize, Goal::kMinimize, Goal::kMinimize};
    goals.resize(objectives);
    Rng rng(7, objectives, n);
    std::vector<std::vector<double>> points(n);
    for (auto& p : points) {
      for (std::size_t m = 0; m < objectives; ++m) p.push_back(static_cast<double>(rng.below(grid)));
    }
    SCOPED_TRACE(std::to_string(objectives) + " objectives, " + std::to_string(n) + " points");
    const auto front = pareto_fronts(points, goals);
    for (std::size_t i = 0; i < points.size(); ++i) {
      std::size_t expected = 0;
      bool dominated = false;
      for (std::size_t j = 0; j < points.size(); ++j) {
        if (dominates(points[j], points[i], goals)) dominated = true, expected = std::max(expected, front[j] + 1);
      }
      EXPECT_EQ(front[i], dominated ? expected : 0) << "point " << i;
    }
    EXPECT_GE(*std::max_element(front.begin(), front.end()), 3u);  // (several fronts, not one)
  }
}

TEST(Pareto, OrderTakesFrontsInTurnAndTheEndsOfAFrontFirst) {
  // Front 0: (0.9, 40), (0.85, 22), (0.8, 20), (0.7, 5); front 1: (0.8, 40).
  const std::vector<std::vector<double>> points{{0.8, 20}, {0.8, 40}, {0.9, 40}, {0.85, 22}, {0.7, 5}};
  const auto order = pareto_order(points, kMaxMin);
  ASSERT_EQ(order.size(), 5u);
  // The two ends (infinitely far), by index; then (0.8, 20), whose neighbours
  // are farther apart than (0.85, 22)'s; then front 1.
  EXPECT_EQ(order, (std::vector<std::size_t>{2, 4, 0, 3, 1}));
}

TEST(Pareto, BestCompletedRanksByObjectivesAndSkipsWhatCannotBeCompared) {
  std::map<std::int64_t, TrialResult> results;
  results[0] = {0, 1, 0.8, TrialStatus::kCompleted, {0.8, 20}};
  results[1] = {1, 1, 0.8, TrialStatus::kCompleted, {0.8, 40}};  // dominated by 0
  results[2] = {2, 1, 0.7, TrialStatus::kCompleted, {0.7, 5}};
  results[3] = {3, 1, 0.95, TrialStatus::kStopped, {0.95, 1}};  // stopped: never promoted
  results[4] = {4, 1, NAN, TrialStatus::kCompleted, {NAN, 1}};    // no value
  const Goals goals(kMaxMin);
  EXPECT_EQ(best_completed(results, 2, goals), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(best_completed(results, 9, goals), (std::vector<std::int64_t>{0, 2, 1}));
  // One objective: the metric alone, as always.
  EXPECT_EQ(best_completed(results, 1, Goal::kMinimize), (std::vector<std::int64_t>{2}));
}

// Accuracy rises with the id, size too: every trial is a trade-off but those
// the scheduler promotes are the non-dominated, whatever the report order.
double accuracy_of(std::int64_t id) { return id % 3 == 0 ? 0.5 : 0.5 + 0.01 * static_cast<double>(id); }
double size_of(std::int64_t id) { return static_cast<double>(id); }

TEST(Pareto, HyperbandPromotesTheFrontOfEachRung) {
  auto hb = make_hyperband(9, 1, 3, Goals(kMaxMin));
  int checked = 0;
  for (int guard = 0; !hb.finished() && guard < 100; ++guard) {
    for (const auto& job : hb.next_jobs(1000, 0)) {
      for (auto it = job.trials.rbegin(); it != job.trials.rend(); ++it) {
        const std::int64_t id = it->trial_id;
        hb.report({id, job.budget, accuracy_of(id), TrialStatus::kCompleted, {accuracy_of(id), size_of(id)}});
      }
      if (job.rung == 1 && job.bracket == 0) {
        // Bracket 0's nine trials 0..8: the third that is best by NSGA-II:
        // trial 0 (smallest) and 8 (most accurate) end the front, then one by crowding.
        std::vector<std::int64_t> ids;
        for (const auto& t : job.trials) ids.push_back(t.trial_id);
        ASSERT_EQ(ids.size(), 3u);
        ++checked;
        EXPECT_NE(std::find(ids.begin(), ids.end(), 0), ids.end());
        EXPECT_NE(std::find(ids.begin(), ids.end(), 8), ids.end());
        for (std::int64_t id : ids) EXPECT_TRUE(id == 0 || id % 3 != 0) << id;  // 3 and 6 are dominated by 0
      }
    }
  }
  EXPECT_TRUE(hb.finished());
  EXPECT_EQ(checked, 1);
}

TEST(Pareto, AshaPromotesByTheObjectives) {
  AshaScheduler asha(9, 9, 1, 3, Goals(kMaxMin), 0.0);
  std::vector<std::int64_t> promoted;
  for (int guard = 0; !asha.finished() && guard < 1000; ++guard) {
    for (const auto& job : asha.next_jobs(1, 0)) {
      for (const auto& t : job.trials) {
        if (job.rung == 1) promoted.push_back(t.trial_id);
        asha.report({t.trial_id, job.budget, accuracy_of(t.trial_id), TrialStatus::kCompleted,
                     {accuracy_of(t.trial_id), size_of(t.trial_id)}});
      }
    }
  }
  ASSERT_FALSE(promoted.empty());
  // Trial 3 and 6 are dominated by trial 0, which reports first: never promoted.
  for (std::int64_t id : promoted) EXPECT_TRUE(id % 3 != 0 || id == 0) << id;
}

// Two objectives, |x - 0.2| and |x - 0.3|, both minimized: the Pareto set is
// x in [0.2, 0.3]. TPE's proposals land near it far more often than random.
TEST(Pareto, TpeProposesNearTheParetoSet) {
  ParameterSpec x;
  x.name = "x", x.distribution = Distribution::kUniform, x.min = 0, x.max = 1;
  SearchSpace space({x});
  const auto values = [](const Config& c) {
    const double v = std::get<double>(c.at("x"));
    return std::vector<double>{std::abs(v - 0.2), std::abs(v - 0.3)};
  };
  TpeSearcher tpe(space, 3, Goals({Goal::kMinimize, Goal::kMinimize}));
  RandomSearcher random(space, 3);
  std::int64_t t = 0;
  const auto result = [&](std::int64_t id, const Config& c) {
    TrialResult r{id, 1.0, values(c)[0], TrialStatus::kCompleted, values(c)};
    return r;
  };
  for (; t < 30; ++t) tpe.observe(t, tpe.suggest(t), result(t, tpe.suggest(t)));
  int modelled = 0, near = 0, random_near = 0;
  for (int k = 0; k < 90; ++k, ++t) {
    const Config c = tpe.suggest(t);
    const double r = std::get<double>(random.suggest(t).at("x"));
    random_near += r > 0.1 && r < 0.4;
    ++modelled;
    const double v = std::get<double>(c.at("x"));
    near += v > 0.1 && v < 0.4;
    tpe.observe(t, c, result(t, c));
  }
  EXPECT_GT(static_cast<double>(near) / modelled, 0.8) << near << " of " << modelled;
  EXPECT_LT(static_cast<double>(random_near) / 90, 0.5);
}

}  // namespace
}  // namespace hfta::search
