// Constraints (Optuna's constraints_func): results that meet them rank first,
// in promotions and in TPE's good group; the others by the least violation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hfta/search/scheduler.h"
#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

TEST(Constraints, ResultsThatMeetThemArePromotedFirstThenTheLeastBreaking) {
  std::map<std::int64_t, TrialResult> results;
  results[0] = {0, 1, 0.99, TrialStatus::kCompleted, {}, 0.5};
  results[1] = {1, 1, 0.80, TrialStatus::kCompleted, {}, 0.0};
  results[2] = {2, 1, 0.70, TrialStatus::kCompleted, {}, 0.0};
  results[3] = {3, 1, 0.95, TrialStatus::kCompleted, {}, 0.1};
  results[4] = {4, 1, 0.97, TrialStatus::kStopped, {}, 0.0};  // stopped: never promoted
  EXPECT_EQ(best_completed(results, 1, Goal::kMaximize), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(best_completed(results, 3, Goal::kMaximize), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(best_completed(results, 9, Goal::kMaximize), (std::vector<std::int64_t>{1, 2, 3, 0}));
  // Several objectives alike: the front of those that meet them first.
  for (auto& [id, r] : results) r.objectives = {r.metric, static_cast<double>(10 - id)};
  EXPECT_EQ(best_completed(results, 2, Goals({Goal::kMaximize, Goal::kMinimize})), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(best_completed(results, 4, Goals({Goal::kMaximize, Goal::kMinimize})), (std::vector<std::int64_t>{1, 2, 3, 0}));
}

// Minimizes |x - 0.9| subject to x <= 0.5: TPE's proposals gather at the
// feasible best, 0.5, not at the unconstrained optimum. (They straddle the
// bound, as TPE's densities are smooth: 40 of 90 in [0.4, 0.5), 29 in
// [0.5, 0.6), 10 beyond; random search 39.)
TEST(Constraints, TpeProposesWhereResultsMeetThem) {
  ParameterSpec x;
  x.name = "x", x.distribution = Distribution::kUniform, x.min = 0, x.max = 1;
  SearchSpace space({x});
  const auto result = [](std::int64_t id, const Config& c) {
    const double v = std::get<double>(c.at("x"));
    TrialResult r{id, 1.0, std::abs(v - 0.9), TrialStatus::kCompleted};
    r.violation = std::max(0.0, v - 0.5);
    return r;
  };
  TpeSearcher tpe(space, 4, Goal::kMinimize);
  RandomSearcher random(space, 4);
  std::int64_t t = 0;
  for (; t < 30; ++t) tpe.observe(t, tpe.suggest(t), result(t, tpe.suggest(t)));
  int near = 0, past = 0, random_past = 0;
  for (int k = 0; k < 90; ++k, ++t) {
    const Config c = tpe.suggest(t);
    const double v = std::get<double>(c.at("x"));
    near += v >= 0.4 && v < 0.6;
    past += v >= 0.6;
    random_past += std::get<double>(random.suggest(t).at("x")) >= 0.6;
    tpe.observe(t, c, result(t, c));
  }
  EXPECT_GE(near, 60) << near << " of 90 within 0.1 of the feasible best";
  EXPECT_LE(past, 15) << past << " of 90 well past the bound (random search: " << random_past << ")";
}

}  // namespace
}  // namespace hfta::search
