#include <gtest/gtest.h>

#include "hfta/search/parameter_spec.h"

namespace hfta::search {
namespace {

TEST(ParameterSpec, DistributionNamesRoundTrip) {
  const auto names = distribution_names();
  ASSERT_EQ(names.size(), 8u);
  for (const auto& name : names) {
    auto d = distribution_from_name(name);
    ASSERT_TRUE(d.has_value()) << name;
    EXPECT_EQ(distribution_name(*d), name);
  }
  EXPECT_FALSE(distribution_from_name("normal").has_value());
}

TEST(ParameterSpec, CategoricalDistributions) {
  EXPECT_TRUE(is_categorical(Distribution::kChoice));
  EXPECT_TRUE(is_categorical(Distribution::kGrid));
  EXPECT_TRUE(is_categorical(Distribution::kConst));
  EXPECT_FALSE(is_categorical(Distribution::kUniform));
  EXPECT_FALSE(is_categorical(Distribution::kQuantized));
}

TEST(ParameterSpec, EqualityComparesEveryField) {
  ParameterSpec a;
  a.name = "lr";
  a.distribution = Distribution::kUniform;
  a.min = 0.1;
  a.max = 0.2;
  ParameterSpec b = a;
  EXPECT_EQ(a, b);
  b.fuse = false;
  EXPECT_NE(a, b);
  b = a;
  b.when.push_back({"optimizer", {std::string("sgd")}});
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace hfta::search
