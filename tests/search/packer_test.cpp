#include <gtest/gtest.h>

#include "hfta/search/packer.h"

namespace hfta::search {
namespace {

PackItem item(std::int64_t id, Config params, double from = 0, double to = 9) {
  return {id, std::move(params), from, to};
}

std::vector<std::int64_t> sizes(const std::vector<ArrayPlan>& arrays) {
  std::vector<std::int64_t> out;
  for (const auto& a : arrays) out.push_back(static_cast<std::int64_t>(a.trial_ids.size()));
  return out;
}

TEST(Packer, FusesTrialsThatDifferOnlyInNumbers) {
  Packer packer("mlp|fashion_mnist|bs=128", {"width"}, 64, true);
  std::vector<PackItem> items;
  for (std::int64_t i = 0; i < 10; ++i) {
    items.push_back(item(i, {{"lr", 0.01 * (i + 1)},
                             {"width", std::int64_t{i % 2 ? 64 : 128}},
                             {"dropout", 0.1 * i}}));
  }
  const auto arrays = packer.pack(items, nullptr);
  ASSERT_EQ(arrays.size(), 2u);  // one per width
  EXPECT_EQ(arrays[0].trial_ids.size(), 5u);
  EXPECT_EQ(arrays[1].trial_ids.size(), 5u);
  EXPECT_NE(arrays[0].key, arrays[1].key);
  EXPECT_NE(arrays[0].key.find("width=integer:"), std::string::npos) << arrays[0].key;
}

TEST(Packer, KeepsBudgetIntervalsApart) {
  Packer packer("k", {}, 64, true);
  const auto arrays = packer.pack({item(0, {}, 0, 3), item(1, {}, 1, 3), item(2, {}, 0, 3)}, nullptr);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].trial_ids, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(arrays[1].trial_ids, (std::vector<std::int64_t>{1}));
  EXPECT_DOUBLE_EQ(arrays[1].from_budget, 1);
}

TEST(Packer, CapsArraysByCapacityAndMaxArrayWithBalancedSizes) {
  std::vector<PackItem> items;
  for (std::int64_t i = 0; i < 10; ++i) items.push_back(item(i, {}));
  EXPECT_EQ(sizes(Packer("k", {}, 4, true).pack(items, nullptr)), (std::vector<std::int64_t>{4, 3, 3}));
  EXPECT_EQ(sizes(Packer("k", {}, 64, true).pack(items, [](const std::string&, const Config&) { return 3; })),
            (std::vector<std::int64_t>{3, 3, 2, 2}));
  // A device that fits not even one model still gets one per array.
  EXPECT_EQ(sizes(Packer("k", {}, 64, true).pack({item(0, {})}, [](const std::string&, const Config&) { return 0; })),
            (std::vector<std::int64_t>{1}));
}

TEST(Packer, FusionOffTrainsEachTrialAlone) {
  std::vector<PackItem> items;
  for (std::int64_t i = 0; i < 5; ++i) items.push_back(item(i, {{"lr", 0.1}}));
  EXPECT_EQ(sizes(Packer("k", {}, 64, false).pack(items, nullptr)),
            (std::vector<std::int64_t>{1, 1, 1, 1, 1}));
}

TEST(Packer, AbsentConditionalParametersArePartOfTheKey) {
  Packer packer("k", {"momentum"}, 64, true);
  EXPECT_NE(packer.fusion_key({{"momentum", 0.9}}), packer.fusion_key({}));
  // Types matter: integer 1 and string "1" are different shapes.
  Packer typed("k", {"x"}, 64, true);
  EXPECT_NE(typed.fusion_key({{"x", std::int64_t{1}}}), typed.fusion_key({{"x", std::string("1")}}));
}

TEST(Packer, CapacitySeesAnExampleConfigurationOfTheKey) {
  Packer packer("k", {"width"}, 64, true);
  std::vector<PackItem> items;
  for (std::int64_t i = 0; i < 8; ++i) items.push_back(item(i, {{"width", std::int64_t{i < 4 ? 10 : 1000}}}));
  // Wide models fit two to an array, narrow ones all four.
  const auto arrays = packer.pack(items, [](const std::string&, const Config& c) {
    return std::get<std::int64_t>(c.at("width")) > 100 ? 2 : 64;
  });
  EXPECT_EQ(sizes(arrays), (std::vector<std::int64_t>{4, 2, 2}));
}

TEST(Packer, SplitInTwoAfterOutOfMemory) {
  ArrayPlan array{"k", 0, 3, {1, 2, 3, 4, 5}};
  const auto [a, b] = split_in_two(array);
  EXPECT_EQ(a.trial_ids, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(b.trial_ids, (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(a.key, "k");
  EXPECT_DOUBLE_EQ(b.to_budget, 3);
  EXPECT_THROW(split_in_two(ArrayPlan{"k", 0, 3, {1}}), std::invalid_argument);
}

TEST(SideBySide, FirstFitDecreasing) {
  const auto waves = side_by_side({5, 3, 4, 2, 7}, 10);
  // 7+3, 5+4, 2 -> first fit of sorted 7,5,4,3,2: [7,3], [5,4], [2]? 2 fits with 7+3? no (12).
  ASSERT_EQ(waves.size(), 3u);
  EXPECT_EQ(waves[0], (std::vector<std::size_t>{4, 1}));
  EXPECT_EQ(waves[1], (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(waves[2], (std::vector<std::size_t>{3}));
  // Too large alone: still scheduled, in a wave of its own.
  EXPECT_EQ(side_by_side({20, 1}, 10).size(), 2u);
}

}  // namespace
}  // namespace hfta::search
