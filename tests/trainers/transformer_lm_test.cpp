// The Transformer language model on the fortunes corpus: each trial of an array
// trains exactly as its plain model alone, the plain form has the expected size,
// and the text data is what it claims to be.
#include <gtest/gtest.h>

#include <stdexcept>

#include "hfta/trainers/text_corpus.h"
#include "hfta/trainers/transformer_lm.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

const ClassificationData& text() {
  static const ClassificationData d = [] {
    TextCorpusOptions o;
    o.seq_len = 32;
    o.limit = 300000;
    return load_text_data(o);
  }();
  return d;
}

TransformerLmShape small_shape() {
  TransformerLmShape s;
  s.d_model = 32, s.heads = 4, s.layers = 2, s.ff = 64, s.seq_len = 32;
  return s;
}

TEST(TextCorpus, SequencesAreTheTextShiftedByOneAndSplitOneInTwenty) {
  TextCorpusOptions o;
  o.seq_len = 16;
  o.limit = 20000;
  const TextCorpus corpus = read_text_corpus(o);
  ASSERT_EQ(corpus.text.size(), 20000u);
  EXPECT_TRUE(std::is_sorted(corpus.vocab.begin(), corpus.vocab.end()));
  EXPECT_EQ(corpus.text.find("\n%\n"), std::string::npos);  // fortune separators are gone
  const ClassificationData d = load_text_data(o);
  EXPECT_EQ(d.classes, static_cast<std::int64_t>(corpus.vocab.size()));
  const std::int64_t sequences = (20000 - 1) / 16;
  EXPECT_EQ(d.train.size() + d.validation.size() + d.test.size(), sequences);
  EXPECT_EQ(d.validation.size(), sequences / 20);
  EXPECT_EQ(d.train.images.sizes(), (std::vector<std::int64_t>{d.train.size(), 16}));
  // The first sequence is the start of the text; each label is the next character.
  for (std::int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(corpus.vocab[static_cast<std::size_t>(d.train.images[0][i].item<std::int64_t>())], corpus.text[i]);
    EXPECT_EQ(corpus.vocab[static_cast<std::size_t>(d.train.labels[0][i].item<std::int64_t>())], corpus.text[i + 1]);
  }
  // The 19th sequence (index 18) is the first of validation.
  EXPECT_EQ(corpus.vocab[static_cast<std::size_t>(d.validation.images[0][0].item<std::int64_t>())],
            corpus.text[18 * 16]);
}

TEST(TextCorpus, AMissingCorpusNamesThePackage) {
  TextCorpusOptions o;
  o.path = "/nonexistent/corpus";
  try {
    load_text_data(o);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/corpus"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fortunes"), std::string::npos) << e.what();
  }
}

TEST(TransformerLm, PlainFormHasTheParameterCount) {
  // Embeddings 100x256 + 128x256; per layer in_proj 197376, out_proj 65792,
  // linear1 263168, linear2 262400, norms 1024; head 25700.
  TransformerLmShape shape;
  EXPECT_EQ(count_parameters(FusedTransformerLm(1, 100, shape, 0.1).make_plain()),
            25600 + 32768 + 2 * 789760 + 25700);
}

TEST(TransformerLm, PlainFormPredictsEveryPositionFromThoseBeforeIt) {
  torch::manual_seed(0);
  auto plain = FusedTransformerLm(1, 50, small_shape(), 0.0).make_plain();
  plain->eval();
  at::Tensor tokens = at::randint(50, {2, 10}, at::kLong);
  const at::Tensor before = plain->forward(tokens).view({2, 10, 50});
  tokens.select(1, 7).fill_(3);  // a later token changes no earlier prediction
  const at::Tensor after = plain->forward(tokens).view({2, 10, 50});
  EXPECT_TRUE(at::allclose(before.narrow(1, 0, 7), after.narrow(1, 0, 7)));
  EXPECT_FALSE(at::allclose(before.narrow(1, 7, 3), after.narrow(1, 7, 3)));
}

void expect_transformer_lm_as_alone_in_float64(const at::Device& device) {
  std::vector<SlotTrial> trials = {{0, 41, 0.05, 0.9, 0.0}, {1, 42, 0.1, 0.0, 1e-3}, {2, 43, 0.02, 0.5, 0.0}};
  ArrayTrainerOptions o;
  o.batch_size = 8;
  o.data_seed = 2;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  expect_same_as_alone(std::make_shared<FusedTransformerLm>(3, text().classes, small_shape(), 0.0, f64), trials, o,
                       30, on(device, text()));
}

TEST(TransformerLm, ArrayEqualsEachTrialTrainedAloneInFloat64) { expect_transformer_lm_as_alone_in_float64(at::kCPU); }

TEST(TransformerLm, ArrayEqualsEachTrialTrainedAloneInFloat64OnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_transformer_lm_as_alone_in_float64(at::kCUDA);
}

TEST(TransformerLm, AdamArrayEqualsEachTrialTrainedAloneInFloat64) {
  // In float64: the key projection's bias has no gradient in exact arithmetic
  // (softmax ignores a constant added to a row of scores), and Adam scales the
  // rounding noise it gets instead up to steps of about lr in float32, fused or not.
  std::vector<SlotTrial> trials = {{0, 7, 1e-3}, {1, 8, 3e-3}};
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = 8;
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  expect_same_as_alone(std::make_shared<FusedTransformerLm>(2, text().classes, small_shape(), 0.0, f64), trials, o,
                       20, text());
}

TEST(TransformerLm, SgdArrayEqualsEachTrialTrainedAloneInFloat32) {
  std::vector<SlotTrial> trials = {{0, 7, 0.05, 0.9}, {1, 8, 0.1}};
  ArrayTrainerOptions o;
  o.batch_size = 8;
  expect_same_as_alone(std::make_shared<FusedTransformerLm>(2, text().classes, small_shape(), 0.0), trials, o, 20,
                       text());
}

TEST(TransformerLm, ATrialTrainsBitwiseAlikeInAnArrayOfOne) {
  std::vector<SlotTrial> trials = {{0, 7, 0.05, 0.9, 0.0, 0.1}, {1, 8, 0.1}, {2, 9, 0.02, 0.5, 1e-3, 0.2}};
  ArrayTrainerOptions o;
  o.batch_size = 8;
  expect_bitwise_in_an_array_of_one(FusedTransformerLm(1, text().classes, small_shape(), 0.1), trials, o, 3, text());
}

TEST(TransformerLm, LearnsTheText) {
  // Below a unigram model's perplexity (about 25) after 200 steps.
  expect_perplexity_falls(std::make_shared<FusedTransformerLm>(2, text().classes, small_shape(), 0.1), text(), 200,
                          50, 12);
}

}  // namespace
}  // namespace hfta::trainers
