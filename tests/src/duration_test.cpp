// What --time-limit accepts, parsed apart from any clock and any run.
#include <gtest/gtest.h>

#include <string>

#include "hfta/core/duration.h"

namespace {

using hfta::core::duration_label;
using hfta::core::duration_seconds;

TEST(Duration, UnitsAddUpInSeconds) {
  const std::pair<const char*, double> given[] = {
      {"90", 90},     {"90s", 90},       {"1.5m", 90},  {"2h", 7200},   {"1h30m", 5400},
      {"1h30m15s", 5415}, {"1h15s", 3615}, {"0.5s", 0.5}, {".5m", 30},  {"2.", 2},
      {"0", 0},       {"0s", 0},         {"", 0},
  };
  for (const auto& [text, seconds] : given) {
    ASSERT_TRUE(duration_seconds(text).has_value()) << text;
    EXPECT_DOUBLE_EQ(*duration_seconds(text), seconds) << text;
  }
}

TEST(Duration, WhatIsNoDurationIsRefused) {
  // Units out of order or twice, signs, exponents, hex, a bare unit, a second
  // point, a number past a double, and one so small it would read as 0 (no limit).
  const std::string too_long = "1" + std::string(400, '0') + "s", too_small = "0." + std::string(400, '0') + "1s";
  for (const std::string& bad : {std::string("10x"), std::string("-5"), std::string("+5"), std::string("1h1h"),
                                 std::string("30m2h"), std::string("m"), std::string("1e3h"), std::string("0x10m"),
                                 std::string("1.2.3s"), std::string("."), std::string("5 m"), std::string("5ms"),
                                 std::string("inf"), std::string("nan"), std::string("1h30"), too_long, too_small}) {
    EXPECT_FALSE(duration_seconds(bad).has_value()) << bad;
  }
}

TEST(Duration, MessagesNameItAsGivenWithTheUnitOfABareNumber) {
  EXPECT_EQ(duration_label("1h30m"), "1h30m");
  EXPECT_EQ(duration_label("2h"), "2h");
  EXPECT_EQ(duration_label("90"), "90 s");
  EXPECT_EQ(duration_label("1.5"), "1.5 s");
}

}  // namespace
