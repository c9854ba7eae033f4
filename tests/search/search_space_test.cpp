// Sampling every distribution, conditions, grids, and reproducibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "hfta/search/search_space.h"
#include "../support/parameter_specs.h"

namespace hfta::search {
namespace {

using test::listed;
using test::range;

std::vector<ParamValue> draws(const ParameterSpec& p, int n) {
  SearchSpace space({p});
  std::vector<ParamValue> out;
  for (int t = 0; t < n; ++t) out.push_back(space.sample(7, t).at(p.name));
  return out;
}

// Branches of one name go together after what their conditions name, in
// their order, and share one quasi-random coordinate; a grid has none.
TEST(SearchSpace, BranchesOfANameStayTogetherInTheirOrder) {
  ParameterSpec second = range("lr", Distribution::kUniform, 0.5, 0.6), first = range("lr", Distribution::kUniform, 0.1, 0.2);
  first.when = {{"optimizer", {std::string("sgd")}}};
  first.branch = 0;
  second.when = {{"schedule", {std::string("step")}}, {"optimizer", {std::string("adam")}}};
  second.branch = 1;
  const auto optimizer = listed("optimizer", Distribution::kChoice, {std::string("sgd"), std::string("adam")});
  const auto schedule = listed("schedule", Distribution::kChoice, {std::string("step")});
  for (Sampling sampling : {Sampling::kRandom, Sampling::kQuasi}) {
    const SearchSpace space({second, optimizer, first, schedule}, sampling);
    std::vector<std::string> order;
    for (const auto& p : space.parameters()) order.push_back(p.name + std::to_string(p.branch));
    EXPECT_EQ(order, (std::vector<std::string>{"optimizer-1", "schedule-1", "lr0", "lr1"}));
    int sgd = 0;
    for (std::int64_t t = 0; t < 40; ++t) {
      const Config c = space.sample(11, t);
      const double lr = std::get<double>(c.at("lr"));
      if (std::get<std::string>(c.at("optimizer")) == "sgd") {
        ++sgd;
        EXPECT_TRUE(lr >= 0.1 && lr <= 0.2) << lr;
      } else {
        EXPECT_TRUE(lr >= 0.5 && lr <= 0.6) << lr;
      }
    }
    EXPECT_GT(sgd, 5);
    EXPECT_LT(sgd, 35);
  }
  ParameterSpec grid = listed("lr", Distribution::kGrid, {0.1, 0.2});
  grid.when = first.when;
  grid.branch = 0;
  EXPECT_THROW(SearchSpace({optimizer, grid}), std::invalid_argument);
}

TEST(SearchSpace, Uniform) {
  const auto values = draws(range("x", Distribution::kUniform, -2, 6), 20000);
  double sum = 0;
  for (const auto& v : values) {
    const double x = std::get<double>(v);
    ASSERT_GE(x, -2);
    ASSERT_LT(x, 6);
    sum += x;
  }
  EXPECT_NEAR(sum / values.size(), 2.0, 0.05);
}

TEST(SearchSpace, LogUniformIsUniformInLogSpace) {
  const auto values = draws(range("x", Distribution::kLogUniform, 1e-4, 1e-1), 20000);
  double sum = 0;
  int below_1e3 = 0;
  for (const auto& v : values) {
    const double x = std::get<double>(v);
    ASSERT_GE(x, 1e-4 * (1 - 1e-12));
    ASSERT_LE(x, 1e-1 * (1 + 1e-12));
    sum += std::log10(x);
    below_1e3 += x < 1e-3;
  }
  EXPECT_NEAR(sum / values.size(), -2.5, 0.02);
  EXPECT_NEAR(below_1e3 / 20000.0, 1.0 / 3.0, 0.015);  // one decade of three
}

TEST(SearchSpace, IntUniformHitsEveryValueEvenly) {
  const auto values = draws(range("x", Distribution::kIntUniform, 3, 7), 20000);
  std::map<std::int64_t, int> counts;
  for (const auto& v : values) counts[std::get<std::int64_t>(v)]++;
  ASSERT_EQ(counts.size(), 5u);
  EXPECT_EQ(counts.begin()->first, 3);
  EXPECT_EQ(counts.rbegin()->first, 7);
  for (const auto& [value, n] : counts) EXPECT_NEAR(n / 20000.0, 0.2, 0.015) << value;
}

TEST(SearchSpace, IntLogUniformFavoursSmallValues) {
  const auto values = draws(range("x", Distribution::kIntLogUniform, 1, 100), 20000);
  std::map<std::int64_t, int> counts;
  for (const auto& v : values) counts[std::get<std::int64_t>(v)]++;
  EXPECT_EQ(counts.begin()->first, 1);
  EXPECT_LE(counts.rbegin()->first, 100);
  // P(1) = log(2)/log(101) ~ 0.150; P(100) = log(101/100)/log(101) ~ 0.0022.
  EXPECT_NEAR(counts[1] / 20000.0, std::log(2.0) / std::log(101.0), 0.01);
  EXPECT_LT(counts[100], counts[1] / 20);
}

TEST(SearchSpace, QuantizedLandsOnTheGrid) {
  ParameterSpec p = range("x", Distribution::kQuantized, 0.5, 0.95);
  p.q = 0.05;
  for (const auto& v : draws(p, 2000)) {
    const double x = std::get<double>(v);
    ASSERT_GE(x, 0.5);
    ASSERT_LE(x, 0.95 + 1e-12);
    const double k = (x - 0.5) / 0.05;
    EXPECT_NEAR(k, std::round(k), 1e-9);
  }
  ParameterSpec whole = range("n", Distribution::kQuantized, 0, 100);
  whole.q = 10;
  whole.log = false;
  std::map<std::int64_t, int> counts;
  for (const auto& v : draws(whole, 5000)) counts[std::get<std::int64_t>(v)]++;
  EXPECT_EQ(counts.size(), 11u);  // 0, 10, ..., 100: integers, as min and q are whole
  ParameterSpec logq = range("x", Distribution::kQuantized, 1, 1000);
  logq.q = 1;
  logq.log = true;
  int small = 0;
  for (const auto& v : draws(logq, 5000)) small += std::get<std::int64_t>(v) <= 10;
  EXPECT_NEAR(small / 5000.0, 1.0 / 3.0, 0.03);
}

TEST(SearchSpace, QuantizedReachesItsEndsAsOftenAsItsMiddle) {
  // Each grid point's share of 8000 draws of a quantized range.
  auto shares = [](double min, double max, double q) {
    ParameterSpec p = range("x", Distribution::kQuantized, min, max);
    p.q = q;
    std::map<double, double> share;
    for (const auto& v : draws(p, 8000)) share[std::get<double>(v)] += 1.0 / 8000;
    return share;
  };
  // 0, 0.1, 0.2, 0.3: 0 + 3 * 0.1 is 0.30000000000000004 in floating point,
  // which must neither push the last point out nor show in the value.
  auto on = shares(0, 0.3, 0.1);
  ASSERT_EQ(on.size(), 4u);
  for (double x : {0.0, 0.1, 0.2, 0.3}) EXPECT_NEAR(on[x], 0.25, 0.03) << x;
  // A max off the grid (0.9 by 0.25 from 0): the grid ends at 0.75, which gets
  // no more than the others (sampling up to max + q/2 gave it 35%).
  auto off = shares(0, 0.9, 0.25);
  ASSERT_EQ(off.size(), 4u);
  for (double x : {0.0, 0.25, 0.5, 0.75}) EXPECT_NEAR(off[x], 0.25, 0.02) << x;
}

TEST(SearchSpace, ChoiceGridAndConst) {
  const std::vector<ParamValue> opts = {std::string("a"), std::string("b"), std::string("c")};
  std::map<std::string, int> counts;
  for (const auto& v : draws(listed("x", Distribution::kChoice, opts), 9000)) counts[std::get<std::string>(v)]++;
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [value, n] : counts) EXPECT_NEAR(n / 9000.0, 1.0 / 3.0, 0.02) << value;
  // A grid cycles: every three trials take each value once.
  const auto cycled = draws(listed("x", Distribution::kGrid, opts), 9);
  for (std::size_t t = 0; t < cycled.size(); ++t) EXPECT_EQ(cycled[t], opts[t % 3]) << t;
  // W&B's probabilities: each value as often as its own.
  ParameterSpec weighted = listed("x", Distribution::kChoice, opts);
  weighted.probabilities = {0.6, 0.3, 0.1};
  std::map<std::string, int> weighted_counts;
  for (const auto& v : draws(weighted, 9000)) weighted_counts[std::get<std::string>(v)]++;
  EXPECT_NEAR(weighted_counts["a"] / 9000.0, 0.6, 0.02);
  EXPECT_NEAR(weighted_counts["b"] / 9000.0, 0.3, 0.02);
  EXPECT_NEAR(weighted_counts["c"] / 9000.0, 0.1, 0.015);
  for (const auto& v : draws(listed("x", Distribution::kConst, {true}), 10)) {
    EXPECT_EQ(v, ParamValue(true));
  }
}

TEST(SearchSpace, ConditionalParametersExistOnlyWhenTheirConditionHolds) {
  ParameterSpec optimizer = listed("optimizer", Distribution::kChoice,
                                   {std::string("sgd"), std::string("adam")});
  ParameterSpec momentum = range("momentum", Distribution::kUniform, 0, 0.9);
  momentum.when = {{"optimizer", {std::string("sgd")}}};
  ParameterSpec nesterov = listed("nesterov", Distribution::kChoice, {true, false});
  nesterov.when = {{"momentum", {}}};  // never: a chain through a continuous parameter
  ParameterSpec beta1 = range("beta1", Distribution::kUniform, 0.8, 0.99);
  beta1.when = {{"optimizer", {std::string("adam")}}};
  // Declared in an order where dependants come first: the space reorders them.
  SearchSpace space({beta1, momentum, optimizer});
  int sgd = 0;
  for (int t = 0; t < 500; ++t) {
    const Config c = space.sample(1, t);
    const bool is_sgd = std::get<std::string>(c.at("optimizer")) == "sgd";
    sgd += is_sgd;
    EXPECT_EQ(c.count("momentum"), is_sgd ? 1u : 0u);
    EXPECT_EQ(c.count("beta1"), is_sgd ? 0u : 1u);
  }
  EXPECT_GT(sgd, 200);
  EXPECT_LT(sgd, 300);
  EXPECT_THROW(SearchSpace({momentum}), std::invalid_argument);  // names a missing parameter
}

TEST(SearchSpace, APointsValuesAreKeptAndTheRestDrawnAsTheTrialWouldDrawThem) {
  ParameterSpec optimizer = listed("optimizer", Distribution::kChoice,
                                   {std::string("sgd"), std::string("adam")});
  ParameterSpec momentum = range("momentum", Distribution::kUniform, 0, 0.9);
  momentum.when = {{"optimizer", {std::string("sgd")}}};
  ParameterSpec beta1 = range("beta1", Distribution::kUniform, 0.8, 0.99);
  beta1.when = {{"optimizer", {std::string("adam")}}};
  const ParameterSpec lr = range("lr", Distribution::kLogUniform, 1e-4, 1);
  SearchSpace space({optimizer, momentum, beta1, lr});
  for (std::int64_t t = 0; t < 40; ++t) {
    const Config drawn = space.sample(5, t);
    // Fixing the optimizer decides which conditional parameter exists; the
    // parameters left free keep exactly the values the trial draws without a point.
    const Config sgd = space.sample(5, t, {{"optimizer", std::string("sgd")}});
    EXPECT_EQ(sgd.at("optimizer"), ParamValue(std::string("sgd")));
    EXPECT_EQ(sgd.at("lr"), drawn.at("lr"));
    EXPECT_EQ(sgd.count("beta1"), 0u);
    ASSERT_EQ(sgd.count("momentum"), 1u);
    if (drawn.count("momentum")) EXPECT_EQ(sgd.at("momentum"), drawn.at("momentum"));
    const Config adam = space.sample(5, t, {{"optimizer", std::string("adam")}, {"lr", 0.01}});
    EXPECT_EQ(adam, (Config{{"optimizer", std::string("adam")}, {"lr", 0.01},
                            {"beta1", drawn.count("beta1") ? drawn.at("beta1") : adam.at("beta1")}}));
  }
  EXPECT_EQ(space.sample(5, 3, {}), space.sample(5, 3));
}

TEST(SearchSpace, AsDrawnTakesOnlyValuesTheParameterCouldDraw) {
  std::string why;
  const ParameterSpec real = range("lr", Distribution::kLogUniform, 1e-4, 1);
  EXPECT_EQ(as_drawn(real, std::int64_t{1}, why), ParamValue(1.0));  // as a real, as it is drawn
  EXPECT_FALSE(as_drawn(real, 2.0, why));
  EXPECT_EQ(why, "expected a value in [1e-04, 1], got 2");
  EXPECT_FALSE(as_drawn(real, std::string("fast"), why));
  EXPECT_EQ(why, "expected a number, got the string 'fast'");
  EXPECT_FALSE(as_drawn(real, true, why));

  const ParameterSpec count = range("width", Distribution::kIntUniform, 16, 64);
  EXPECT_EQ(as_drawn(count, 32.0, why), ParamValue(std::int64_t{32}));
  EXPECT_FALSE(as_drawn(count, 32.5, why));
  EXPECT_EQ(why, "expected an integer, got 32.5");

  ParameterSpec step = range("dropout", Distribution::kQuantized, 0, 0.5);
  step.q = 0.1;
  EXPECT_EQ(as_drawn(step, 0.3, why), ParamValue(0.3));
  EXPECT_FALSE(as_drawn(step, 0.25, why));
  EXPECT_EQ(why, "expected min + k*q (0 + k*0.1), got 0.25; the nearest is 0.3");
  ParameterSpec tiny = range("eps", Distribution::kQuantized, 1e-10, 1e-8);  // steps finer than any absolute tolerance
  tiny.q = 1e-10;
  EXPECT_EQ(as_drawn(tiny, 3e-10, why), ParamValue(3e-10));
  EXPECT_FALSE(as_drawn(tiny, 1.55e-10, why));
  const ParameterSpec flag = listed("nesterov", Distribution::kChoice, {true, false});
  EXPECT_FALSE(as_drawn(flag, std::string("true"), why));
  EXPECT_EQ(why, "expected one of {true, false}, got the string 'true'");
  ParameterSpec whole = range("warmup", Distribution::kQuantized, 0, 100);
  whole.q = 10;
  EXPECT_EQ(as_drawn(whole, 40.0, why), ParamValue(std::int64_t{40}));  // as quantize() gives it

  const ParameterSpec choice = listed("dropout", Distribution::kChoice, {0.0, 0.5});
  EXPECT_EQ(as_drawn(choice, std::int64_t{0}, why), ParamValue(0.0));  // the listed value
  EXPECT_FALSE(as_drawn(choice, 0.25, why));
  EXPECT_EQ(why, "expected one of {0, 0.5}, got the number 0.25");
  const ParameterSpec fixed = listed("optimizer", Distribution::kConst, {std::string("sgd")});
  EXPECT_FALSE(as_drawn(fixed, std::string("adam"), why));
  EXPECT_EQ(why, "expected the parameter's constant 'sgd', got the string 'adam'");
}

TEST(SearchSpace, SameTrialsInAnyOrderAndAnyParameterOrder) {
  const std::vector<ParameterSpec> params = {
      range("lr", Distribution::kLogUniform, 1e-4, 1),
      range("warmup", Distribution::kIntUniform, 0, 100),
      listed("schedule", Distribution::kChoice, {std::string("step"), std::string("cosine")}),
  };
  std::vector<ParameterSpec> reversed(params.rbegin(), params.rend());
  SearchSpace a(params), b(reversed);
  std::map<std::int64_t, Config> forward;
  for (std::int64_t t = 0; t < 50; ++t) forward[t] = a.sample(42, t);
  for (std::int64_t t = 49; t >= 0; --t) EXPECT_EQ(b.sample(42, t), forward[t]) << t;
  // Resuming is just asking again: a fresh space gives the same trial.
  EXPECT_EQ(SearchSpace(params).sample(42, 17), forward[17]);
  EXPECT_NE(a.sample(43, 17), forward[17]);  // another sweep seed, other trials
  // Adding a parameter leaves the others' values unchanged.
  auto more = params;
  more.push_back(range("momentum", Distribution::kUniform, 0, 1));
  Config extended = SearchSpace(more).sample(42, 5);
  extended.erase("momentum");
  EXPECT_EQ(extended, forward[5]);
}

TEST(SearchSpace, GoldenValuesPinTheRandomStreams) {
  // If these change, every recorded sweep's trials change: treat as a format break.
  SearchSpace space({range("x", Distribution::kUniform, 0, 1)});
  EXPECT_DOUBLE_EQ(std::get<double>(space.sample(42, 0).at("x")), 0.021257492116218524);
  EXPECT_EQ(trial_seed(42, 0), 1093179991871435146u);
  EXPECT_NE(trial_seed(42, 0), trial_seed(42, 1));
  EXPECT_LT(trial_seed(42, 0), std::uint64_t(1) << 63);
}

TEST(SearchSpace, GridsCycleThroughTheirCombinationsWhateverTheRestOfTheSpace) {
  // As Ray Tune's grid_search under any scheduler: N consecutive trials take
  // the N combinations, in grid()'s order (the last grid varying fastest).
  ParameterSpec lr = listed("lr", Distribution::kGrid, {0.1, 0.01, 0.001});
  ParameterSpec optimizer = listed("optimizer", Distribution::kGrid, {std::string("sgd"), std::string("adam")});
  ParameterSpec momentum = range("momentum", Distribution::kUniform, 0, 0.9);
  momentum.when = {{"optimizer", {std::string("sgd")}}};
  ParameterSpec width = listed("width", Distribution::kChoice, {std::int64_t{16}, std::int64_t{32}});
  const SearchSpace space({width, momentum, optimizer, lr});
  EXPECT_EQ(space.grid_combinations(), 6);
  const SearchSpace grids_only({lr, optimizer});
  const auto order = grids_only.grid();  // the grid method's points of the same two grids
  ASSERT_EQ(order.size(), 6u);
  for (std::int64_t t = 0; t < 18; ++t) {
    const Config c = space.sample(3, t);
    EXPECT_EQ(c.at("lr"), order[static_cast<std::size_t>(t % 6)].at("lr")) << t;
    EXPECT_EQ(c.at("optimizer"), order[static_cast<std::size_t>(t % 6)].at("optimizer")) << t;
    // Conditions follow the cycled values; the rest keep their own streams.
    EXPECT_EQ(c.count("momentum"), std::get<std::string>(c.at("optimizer")) == "sgd" ? 1u : 0u);
    EXPECT_EQ(c.at("width"), SearchSpace({width}).sample(3, t).at("width"));
  }
  // A point's value wins over the cycle.
  EXPECT_EQ(space.sample(3, 0, {{"lr", 0.001}}).at("lr"), ParamValue(0.001));
  EXPECT_EQ(SearchSpace({width}).grid_combinations(), 1);

  // A grid that exists for one value of another: the combinations grid search
  // has (constant, cosine, step with either step size), not the 6 of the product.
  ParameterSpec schedule = listed("schedule", Distribution::kGrid,
                                  {std::string("constant"), std::string("cosine"), std::string("step")});
  ParameterSpec step_size = listed("step_size", Distribution::kGrid, {std::int64_t{100}, std::int64_t{1000}});
  step_size.when = {{"schedule", {std::string("step")}}};
  const SearchSpace nested({step_size, schedule});
  EXPECT_EQ(nested.grid_combinations(), 4);
  const auto points = nested.grid();
  ASSERT_EQ(points.size(), 4u);
  for (std::int64_t t = 0; t < 12; ++t) EXPECT_EQ(nested.sample(1, t), points[static_cast<std::size_t>(t % 4)]) << t;
  // A point that sets schedule: step where the cycle has none still gets a step size.
  EXPECT_EQ(nested.sample(1, 0, {{"schedule", std::string("step")}}).count("step_size"), 1u);
}

TEST(SearchSpace, GridIsTheCrossProductRespectingConditions) {
  ParameterSpec optimizer = listed("optimizer", Distribution::kGrid,
                                   {std::string("sgd"), std::string("adam")});
  ParameterSpec momentum = listed("momentum", Distribution::kGrid, {0.9, 0.99});
  momentum.when = {{"optimizer", {std::string("sgd")}}};
  ParameterSpec lr = listed("lr", Distribution::kChoice, {0.1, 0.01});
  ParameterSpec wd = listed("weight_decay", Distribution::kConst, {0.0});
  SearchSpace space({optimizer, momentum, lr, wd});
  const auto grid = space.grid();
  ASSERT_EQ(grid.size(), 6u);  // sgd: 2 momenta x 2 lr; adam: 2 lr
  std::set<Config> unique(grid.begin(), grid.end());
  EXPECT_EQ(unique.size(), 6u);
  for (const auto& c : grid) EXPECT_EQ(c.at("weight_decay"), ParamValue(0.0));
  EXPECT_THROW(SearchSpace({range("x", Distribution::kUniform, 0, 1)}).grid(),
               std::invalid_argument);
}

}  // namespace
}  // namespace hfta::search
