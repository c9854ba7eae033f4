#include <gtest/gtest.h>

#include <cmath>

#include "hfta/search/searcher.h"

namespace hfta::search {
namespace {

ParameterSpec uniform(const std::string& name, double min, double max) {
  ParameterSpec p;
  p.name = name;
  p.distribution = Distribution::kUniform;
  p.min = min;
  p.max = max;
  return p;
}

TEST(GridSearcher, RepeatsEachPoint) {
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kGrid;
  lr.values = {0.1, 0.01, 0.001};
  GridSearcher grid(SearchSpace({lr}), 2);
  EXPECT_EQ(grid.trial_count(), 6);
  EXPECT_EQ(grid.suggest(0), grid.suggest(3));
  EXPECT_NE(grid.suggest(0), grid.suggest(1));
  EXPECT_THROW(grid.suggest(6), std::out_of_range);
  EXPECT_NE(trial_seed(1, 0), trial_seed(1, 3));  // repeats differ by seed
}

TEST(RandomSearcher, IsTheSearchSpaceSample) {
  SearchSpace space({uniform("x", 0, 1)});
  RandomSearcher r(space, 9);
  EXPECT_EQ(r.suggest(4), space.sample(9, 4));
}

// Minimizes (x - 0.3)^2 + (y - 0.7)^2 on [0,1]^2: after 30 random results, TPE's
// proposals must land much closer to the optimum than random ones.
TEST(TpeSearcher, ProposesNearTheOptimumOnceItHasResults) {
  SearchSpace space({uniform("x", 0, 1), uniform("y", 0, 1)});
  auto loss = [](const Config& c) {
    const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
    return (x - 0.3) * (x - 0.3) + (y - 0.7) * (y - 0.7);
  };
  TpeSearcher tpe(space, 5, Goal::kMinimize);
  RandomSearcher random(space, 5);
  std::int64_t t = 0;
  for (; t < 30; ++t) {
    const Config c = tpe.suggest(t);
    // Until the model has enough results, TPE proposes what random search would.
    if (t < static_cast<std::int64_t>(tpe.min_points())) EXPECT_EQ(c, random.suggest(t));
    tpe.observe(t, c, 1.0, loss(c));
  }
  double tpe_loss = 0, random_loss = 0;
  for (int k = 0; k < 40; ++k, ++t) {
    const Config c = tpe.suggest(t);
    tpe_loss += loss(c);
    random_loss += loss(random.suggest(t));
    tpe.observe(t, c, 1.0, loss(c));
  }
  EXPECT_LT(tpe_loss, 0.4 * random_loss) << tpe_loss / 40 << " vs " << random_loss / 40;
}

TEST(TpeSearcher, LearnsCategoricalAndIntegerParameters) {
  ParameterSpec opt;
  opt.name = "opt";
  opt.distribution = Distribution::kChoice;
  opt.values = {std::string("a"), std::string("b"), std::string("c")};
  ParameterSpec n;
  n.name = "n";
  n.distribution = Distribution::kIntLogUniform;
  n.min = 1;
  n.max = 1000;
  SearchSpace space({opt, n});
  auto loss = [](const Config& c) {
    const double penalty = std::get<std::string>(c.at("opt")) == "b" ? 0 : 1;
    return penalty + std::abs(std::log10(static_cast<double>(std::get<std::int64_t>(c.at("n")))) - 2);
  };
  TpeSearcher tpe(space, 3, Goal::kMinimize);
  std::int64_t t = 0;
  for (; t < 40; ++t) {
    const Config c = tpe.suggest(t);
    tpe.observe(t, c, 1.0, loss(c));
  }
  int b = 0;
  for (int k = 0; k < 30; ++k, ++t) {
    const Config c = tpe.suggest(t);
    const auto v = std::get<std::int64_t>(c.at("n"));
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 1000);
    b += std::get<std::string>(c.at("opt")) == "b";
    tpe.observe(t, c, 1.0, loss(c));
  }
  EXPECT_GE(b, 20);  // random would pick "b" about 10 times in 30
}

TEST(TpeSearcher, ModelsTheLargestBudgetWithEnoughResults) {
  SearchSpace space({uniform("x", 0, 1)});
  TpeSearcher tpe(space, 1, Goal::kMaximize);
  // Many results at budget 1 say "small x is good"; only two at budget 9 (too few).
  for (std::int64_t t = 0; t < 20; ++t) {
    const Config c = space.sample(1, t);
    tpe.observe(t, c, 1.0, -std::get<double>(c.at("x")));
  }
  tpe.observe(100, {{"x", 0.9}}, 9.0, 1.0);
  tpe.observe(101, {{"x", 0.1}}, 9.0, 0.0);
  double mean = 0;
  for (std::int64_t t = 200; t < 220; ++t) mean += std::get<double>(tpe.suggest(t).at("x")) / 20;
  EXPECT_LT(mean, 0.35);  // follows budget 1, where the model has enough points
}

}  // namespace
}  // namespace hfta::search
