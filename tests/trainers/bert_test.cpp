// BERT-style masked language models: the masked data, the loss that counts
// masked positions only, and arrays that train each trial exactly as alone.
#include <gtest/gtest.h>

#include <torch/nn/functional/loss.h>

#include "hfta/trainers/bert.h"
#include "hfta/trainers/text_corpus.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

const ClassificationData& masked_text() {
  static const ClassificationData d = [] {
    TextCorpusOptions o;
    o.seq_len = 32;
    o.limit = 300000;
    return load_masked_text_data(o, 0.15);
  }();
  return d;
}

BertShape small_shape() {
  BertShape s;
  s.layers = 2, s.hidden = 32, s.heads = 2, s.seq_len = 32;
  return s;
}

TEST(MaskedText, FifteenPercentChosenMostlyMaskedAtLeastOnePerSequence) {
  TextCorpusOptions o;
  o.seq_len = 32;
  o.limit = 300000;
  const ClassificationData plain = load_text_data(o);
  const ClassificationData& d = masked_text();
  const std::int64_t mask = d.classes - 1;  // the mask token follows the characters
  EXPECT_EQ(d.classes, plain.classes + 1);
  const at::Tensor chosen = d.train.labels != kIgnoreLabel;
  const double share = chosen.to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(share, 0.15, 0.01);
  EXPECT_TRUE(chosen.any(1).all().item<bool>());
  const at::Tensor masked = (d.train.images == mask) & chosen;
  EXPECT_NEAR(masked.sum().item<double>() / chosen.sum().item<double>(), 0.8, 0.02);
  EXPECT_FALSE(((d.train.images == mask) & ~chosen).any().item<bool>());
  // Unchosen positions keep the text; chosen labels are the text (the inputs, unshifted).
  const at::Tensor text = plain.train.images;
  EXPECT_TRUE(at::equal(at::where(chosen, text, d.train.images), text));
  EXPECT_TRUE(at::equal(at::where(chosen, d.train.labels, text), text));
  // Drawn from a fixed seed: the same masks every time.
  EXPECT_TRUE(at::equal(load_masked_text_data(o, 0.15).train.images, d.train.images));
}

TEST(MaskedText, LossCountsMaskedPositionsOnlyAsPyTorchsIgnoreIndex) {
  torch::manual_seed(1);
  const at::Tensor logits = at::randn({2, 12, 5}, at::kDouble);
  at::Tensor labels = at::randint(5, {12}, at::kLong);
  labels.index_put_({at::arange(0, 12, 3)}, kIgnoreLabel);
  const at::Tensor got = per_model_cross_entropy(logits, labels, {0.0, 0.2}, /*masked=*/true);
  namespace F = torch::nn::functional;
  EXPECT_NEAR(got[0].item<double>(), F::cross_entropy(logits[0], labels).item<double>(), 1e-12);
  EXPECT_NEAR(got[1].item<double>(),
              F::cross_entropy(logits[1], labels, F::CrossEntropyFuncOptions().label_smoothing(0.2)).item<double>(),
              1e-12);
}

TEST(Bert, SizesAndTheTinyPlainFormsParameterCount) {
  EXPECT_EQ(bert_shape("medium", 128).layers, 8);
  EXPECT_EQ(bert_shape("mini", 64).hidden, 256);
  EXPECT_THROW(bert_shape("huge", 128), std::invalid_argument);
  // Embeddings 115x128 + 128x128 and their norm 256; per layer in_proj 49536,
  // out_proj 16512, linear1 66048, linear2 65664, norms 512; head 16512 + 256 + 14835.
  EXPECT_EQ(count_parameters(FusedBert(1, 115, bert_shape("tiny", 128), 0.1).make_plain()),
            14720 + 16384 + 256 + 2 * 198272 + 16512 + 256 + 14835);
}

void expect_bert_as_alone_in_float64(const at::Device& device) {
  std::vector<SlotTrial> trials = {{0, 41, 0.05, 0.9, 0.0}, {1, 42, 0.1, 0.0, 1e-3}, {2, 43, 0.02, 0.5, 0.0}};
  ArrayTrainerOptions o;
  o.batch_size = 8;
  o.data_seed = 3;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  expect_same_as_alone(std::make_shared<FusedBert>(3, masked_text().classes, small_shape(), 0.0, f64), trials, o, 20,
                       on(device, masked_text()));
}

TEST(Bert, ArrayEqualsEachTrialTrainedAloneInFloat64) { expect_bert_as_alone_in_float64(at::kCPU); }

TEST(Bert, ATrialTrainsBitwiseAlikeInAnArrayOfOne) {
  std::vector<SlotTrial> trials = {{0, 7, 0.05, 0.9, 0.0, 0.1}, {1, 8, 0.1}, {2, 9, 0.02, 0.5, 1e-3, 0.2}};
  ArrayTrainerOptions o;
  o.batch_size = 8;
  expect_bitwise_in_an_array_of_one(FusedBert(1, masked_text().classes, small_shape(), 0.1), trials, o, 3,
                                    masked_text());
}

TEST(Bert, ArrayEqualsEachTrialTrainedAloneInFloat64OnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_bert_as_alone_in_float64(at::kCUDA);
}

TEST(Bert, LearnsTheMaskedCharacters) {
  // Masked characters, predicted from both sides' context.
  expect_perplexity_falls(std::make_shared<FusedBert>(2, masked_text().classes, small_shape(), 0.1), masked_text(),
                          200, 50, 15);
}

}  // namespace
}  // namespace hfta::trainers
