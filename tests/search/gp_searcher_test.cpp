#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "hfta/search/searcher.h"
#include "../support/parameter_specs.h"
#include "../support/wave_runs.h"

namespace hfta::search {
namespace {

using test::listed;
using test::number;
using test::range;
using test::run_in_waves;

// In waves, the later ones are proposed from the earlier results: they must
// land much nearer the optimum than random search's same trials, yet differ
// from each other (each trial its own posterior draw).
TEST(GpSearcher, ProposesEachWaveNearTheOptimumByThompsonSampling) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1), range("lr", Distribution::kLogUniform, 1e-4, 1),
                     listed("act", Distribution::kChoice, {std::string("relu"), std::string("tanh")})});
  auto loss = [](const Config& c) {
    return std::pow(number(c, "x") - 0.3, 2) + 0.1 * std::pow(std::log10(number(c, "lr")) + 2, 2) +
           (c.at("act") == ParamValue(std::string("relu")) ? 0.0 : 0.3);
  };
  GpSearcher gp(space, 7, Goal::kMinimize);
  ASSERT_EQ(GpSearcher::modelled(space).size(), 3u);
  std::map<std::int64_t, Config> configs;
  const auto means = run_in_waves(gp, 40, 4, loss, configs);
  ASSERT_EQ(means.size(), 4u);
  RandomSearcher random(space, 7);
  for (std::int64_t id = 0; id < 10; ++id) EXPECT_EQ(configs[id], random.suggest(id));  // before any result
  double proposed = 0, drawn = 0;
  int relu = 0;
  std::set<double> xs;
  for (std::int64_t id = 30; id < 40; ++id) {
    proposed += loss(configs[id]) / 10, drawn += loss(random.suggest(id)) / 10;
    relu += configs[id].at("act") == ParamValue(std::string("relu"));
    xs.insert(number(configs[id], "x"));
  }
  EXPECT_LT(proposed, 0.25 * drawn) << proposed << " vs " << drawn;
  EXPECT_GE(relu, 8);
  EXPECT_EQ(xs.size(), 10u);  // ten trials, ten proposals
  EXPECT_LT(means.back(), 0.3 * means.front());
}

// Diverged results count as the worst: past a cliff where everything
// diverges (just beyond the optimum, as a learning rate's) few proposals
// land; the order results arrive in changes nothing.
TEST(GpSearcher, CountsDivergedResultsAsTheWorstWhateverTheirOrder) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1)});
  for (Goal goal : {Goal::kMinimize, Goal::kMaximize}) {
    const double sign = goal == Goal::kMinimize ? 1 : -1;
    auto metric = [&](const Config& c) {
      const double x = number(c, "x");
      return x > 0.62 ? std::numeric_limits<double>::quiet_NaN() : sign * std::abs(x - 0.62);
    };
    GpSearcher forward(space, 3, goal), backward(space, 3, goal);
    std::vector<Config> first;
    for (std::int64_t id = 0; id < 30; ++id) first.push_back(space.sample(3, id));
    for (std::int64_t id = 0; id < 30; ++id) forward.observe(id, first[id], TrialResult{id, 1.0, metric(first[id])});
    for (std::int64_t id = 29; id >= 0; --id) backward.observe(id, first[id], TrialResult{id, 1.0, metric(first[id])});
    int over = 0, near = 0;
    for (std::int64_t id = 100; id < 160; ++id) {
      const Config c = forward.suggest(id);
      EXPECT_EQ(c, backward.suggest(id));
      over += number(c, "x") > 0.62;
      near += std::abs(number(c, "x") - 0.62) < 0.1;
    }
    EXPECT_LE(over, 3) << "of 60 proposals past the cliff (random search: about 23)";
    EXPECT_GE(near, 50);
  }
}

// Under a stopping rule, a trial stopped below the budget the model sees
// counts as the worst there: the survivors' trend (better towards small x)
// must not lead the proposals into the region the rule stopped.
TEST(GpSearcher, UnderAStoppingRuleCountsStoppedTrialsAsTheWorstWhereTheyStopped) {
  SearchSpace space({range("x", Distribution::kUniform, 0, 1)});
  auto below = [&](bool lockstep) {
    GpSearcher gp(space, 2, Goal::kMaximize, lockstep);
    for (std::int64_t id = 0; id < 16; ++id) {
      const Config c = space.sample(2, id);
      const double x = number(c, "x");
      gp.observe(id, c, TrialResult{id, 1.0, x < 0.3 ? 0.1 : 0.5});
      if (x >= 0.3) gp.observe(id, c, TrialResult{id, 3.0, 1 - x});  // survivors: the smaller, the better
    }
    int n = 0;
    for (std::int64_t id = 16; id < 36; ++id) n += number(gp.suggest(id), "x") < 0.25;
    return n;
  };
  const int with_rule = below(true), without = below(false);
  EXPECT_LE(with_rule, 2) << "of 20 proposals where the rule stopped every trial";
  EXPECT_GT(without, with_rule + 5);
}

TEST(GpSearcher, ModelsWhatEveryTrialHas) {
  auto opt = listed("optimizer", Distribution::kChoice, {std::string("sgd"), std::string("adam")});
  auto momentum = range("momentum", Distribution::kUniform, 0, 1);
  momentum.when = {{"optimizer", {std::string("sgd")}}};
  const auto bs = listed("batch", Distribution::kGrid, {std::int64_t{32}, std::int64_t{64}});
  const auto constant = listed("depth", Distribution::kConst, {std::int64_t{2}});
  const SearchSpace space({opt, momentum, bs, constant, range("lr", Distribution::kLogUniform, 1e-4, 1)});
  std::vector<std::string> names;
  for (const auto* p : GpSearcher::modelled(space)) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"lr", "optimizer"}));
  // A conditional parameter is random search's draw, and the grid keeps its cycle.
  GpSearcher gp(space, 1, Goal::kMaximize);
  for (std::int64_t id = 0; id < 12; ++id) {
    const Config c = gp.suggest(id);
    gp.observe(id, c, TrialResult{id, 1.0, -std::abs(std::log10(number(c, "lr")) + 2)});
  }
  for (std::int64_t id = 12; id < 20; ++id) {
    const Config c = gp.suggest(id);
    EXPECT_EQ(c.at("batch"), space.cycled(space.parameters()[0].name == "batch" ? space.parameters()[0] : bs, id));
    EXPECT_EQ(c.count("momentum") == 1, c.at("optimizer") == ParamValue(std::string("sgd")));
  }
}

}  // namespace
}  // namespace hfta::search
