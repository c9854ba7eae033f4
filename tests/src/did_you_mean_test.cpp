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

TEST(DidYouMean, NamesAKeyWithAnInvisibleCharacterInIt) {
  const std::vector<std::string> keys = {"name", "seed"};
  // A second byte order mark, a pasted no-break space: the word is the key.
  EXPECT_EQ(closest_match("\xEF\xBB\xBFname", keys), "name");
  EXPECT_EQ(did_you_mean("seed\xC2\xA0", keys),
            " (did you mean 'seed'? it holds an invisible character, shown as <U+...>)");
  EXPECT_EQ(shown("\xEF\xBB\xBFname"), "<U+FEFF>name");
  EXPECT_EQ(shown("seed\xC2\xA0: a\xC2\x85" "b\u200B"), "seed<U+00A0>: a<U+0085>b<U+200B>");
  // Visible text, ASCII (its control characters are config_error's to write out)
  // and bytes of no valid UTF-8 are kept as they are.
  EXPECT_EQ(shown("caf\xC3\xA9 \xE2\x86\x92 x\n\ty \xFF"), "caf\xC3\xA9 \xE2\x86\x92 x\n\ty \xFF");
  // Not UTF-8 though decodable: overlong forms, surrogates; kept as bytes.
  EXPECT_EQ(shown("\xE0\x82\xA0 \xED\xA0\x80"), "\xE0\x82\xA0 \xED\xA0\x80");
  // An invisible character and a typo, or another letter case, still find the word.
  EXPECT_EQ(closest_match("\xEF\xBB\xBFnmae", keys), "name");
  EXPECT_EQ(closest_match("SEED\xC2\xA0", keys), "seed");
}

TEST(DidYouMean, JoinsAlternatives) {
  EXPECT_EQ(join_alternatives({"a"}), "a");
  EXPECT_EQ(join_alternatives({"a", "b"}), "a or b");
  EXPECT_EQ(join_alternatives({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace hfta::core
