#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/searcher.h"
#include "../support/parameter_specs.h"

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

TEST(PointsFirstSearcher, GivesThePointsFirstThenTheInnerSearchersTrialsAndPassesResultsOn) {
  SearchSpace space({uniform("x", 0, 1), uniform("y", 0, 1)});
  auto tpe = std::make_unique<TpeSearcher>(space, 2, Goal::kMinimize);
  TpeSearcher* inner = tpe.get();
  PointsFirstSearcher searcher(std::move(tpe), {{{"x", 0.25}}, {{"x", 0.5}, {"y", 0.75}}}, space, 2);
  EXPECT_EQ(searcher.suggest(0), (Config{{"x", 0.25}, {"y", space.sample(2, 0).at("y")}}));
  EXPECT_EQ(searcher.suggest(1), (Config{{"x", 0.5}, {"y", 0.75}}));
  EXPECT_EQ(searcher.suggest(2), space.sample(2, 2));  // TPE without results: random search's
  // Results reach the inner searcher: once it has enough, its trials follow them.
  for (std::int64_t t = 0; t < 30; ++t) {
    const Config c = searcher.suggest(t);
    searcher.observe(t, c, 1.0, std::abs(std::get<double>(c.at("x")) - 0.9));
  }
  TpeSearcher alone(space, 2, Goal::kMinimize);
  for (std::int64_t t = 0; t < 30; ++t) {
    const Config c = t == 0 ? Config{{"x", 0.25}, {"y", space.sample(2, 0).at("y")}}
                     : t == 1 ? Config{{"x", 0.5}, {"y", 0.75}}
                              : alone.suggest(t);
    alone.observe(t, c, 1.0, std::abs(std::get<double>(c.at("x")) - 0.9));
  }
  for (std::int64_t t = 30; t < 40; ++t) {
    EXPECT_EQ(searcher.suggest(t), alone.suggest(t));
    EXPECT_EQ(inner->suggest(t), alone.suggest(t));
  }
  // So do the trials an earlier run proposed (TPE's liars).
  searcher.proposed(40, {{"x", 0.9}, {"y", 0.1}});
  alone.proposed(40, {{"x", 0.9}, {"y", 0.1}});
  EXPECT_EQ(searcher.suggest(41), alone.suggest(41));
}

// Minimizes (x - 0.3)^2 + (y - 0.7)^2 on [0,1]^2, one trial at a time: once
// it has min_points() results, every proposal is TPE's own, and the next 60
// land much closer to the optimum than random ones.
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
  double model_loss = 0, random_loss = 0;
  int modelled = 0;
  for (int k = 0; k < 60; ++k, ++t) {
    const Config c = tpe.suggest(t);
    random_loss += loss(random.suggest(t)) / 60;
    if (c != random.suggest(t)) model_loss += loss(c), ++modelled;
    tpe.observe(t, c, 1.0, loss(c));
  }
  EXPECT_EQ(modelled, 60);
  EXPECT_LT(model_loss / modelled, 0.35 * random_loss) << model_loss / modelled << " vs " << random_loss;
}

// Two good regions, (0.1, 0.9) and (0.9, 0.1), as a large learning rate goes
// with little momentum and a small one with much. Multivariate TPE draws a
// proposal from one good result's kernel in both parameters at once, so it
// stays in a region and never pairs one region's x with the other's y (the
// corners (0.1, 0.1) and (0.9, 0.9): here, divergence). (One parameter at a
// time, each parameter's density ratio picks one of its two modes, so it may
// stay in a region too, or not: it cannot tell.)
TEST(TpeSearcher, MultivariateKeepsWhatMadeAResultGoodTogether) {
  SearchSpace space({uniform("x", 0, 1), uniform("y", 0, 1)});
  auto loss = [](const Config& c) {
    const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
    return std::min((x - 0.1) * (x - 0.1) + (y - 0.9) * (y - 0.9), (x - 0.9) * (x - 0.9) + (y - 0.1) * (y - 0.1));
  };
  TpeSearcher tpe(space, 8, Goal::kMinimize, true);
  for (std::int64_t t = 0; t < 100; ++t) tpe.observe(t, space.sample(8, t), 1.0, loss(space.sample(8, t)));
  int mixed = 0, near = 0, regions[2] = {0, 0};
  for (std::int64_t t = 100; t < 200; ++t) {
    const Config c = tpe.propose(t);
    const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
    mixed += (x < 0.35 && y < 0.35) || (x > 0.65 && y > 0.65);
    near += loss(c) < 0.05;
    ++regions[x < 0.5];
  }
  EXPECT_LE(mixed, 5) << mixed << " of 100 in a corner neither region holds";
  EXPECT_GE(near, 50) << near << " of 100";
  EXPECT_GE(std::min(regions[0], regions[1]), 10) << "both regions proposed";
}

// Results get better towards 0.62, and every trial above it diverged (NaN),
// as a learning rate's best is often next to where it diverges. A diverged
// result counts as the worst (as in BOHB), so it joins the bad density and
// TPE's proposals stay below the cliff (2 of 70 past it; random search's:
// 38%). Ignored, the bad results all lay below 0.62, so the density ratio was
// best past it: all proposals diverged. With fewer than two finite results,
// a proposal is random search's.
TEST(TpeSearcher, CountsDivergedResultsAsTheWorst) {
  SearchSpace space({uniform("x", 0, 1)});
  for (Goal goal : {Goal::kMinimize, Goal::kMaximize}) {
    TpeSearcher tpe(space, 3, goal);
    const double sign = goal == Goal::kMinimize ? 1 : -1;
    for (std::int64_t t = 0; t < 30; ++t) {
      const double x = std::get<double>(space.sample(3, t).at("x"));
      const double loss = x > 0.62 ? std::numeric_limits<double>::quiet_NaN() : std::abs(x - 0.62);
      tpe.observe(t, {{"x", x}}, 1.0, sign * loss);
    }
    int over = 0;
    for (std::int64_t t = 100; t < 170; ++t) over += std::get<double>(tpe.propose(t).at("x")) > 0.62;
    EXPECT_LE(over, 70 / 20) << over << " of 70 proposals past the cliff";
  }
  TpeSearcher diverged(space, 4, Goal::kMinimize);
  for (std::int64_t t = 0; t < 10; ++t) {
    diverged.observe(t, space.sample(4, t), 1.0, t == 0 ? 0.5 : std::numeric_limits<double>::infinity());
  }
  for (std::int64_t t = 10; t < 20; ++t) EXPECT_EQ(diverged.suggest(t), space.sample(4, t));
}

// A range of one value (min == max) has nothing to model: it is proposed as
// it is, and the other parameters are still modelled.
TEST(TpeSearcher, ARangeOfOneValueIsKept) {
  SearchSpace space({uniform("x", 0, 1), uniform("fixed", 0.5, 0.5)});
  TpeSearcher tpe(space, 6, Goal::kMinimize);
  for (std::int64_t t = 0; t < 20; ++t) {
    const Config c = space.sample(6, t);
    tpe.observe(t, c, 1.0, std::abs(std::get<double>(c.at("x")) - 0.2));
  }
  double mean_distance = 0;
  for (std::int64_t t = 100; t < 130; ++t) {
    const Config c = tpe.propose(t);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(std::get<double>(c.at("fixed")), 0.5);
    mean_distance += std::abs(std::get<double>(c.at("x")) - 0.2) / 30;
  }
  EXPECT_LT(mean_distance, 0.15);  // random search's: 0.34
}

// Successive halving with TPE, as the tuner runs it: each wave's trials are
// proposed when it is handed out, from every result reported before. Started
// all at once, TPE can only propose what random search would; in four waves
// the last must be much closer to the optimum than the first.
TEST(TpeSearcher, LearnsFromSuccessiveHalvingsEarlierWaves) {
  SearchSpace space({uniform("x", 0, 1), uniform("y", 0, 1)});
  auto loss = [](const Config& c) {
    const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
    return (x - 0.3) * (x - 0.3) + (y - 0.7) * (y - 0.7);
  };
  // Mean loss of each wave's first-rung proposals.
  auto run = [&](std::int64_t waves) {
    TpeSearcher tpe(space, 11, Goal::kMinimize);
    BracketScheduler sha({successive_halving_bracket(40, 9, 1, 3)}, Goal::kMinimize, 0, waves);
    std::map<std::int64_t, Config> configs;
    std::vector<double> mean_loss;
    while (!sha.finished()) {
      for (const auto& job : sha.next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
        double sum = 0;
        for (const auto& t : job.trials) {
          if (!configs.count(t.trial_id)) configs[t.trial_id] = tpe.suggest(t.trial_id);
          sum += loss(configs[t.trial_id]);
        }
        if (job.rung == 0) mean_loss.push_back(sum / static_cast<double>(job.trials.size()));
        for (const auto& t : job.trials) {
          const double metric = loss(configs[t.trial_id]);
          tpe.observe(t.trial_id, configs[t.trial_id], job.budget, metric);
          sha.report({t.trial_id, job.budget, metric});
        }
      }
    }
    return std::make_pair(mean_loss, configs);
  };
  const auto [at_once, at_once_configs] = run(1);
  ASSERT_EQ(at_once.size(), 1u);
  RandomSearcher random(space, 11);
  for (const auto& [id, c] : at_once_configs) EXPECT_EQ(c, random.suggest(id));
  const auto [waves, configs] = run(4);
  ASSERT_EQ(waves.size(), 4u);
  // The later waves' proposals (all TPE's own) against random search's for
  // the same trials.
  double model_loss = 0, random_loss = 0;
  int modelled = 0;
  for (std::int64_t id = 10; id < 40; ++id) {
    random_loss += loss(random.suggest(id)) / 30;
    if (configs.at(id) != random.suggest(id)) model_loss += loss(configs.at(id)), ++modelled;
  }
  EXPECT_EQ(modelled, 30);
  EXPECT_LT(model_loss / modelled, 0.6 * random_loss) << model_loss / modelled << " vs " << random_loss;
  EXPECT_LT(waves.back(), 0.3 * waves.front()) << waves[1] << ", " << waves[2] << ", " << waves.back() << " vs " << waves.front();
}

// What Hyperband gives TPE: 27 random learning rates at budget 10, the best 9
// of them at 30, the best 3 at 90, all near the optimum (lr 0.1). Ranked by
// their furthest results, the 3 at 90 are the good tenth of the 27, and TPE
// must propose near them, not at the ends of the range (random search: 40%
// there). Modelling budget 90 alone (BOHB's largest budget with enough
// results), 1 good result against 2 bad, the prior's share of each density
// made the ends win.
TEST(TpeSearcher, ProposesNearHyperbandsSurvivorsNotAtTheEnds) {
  ParameterSpec lr;
  lr.name = "lr";
  lr.distribution = Distribution::kLogUniform;
  lr.min = 0.001;
  lr.max = 0.5;
  SearchSpace space({lr});
  auto distance = [](const Config& c) { return std::abs(std::log10(std::get<double>(c.at("lr"))) + 1); };
  TpeSearcher tpe(space, 2, Goal::kMaximize);
  std::vector<std::pair<double, std::int64_t>> survivors;  // (accuracy, trial)
  for (std::int64_t t = 0; t < 27; ++t) survivors.push_back({0.85 - 0.1 * std::pow(distance(space.sample(2, t)), 2), t});
  for (double budget : {10.0, 30.0, 90.0}) {
    for (const auto& [accuracy, t] : survivors) tpe.observe(t, space.sample(2, t), budget, accuracy - 1 / budget);
    std::sort(survivors.rbegin(), survivors.rend());
    survivors.resize(survivors.size() / 3);
  }
  RandomSearcher random(space, 2);
  double model_distance = 0, random_distance = 0;
  int modelled = 0, at_the_ends = 0;
  for (std::int64_t t = 100; t < 160; ++t) {
    const Config c = tpe.propose(t);
    random_distance += distance(random.suggest(t)) / 60;
    if (c == random.suggest(t)) continue;
    ++modelled;
    model_distance += distance(c);
    const double x = std::log10(std::get<double>(c.at("lr")));
    at_the_ends += x < -2.5 || x > -0.5;  // the outer fifth of the range at each end
  }
  EXPECT_GE(modelled, 55);
  EXPECT_LE(at_the_ends, 6);
  EXPECT_LT(model_distance / modelled, 0.5 * random_distance) << model_distance / modelled << " vs " << random_distance;
}

// A conditional parameter few results have: its one good value's kernel is
// as wide as the gaps to its neighbours (the prior's centre, the range's
// end), and the prior holds half the density, so proposals do not all pile
// onto that one value.
TEST(TpeSearcher, AConditionalParameterFewResultsHaveIsDrawnAtRandom) {
  ParameterSpec opt;
  opt.name = "opt";
  opt.distribution = Distribution::kChoice;
  opt.values = {std::string("a"), std::string("b")};
  ParameterSpec x = uniform("x", 0, 1);
  x.when = {{"opt", {std::string("b")}}};
  SearchSpace space({opt, x});
  TpeSearcher tpe(space, 4, Goal::kMaximize);
  // Ten results, two with opt b, one of them the best of all.
  for (std::int64_t t = 0; t < 8; ++t) tpe.observe(t, {{"opt", std::string("a")}}, 1.0, 0.1 * static_cast<double>(t));
  tpe.observe(8, {{"opt", std::string("b")}, {"x", 0.5}}, 1.0, 2.0);
  tpe.observe(9, {{"opt", std::string("b")}, {"x", 0.9}}, 1.0, 0.0);
  std::vector<double> xs;
  for (std::int64_t t = 100; t < 300; ++t) {
    const Config c = tpe.propose(t);
    if (c.count("x")) xs.push_back(std::get<double>(c.at("x")));
  }
  ASSERT_GE(xs.size(), 20u);
  const auto piled = std::count_if(xs.begin(), xs.end(), [](double v) { return std::abs(v - 0.5) < 0.01; });
  EXPECT_LT(piled, static_cast<std::ptrdiff_t>(xs.size() / 4)) << piled << " of " << xs.size() << " at 0.5";
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
    const Config c = tpe.propose(t);
    tpe.observe(t, c, 1.0, loss(c));
  }
  int b = 0;
  for (int k = 0; k < 30; ++k, ++t) {
    const Config c = tpe.propose(t);
    const auto v = std::get<std::int64_t>(c.at("n"));
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 1000);
    b += std::get<std::string>(c.at("opt")) == "b";
    tpe.observe(t, c, 1.0, loss(c));
  }
  EXPECT_GE(b, 20);  // random would pick "b" about 10 times in 30
}

TEST(TpeSearcher, KeepsEachTrialsGridValuesAndProposesTheRestAroundThem) {
  // A grid under TPE cycles as under random search (Ray Tune's grid_search with a
  // searcher): TPE learns x, whatever grid value the trial has.
  ParameterSpec g;
  g.name = "g";
  g.distribution = Distribution::kGrid;
  g.values = {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}};
  SearchSpace space({uniform("x", 0, 1), g});
  auto loss = [](const Config& c) { return std::abs(std::get<double>(c.at("x")) - 0.25); };
  TpeSearcher tpe(space, 11, Goal::kMinimize);
  RandomSearcher random(space, 11);
  double model_loss = 0, random_loss = 0;
  int modelled = 0;
  for (std::int64_t t = 0; t < 90; ++t) {
    const Config c = tpe.propose(t);
    EXPECT_EQ(c.at("g"), g.values[static_cast<std::size_t>(t % 3)]) << t;
    if (t >= 30) {
      random_loss += loss(random.suggest(t)) / 60;
      if (c != random.suggest(t)) model_loss += loss(c), ++modelled;
    }
    tpe.observe(t, c, 1.0, loss(c));
  }
  ASSERT_GE(modelled, 30);
  EXPECT_LT(model_loss / modelled, 0.5 * random_loss) << model_loss / modelled << " vs " << random_loss;
}

// lr per optimizer (branches), over one range: optimizer a is best at a large
// rate and b at a small one. TPE proposes each optimizer near its own good
// rates, never with the other's (each branch's bandwidths and draws come from
// the results it gave alone).
TEST(TpeSearcher, ProposesEachBranchNearItsOwnGoodResults) {
  ParameterSpec a = test::range("lr", Distribution::kLogUniform, 0.001, 1), b = a;
  a.when = {{"optimizer", {std::string("a")}}};
  a.branch = 0;
  b.when = {{"optimizer", {std::string("b")}}};
  b.branch = 1;
  const SearchSpace space({test::listed("optimizer", Distribution::kChoice, {std::string("a"), std::string("b")}), b, a});
  auto score = [](const Config& c) {
    const bool is_a = std::get<std::string>(c.at("optimizer")) == "a";
    return -std::abs(std::log10(std::get<double>(c.at("lr")) / (is_a ? 0.5 : 0.002)));
  };
  TpeSearcher tpe(space, 4, Goal::kMaximize);
  for (std::int64_t t = 0; t < 40; ++t) tpe.observe(t, space.sample(4, t), 1.0, score(space.sample(4, t)));
  int modelled = 0, crossed = 0, near = 0;
  for (std::int64_t t = 100; t < 400; ++t) {
    const Config c = tpe.propose(t);
    if (c == space.sample(4, t)) continue;
    ++modelled;
    crossed += score(c) < -1.5;  // another branch's good rate
    near += score(c) > -0.5;
  }
  ASSERT_GE(modelled, 150);
  EXPECT_LE(crossed, 0.05 * modelled) << crossed << " of " << modelled;
  EXPECT_GE(near, 0.8 * modelled) << near << " of " << modelled;
}

// A trial that a rung passed over is worse than those it promoted, whatever
// its metric (Optuna's ranking of pruned trials by their last step): 27
// results at budget 1 say small x is good, but the 3 trials promoted to
// budget 3 (near 0.8, with worse metrics there) are the good tenth. A trial
// that diverged at budget 3 is still the worst.
TEST(TpeSearcher, RanksEachTrialByItsFurthestResult) {
  SearchSpace space({uniform("x", 0, 1)});
  TpeSearcher tpe(space, 1, Goal::kMaximize);
  for (std::int64_t t = 0; t < 27; ++t) {
    const Config c = space.sample(1, t);
    tpe.observe(t, c, 1.0, -std::get<double>(c.at("x")));
  }
  for (const auto& [id, x] : std::vector<std::pair<std::int64_t, double>>{{100, 0.78}, {101, 0.8}, {102, 0.82}, {103, 0.3}}) {
    tpe.observe(id, {{"x", x}}, 1.0, -x);
    tpe.observe(id, {{"x", x}}, 3.0, id == 103 ? std::nan("") : -5.0);
  }
  double mean = 0;
  for (std::int64_t t = 200; t < 230; ++t) mean += std::get<double>(tpe.propose(t).at("x")) / 30;
  EXPECT_GT(mean, 0.65);
}

// A wave's trials, proposed from the same results, count the wave-mates
// proposed before them as bad results (the constant liar), so they spread
// out where repeated proposals from the same model crowd. A wave-mate an
// earlier run proposed, told by proposed(), counts as one suggested: a
// resumed run proposes the rest of the wave as the uninterrupted one did.
TEST(TpeSearcher, AWavesTrialsCountTheWaveMatesBeforeThemAsLiars) {
  SearchSpace space({uniform("x", 0, 1), uniform("y", 0, 1)});
  auto loss = [](const Config& c) {
    return std::pow(std::get<double>(c.at("x")) - 0.3, 2) + std::pow(std::get<double>(c.at("y")) - 0.7, 2);
  };
  auto observed = [&] {
    TpeSearcher tpe(space, 6, Goal::kMinimize);
    for (std::int64_t t = 0; t < 20; ++t) tpe.observe(t, space.sample(6, t), 1.0, loss(space.sample(6, t)));
    return tpe;
  };
  auto spread = [](const std::vector<Config>& wave) {  // the mean distance between two proposals
    double sum = 0;
    int pairs = 0;
    for (std::size_t i = 0; i < wave.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j, ++pairs) {
        sum += std::hypot(std::get<double>(wave[i].at("x")) - std::get<double>(wave[j].at("x")),
                          std::get<double>(wave[i].at("y")) - std::get<double>(wave[j].at("y")));
      }
    }
    return sum / pairs;
  };
  TpeSearcher uninterrupted = observed(), alone = observed();
  std::vector<Config> wave, crowd;
  for (std::int64_t t = 20; t < 30; ++t) wave.push_back(uninterrupted.suggest(t)), crowd.push_back(alone.propose(t));
  EXPECT_GT(spread(wave), 1.5 * spread(crowd)) << spread(wave) << " vs " << spread(crowd);
  EXPECT_NE(wave[5], crowd[5]);

  TpeSearcher resumed = observed();
  for (std::int64_t t = 20; t < 25; ++t) resumed.proposed(t, wave[static_cast<std::size_t>(t - 20)]);
  for (std::int64_t t = 25; t < 30; ++t) EXPECT_EQ(resumed.suggest(t), wave[static_cast<std::size_t>(t - 20)]) << t;
  // A wave-mate with a result is no liar; nor one with a higher id.
  TpeSearcher later = observed();
  later.proposed(40, wave[0]);
  EXPECT_EQ(later.suggest(20), wave[0]);
}

}  // namespace
}  // namespace hfta::search
