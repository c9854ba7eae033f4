// The footprint estimate counts the parameters real LibTorch modules of the
// same shape have.
#include <gtest/gtest.h>

#include <torch/nn.h>

#include "hfta/trainers/bert.h"
#include "hfta/trainers/dcgan.h"
#include "hfta/trainers/footprint.h"
#include "hfta/trainers/mobilenet_v3.h"
#include "hfta/trainers/pointnet.h"
#include "hfta/trainers/resnet18.h"
#include "hfta/trainers/transformer_lm.h"

namespace hfta::trainers {
namespace {

double count(const torch::nn::Module& module) {
  double n = 0;
  for (const auto& p : module.parameters()) n += static_cast<double>(p.numel());
  return n;
}

TEST(Footprint, MlpParametersMatchLibTorch) {
  for (int depth : {1, 2, 4}) {
    for (int width : {32, 256}) {
      torch::nn::Sequential net;
      int in = 784;
      for (int d = 0; d < depth; ++d) {
        net->push_back(torch::nn::Linear(in, width));
        in = width;
      }
      net->push_back(torch::nn::Linear(in, 10));
      const auto f = estimate_footprint("mlp", {{"depth", depth}, {"width", width}});
      ASSERT_TRUE(f.has_value());
      EXPECT_DOUBLE_EQ(f->parameters, count(*net)) << depth << "x" << width;
      EXPECT_DOUBLE_EQ(f->input_per_sample, 784);
    }
  }
}

TEST(Footprint, CnnParametersMatchLibTorch) {
  for (int m : {1, 3}) {
    torch::nn::Sequential net(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6 * m, 5).padding(2)),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(6 * m, 16 * m, 5)),
        torch::nn::Linear(16 * m * 25, 120), torch::nn::Linear(120, 84), torch::nn::Linear(84, 10));
    const auto f = estimate_footprint("cnn", {{"width", m}});
    ASSERT_TRUE(f.has_value());
    EXPECT_DOUBLE_EQ(f->parameters, count(*net));
  }
}

TEST(Footprint, ZooParametersMatchThePlainModels) {
  for (int width : {4, 64}) {
    for (bool small : {true, false}) {
      const auto f = estimate_footprint("resnet18", {{"width", width}, {"small_input", small ? 1 : 0}});
      ASSERT_TRUE(f.has_value());
      EXPECT_DOUBLE_EQ(f->parameters, count(*FusedResNet18(1, width, small).make_plain())) << width << small;
    }
  }
  const auto f = estimate_footprint("pointnet", {{"points", 256}});
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->parameters, count(*FusedPointNet(1, 0.3).make_plain()));
  EXPECT_DOUBLE_EQ(f->input_per_sample, 3 * 256);
  const auto gan = estimate_footprint("dcgan", {{"nz", 100}, {"ngf", 64}, {"ndf", 64}});
  ASSERT_TRUE(gan.has_value());
  EXPECT_DOUBLE_EQ(gan->parameters, count(*FusedDcgan(1, DcganShape{100, 64, 64}).make_plain()));
  EXPECT_DOUBLE_EQ(estimate_footprint("dcgan", {{"nz", 8}, {"ngf", 4}, {"ndf", 4}})->parameters,
                   count(*FusedDcgan(1, DcganShape{8, 4, 4}).make_plain()));
  for (bool input : {false, true}) {
    const auto t = estimate_footprint("pointnet", {{"input_transform", input ? 1 : 0}, {"feature_transform", 1}});
    EXPECT_DOUBLE_EQ(t->parameters, count(*FusedPointNet(1, 0.3, 8, {}, input, true).make_plain())) << input;
  }
  TransformerLmShape shape;
  shape.d_model = 64, shape.heads = 4, shape.layers = 3, shape.ff = 128, shape.seq_len = 32;
  const auto lm = estimate_footprint("transformer_lm", {{"d_model", 64}, {"heads", 4}, {"layers", 3}, {"ff", 128},
                                                         {"seq_len", 32}, {"vocab", 97}});
  ASSERT_TRUE(lm.has_value());
  EXPECT_DOUBLE_EQ(lm->parameters, count(*FusedTransformerLm(1, 97, shape, 0.1).make_plain()));
  for (double width : {0.25, 0.5, 1.0}) {
    const auto m = estimate_footprint("mobilenet_v3_small", {{"width_mult", width}});
    ASSERT_TRUE(m.has_value());
    EXPECT_DOUBLE_EQ(m->parameters, count(*FusedMobileNetV3Small(1, width, 0.2).make_plain())) << width;
  }
  for (const char* size : {"tiny", "mini"}) {
    const auto b = estimate_footprint("bert", {{"seq_len", 32}, {"vocab", 97}}, {{"size", size}});
    ASSERT_TRUE(b.has_value());
    EXPECT_DOUBLE_EQ(b->parameters, count(*FusedBert(1, 97, bert_shape(size, 32), 0.1).make_plain())) << size;
  }
}

TEST(Footprint, BytesGrowWithBatchAndOptimizerState) {
  const auto f = *estimate_footprint("mlp", {});
  EXPECT_GT(per_model_bytes(f, 256, "sgd"), per_model_bytes(f, 64, "sgd"));
  EXPECT_GT(per_model_bytes(f, 64, "adam"), per_model_bytes(f, 64, "sgd"));
  EXPECT_DOUBLE_EQ(per_model_bytes(f, 64, "adam") - per_model_bytes(f, 64, "sgd"), 4 * f.parameters);
  EXPECT_GT(fixed_bytes(f, 64), 4 * 784 * 64);
  EXPECT_FALSE(estimate_footprint("unknown", {}).has_value());
}

}  // namespace
}  // namespace hfta::trainers
