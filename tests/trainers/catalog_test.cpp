#include <gtest/gtest.h>

#include <set>

#include "hfta/trainers/catalog.h"

namespace hfta::trainers {
namespace {

// Every default must itself be a valid value of its option.
void expect_valid_default(const OptionSpec& o) {
  SCOPED_TRACE(o.name);
  switch (o.type) {
    case OptionType::kBool:
      EXPECT_TRUE(o.default_value == "true" || o.default_value == "false");
      break;
    case OptionType::kInt:
    case OptionType::kReal:
      EXPECT_TRUE(o.in_range(std::stod(o.default_value))) << o.default_value << " " << o.range_text();
      break;
    case OptionType::kString:
      if (o.fractions) {
        EXPECT_TRUE(parse_fractions(o.default_value).has_value()) << o.default_value;
      } else {
        EXPECT_NE(std::find(o.allowed.begin(), o.allowed.end(), o.default_value), o.allowed.end());
      }
      break;
  }
  EXPECT_FALSE(o.help.empty());
}

TEST(Catalog, ModelsHaveValidUniqueOptions) {
  std::set<std::string> names;
  for (const auto& m : models()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_EQ(find_model(m.name), &m);
    EXPECT_NE(std::find(m.datasets.begin(), m.datasets.end(), m.dataset), m.datasets.end());
    std::set<std::string> options;
    for (const auto& o : m.options) {
      EXPECT_TRUE(options.insert(o.name).second) << m.name << "." << o.name;
      // A model option must not shadow a training hyperparameter.
      EXPECT_EQ(find_training_hyperparameter(o.name), nullptr) << o.name;
      expect_valid_default(o);
    }
    EXPECT_FALSE(metric_names(m.kind).empty());
    EXPECT_FALSE(loss_names(m.kind).empty());
  }
  EXPECT_EQ(find_model("nope"), nullptr);
}

TEST(Catalog, TrainingHyperparametersHaveValidDefaults) {
  std::set<std::string> names;
  for (const auto& h : training_hyperparameters()) {
    EXPECT_TRUE(names.insert(h.name).second) << h.name;
    expect_valid_default(h);
  }
  ASSERT_NE(find_training_hyperparameter("lr"), nullptr);
  EXPECT_FALSE(find_training_hyperparameter("lr")->structural);
  EXPECT_TRUE(find_training_hyperparameter("batch_size")->structural);
}

TEST(Catalog, FractionListsParseStrictly) {
  EXPECT_EQ(parse_fractions("0.5,0.75"), (std::vector<double>{0.5, 0.75}));
  EXPECT_EQ(parse_fractions("0.3"), (std::vector<double>{0.3}));
  EXPECT_EQ(parse_fractions(" 0.25, 0.5 ,0.9"), (std::vector<double>{0.25, 0.5, 0.9}));
  for (const char* bad : {"", "0.5,", "0.75,0.5", "0.5,0.5", "1", "0", "-0.1", "a", "0.5, ", " ", "0.5;0.75"}) {
    EXPECT_FALSE(parse_fractions(bad).has_value()) << bad;
  }
}

TEST(Catalog, RangesIncludeAndExcludeTheirEnds) {
  const OptionSpec* momentum = find_training_hyperparameter("momentum");
  EXPECT_TRUE(momentum->in_range(0.0));
  EXPECT_FALSE(momentum->in_range(1.0));
  EXPECT_EQ(momentum->range_text(), "in [0, 1)");
  EXPECT_EQ(find_training_hyperparameter("lr")->range_text(), "> 0");
}

}  // namespace
}  // namespace hfta::trainers
