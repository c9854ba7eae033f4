#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "hfta/search/param_importance.h"
#include "../support/parameter_specs.h"

namespace hfta::search {
namespace {

using test::listed;
using test::range;

std::vector<ParameterSpec> optimizer_space() {
  ParameterSpec momentum = range("momentum", Distribution::kUniform, 0.5, 0.99);
  momentum.when = {{"optimizer", {ParamValue{std::string("sgd")}}}};
  return {range("lr", Distribution::kLogUniform, 1e-4, 1e-1), range("dropout", Distribution::kUniform, 0, 0.5),
          listed("optimizer", Distribution::kChoice, {std::string("sgd"), std::string("adam"), std::string("rmsprop")}),
          range("width", Distribution::kIntUniform, 16, 256), momentum,
          listed("activation", Distribution::kConst, {std::string("relu")})};
}

struct Results {
  std::vector<Config> configs;
  std::vector<double> values;
};

Results results_of(const std::vector<ParameterSpec>& space, std::int64_t n, const std::function<double(const Config&)>& f) {
  SearchSpace s(space);
  Results out;
  for (std::int64_t t = 0; t < n; ++t) {
    out.configs.push_back(s.sample(3, t));
    out.values.push_back(f(out.configs.back()));
  }
  return out;
}

ParamImportance importance(const std::vector<ParameterSpec>& space, const Results& r, std::uint64_t seed = 0) {
  std::string why;
  const auto out = param_importance(space, r.configs, r.values, seed, why);
  EXPECT_TRUE(out.has_value()) << why;
  return out.value_or(ParamImportance{});
}

std::vector<std::string> names(const ParamImportance& p) {
  std::vector<std::string> out;
  for (const auto& [name, share] : p.params) out.push_back(name);
  return out;
}

// The share of the i-th parameter, largest first.
double share_at(const ParamImportance& p, std::size_t i) {
  const auto& [name, share] = p.params.at(i);
  return share;
}

double log10_lr(const Config& c) { return std::log10(std::get<double>(c.at("lr"))); }

TEST(ParamImportance, ThePartsEveryTrialHoldsThatVaryAreJudgedAndTheirSharesSumToOne) {
  const auto r = results_of(optimizer_space(), 150, [](const Config& c) { return -std::pow(log10_lr(c) + 2.5, 2); });
  const ParamImportance p = importance(optimizer_space(), r);
  // momentum exists only under sgd (its condition, optimizer, stands for it) and activation is constant.
  EXPECT_EQ(p.left_out, (std::vector<std::pair<std::string, std::string>>{{"momentum", "conditional: some results lack it"}}));
  auto sorted = names(p);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"dropout", "lr", "optimizer", "width"}));
  double sum = 0;
  for (const auto& [name, share] : p.params) {
    EXPECT_GE(share, 0.0) << name;
    sum += share;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_GT(p.main_effects, 0.0);
  EXPECT_LE(p.main_effects, 1.0);
}

TEST(ParamImportance, AMetricOfTheLearningRateAloneNamesItFirstAndNearlyAlone) {
  const auto r = results_of(optimizer_space(), 150, [](const Config& c) { return -std::pow(log10_lr(c) + 2.5, 2); });
  const ParamImportance p = importance(optimizer_space(), r);
  ASSERT_FALSE(p.params.empty());
  EXPECT_EQ(names(p)[0], "lr");
  EXPECT_GT(share_at(p, 0), 0.9);
  EXPECT_GT(p.main_effects, 0.85);  // one parameter: next to no interaction
}

TEST(ParamImportance, ACategoricalParameterAndAnAdditiveMixAreRankedByTheirShareOfTheVariance) {
  const auto by_optimizer = results_of(optimizer_space(), 150, [](const Config& c) {
    return std::get<std::string>(c.at("optimizer")) == "adam" ? 1.0 : 0.0;
  });
  const ParamImportance p = importance(optimizer_space(), by_optimizer);
  EXPECT_EQ(names(p)[0], "optimizer");
  EXPECT_GT(share_at(p, 0), 0.9);
  // 3 x dropout/0.5 + width/240: uniform parts with variances 9/12 and about 1/12.
  const auto mix = results_of(optimizer_space(), 300, [](const Config& c) {
    return 3 * std::get<double>(c.at("dropout")) / 0.5 + static_cast<double>(std::get<std::int64_t>(c.at("width"))) / 240;
  });
  const ParamImportance q = importance(optimizer_space(), mix);
  EXPECT_EQ(names(q)[0], "dropout");
  EXPECT_EQ(names(q)[1], "width");
  EXPECT_NEAR(share_at(q, 0), 0.9, 0.05);
  EXPECT_NEAR(share_at(q, 1), 0.1, 0.05);
}

TEST(ParamImportance, ACategoricalParametersShareConvergesToItsTrueShare) {
  // y = 2u + (0, 1, 0, 1)[c], u uniform on [0, 1], c each of 4 values alike:
  // variances 4/12 and 1/4, shares 4/7 and 3/7 exactly. Each value owns an
  // equal cell, so the measure is the true one (Optuna's one-hot columns
  // average over combinations no trial can take: c 0.27 to 0.35 on such points,
  // experiments/importance_vs_optuna.sh).
  const std::vector<ParameterSpec> space{
      range("u", Distribution::kUniform, 0, 1),
      listed("c", Distribution::kChoice, {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3}})};
  const auto r = results_of(space, 1000, [](const Config& c) {
    return 2 * std::get<double>(c.at("u")) + (std::get<std::int64_t>(c.at("c")) % 2 == 1 ? 1.0 : 0.0);
  });
  const ParamImportance p = importance(space, r);
  ASSERT_EQ(names(p), (std::vector<std::string>{"u", "c"}));
  EXPECT_NEAR(share_at(p, 0), 4.0 / 7, 0.01);
  EXPECT_NEAR(share_at(p, 1), 3.0 / 7, 0.01);
  EXPECT_NEAR(p.main_effects, 1.0, 0.01);
}

TEST(ParamImportance, ANameWithNumericBranchesIsJudgedOverTheirRanges) {
  // lr per optimizer: two log ranges, one feature over their union.
  ParameterSpec sgd_lr = range("lr", Distribution::kLogUniform, 1e-3, 1e-1), adam_lr = range("lr", Distribution::kLogUniform, 1e-5, 1e-3);
  sgd_lr.when = {{"optimizer", {ParamValue{std::string("sgd")}}}};
  adam_lr.when = {{"optimizer", {ParamValue{std::string("adam")}}}};
  sgd_lr.branch = 0;
  adam_lr.branch = 1;
  const std::vector<ParameterSpec> space{listed("optimizer", Distribution::kChoice, {std::string("sgd"), std::string("adam")}),
                                         sgd_lr, adam_lr, range("dropout", Distribution::kUniform, 0, 0.5)};
  const auto r = results_of(space, 150, [](const Config& c) { return log10_lr(c); });
  const ParamImportance p = importance(space, r);
  EXPECT_EQ(names(p)[0], "lr");
  EXPECT_EQ(p.params.size(), 3u);
  EXPECT_TRUE(p.left_out.empty());

  // Branches on two scales are judged on the linear one (a result of lr alone still names it);
  // branches of listed values and of a range cannot be one feature: left out, saying so.
  std::vector<ParameterSpec> mixed = space;
  mixed[1].distribution = Distribution::kUniform;
  const auto linear = results_of(mixed, 150, [](const Config& c) { return std::get<double>(c.at("lr")); });
  EXPECT_EQ(names(importance(mixed, linear))[0], "lr");
  mixed[2] = listed("lr", Distribution::kChoice, {1e-4, 1e-3});
  mixed[2].when = adam_lr.when;
  mixed[2].branch = 1;
  const auto listed_and_range = results_of(mixed, 150, [](const Config& c) { return std::get<double>(c.at("dropout")); });
  const ParamImportance q = importance(mixed, listed_and_range);
  EXPECT_EQ(q.left_out, (std::vector<std::pair<std::string, std::string>>{{"lr", "its branches mix listed values and ranges"}}));
  EXPECT_EQ(names(q)[0], "dropout");
  // Where every parameter that varies is left out, why says so and left_out names them.
  ParameterSpec momentum = range("momentum", Distribution::kUniform, 0.5, 0.99);
  momentum.when = {{"optimizer", {ParamValue{std::string("sgd")}}}};
  const std::vector<ParameterSpec> only_conditional{
      listed("optimizer", Distribution::kChoice, {std::string("sgd"), std::string("adam")}), momentum};
  const std::vector<Config> configs{{{"optimizer", std::string("adam")}}, {{"optimizer", std::string("adam")}}};
  std::string why;
  std::vector<std::pair<std::string, std::string>> left_out;
  EXPECT_FALSE(param_importance(only_conditional, configs, {1.0, 2.0}, 0, why, &left_out).has_value());
  EXPECT_EQ(why, "no parameter judged takes more than one value in these results");
  EXPECT_EQ(left_out, (std::vector<std::pair<std::string, std::string>>{{"momentum", "conditional: some results lack it"}}));
}

TEST(ParamImportance, IsAPureFunctionOfItsSeedAndSaysWhyWhereThereIsNothingToJudge) {
  const auto r = results_of(optimizer_space(), 80, [](const Config& c) { return log10_lr(c) + std::get<double>(c.at("dropout")); });
  const ParamImportance a = importance(optimizer_space(), r, 5), b = importance(optimizer_space(), r, 5);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.main_effects, b.main_effects);

  std::string why;
  const Results flat{r.configs, std::vector<double>(r.values.size(), 0.5)};
  EXPECT_FALSE(param_importance(optimizer_space(), flat.configs, flat.values, 0, why).has_value());
  EXPECT_EQ(why, "the metric is the same in every result");
  const std::vector<ParameterSpec> fixed{listed("activation", Distribution::kConst, {std::string("relu")}),
                                         range("width", Distribution::kIntUniform, 64, 64)};
  const auto none = results_of(fixed, 20, [](const Config&) { return 1.0; });
  EXPECT_FALSE(param_importance(fixed, none.configs, none.values, 0, why).has_value());
  EXPECT_EQ(why, "no parameter takes more than one value");
}

}  // namespace
}  // namespace hfta::search
