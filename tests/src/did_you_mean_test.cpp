#include <gtest/gtest.h>

#include "hfta/core/did_you_mean.h"

namespace hfta::core {
namespace {

TEST(DidYouMean, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("max_arry", "max_array"), 1u);
}

TEST(DidYouMean, SuggestsCloseNamesOnly) {
  const std::vector<std::string> keys = {"method", "eta", "trials", "searcher"};
  EXPECT_EQ(closest_match("methd", keys), "method");
  EXPECT_EQ(closest_match("trails", keys), "trials");
  EXPECT_EQ(closest_match("learning_rate", keys), "");
  EXPECT_EQ(did_you_mean("seacher", keys), " (did you mean 'searcher'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", keys), "");
}

TEST(DidYouMean, JoinsAlternatives) {
  EXPECT_EQ(join_alternatives({"a"}), "a");
  EXPECT_EQ(join_alternatives({"a", "b"}), "a or b");
  EXPECT_EQ(join_alternatives({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace hfta::core
