#include <gtest/gtest.h>

#include <stdexcept>

#include "hfta/search/param_value.h"

namespace hfta::search {
namespace {

TEST(ParamValue, PrintsAsWritten) {
  EXPECT_EQ(to_string(ParamValue(true)), "true");
  EXPECT_EQ(to_string(ParamValue(std::int64_t{-42})), "-42");
  EXPECT_EQ(to_string(ParamValue(0.001)), "0.001");
  EXPECT_EQ(to_string(ParamValue(std::string("adam"))), "adam");
}

// In a list shown to people ("{0.5, 0.75}", "milestones: ..."), a string
// that would read as more than one value, or as none, is quoted.
TEST(ParamValue, DisplayQuotesAStringThatAListWouldSplit) {
  EXPECT_EQ(display(ParamValue(std::string("adam"))), "adam");
  EXPECT_EQ(display(ParamValue(std::string("0.25, 0.5"))), "\"0.25, 0.5\"");
  EXPECT_EQ(display(ParamValue(std::string("a:b"))), "\"a:b\"");
  EXPECT_EQ(display(ParamValue(std::string("{x}"))), "\"{x}\"");
  EXPECT_EQ(display(ParamValue(std::string(" pad"))), "\" pad\"");
  EXPECT_EQ(display(ParamValue(std::string(""))), "\"\"");
  EXPECT_EQ(display(ParamValue(std::string("say \"hi\", \\o"))), "\"say \\\"hi\\\", \\\\o\"");
  EXPECT_EQ(display(ParamValue(std::string("0.5"))), "\"0.5\"");
  EXPECT_EQ(display(ParamValue(std::string("true"))), "\"true\"");
  EXPECT_EQ(display(ParamValue(std::string("a\nb"))), "\"a\\nb\"");
  EXPECT_EQ(display(ParamValue(std::string("relu6"))), "relu6");
  EXPECT_EQ(display(ParamValue(0.5)), "0.5");
  EXPECT_EQ(display(ParamValue(true)), "true");
}

TEST(ParamValue, RealsPrintShortestAndReadBackExactly) {
  for (double d : {0.1, 1.0 / 3.0, 1e-8, 123456.789, 0.30000000000000004}) {
    EXPECT_EQ(std::stod(to_string(ParamValue(d))), d);
  }
}

TEST(ParamValue, TypesAndNumbers) {
  EXPECT_EQ(type_name(ParamValue(false)), "boolean");
  EXPECT_EQ(type_name(ParamValue(std::int64_t{1})), "integer");
  EXPECT_EQ(type_name(ParamValue(1.5)), "number");
  EXPECT_EQ(type_name(ParamValue(std::string("x"))), "string");
  EXPECT_TRUE(is_numeric(ParamValue(std::int64_t{1})));
  EXPECT_FALSE(is_numeric(ParamValue(true)));
  EXPECT_DOUBLE_EQ(as_double(ParamValue(std::int64_t{7})), 7.0);
  EXPECT_THROW(as_double(ParamValue(std::string("x"))), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::search
