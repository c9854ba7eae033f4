#include <gtest/gtest.h>

#include "equivalence.h"
#include "hfta/fusion/fused_embedding.h"
#include "hfta/fusion/fused_layer_norm.h"

namespace hfta::fusion {
namespace {

class FusedNormEmbeddingTest : public test::OpTest {};

auto stack = [](const std::vector<at::Tensor>& xs) { return at::stack(xs); };
auto slot = [](const at::Tensor& y, std::int64_t b) { return y[b]; };

TEST_P(FusedNormEmbeddingTest, LayerNormMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(6);
  for (const auto& normalized : std::vector<std::vector<std::int64_t>>{{8}, {3, 4}}) {
   for (Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
    SCOPED_TRACE(to_string(strategy));
    const auto options = torch::nn::LayerNormOptions(normalized).eps(1e-5);
    FusedLayerNorm fused(models, options, at::TensorOptions().dtype(dtype));
    fused->set_strategy(strategy);
    std::vector<torch::nn::LayerNorm> plains;
    std::vector<at::Tensor> inputs;
    for (std::int64_t b = 0; b < models; ++b) {
      plains.emplace_back(options);
      plains.back()->to(dtype);
      torch::NoGradGuard no_grad;
      plains.back()->weight.uniform_(0.5, 1.5);
      plains.back()->bias.uniform_(-1, 1);
      fused->load_slot(b, plains.back());
      std::vector<std::int64_t> shape = {5, 2};
      shape.insert(shape.end(), normalized.begin(), normalized.end());
      inputs.push_back(at::randn(shape, at::TensorOptions().dtype(dtype)));
    }
    test::expect_equivalent(fused, plains, inputs, stack, slot, dtype);
   }
  }
}

TEST_P(FusedNormEmbeddingTest, EmbeddingMatchesPlainModulesWithPadding) {
  const auto [dtype, models] = param();
  at::manual_seed(7);
  for (Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
  SCOPED_TRACE(to_string(strategy));
  const auto options = torch::nn::EmbeddingOptions(11, 6).padding_idx(2);
  FusedEmbedding fused(models, options, at::TensorOptions().dtype(dtype));
  fused->set_strategy(strategy);
  std::vector<torch::nn::Embedding> plains;
  std::vector<at::Tensor> inputs;
  // The same token indices for every model, padding included, as in an array.
  const at::Tensor tokens = at::randint(0, 11, {4, 7}, at::kLong);
  tokens[0][0] = 2;
  for (std::int64_t b = 0; b < models; ++b) {
    plains.emplace_back(options);
    plains.back()->to(dtype);
    fused->load_slot(b, plains.back());
    inputs.push_back(tokens);
  }
  test::expect_equivalent(
      fused, plains, inputs, [](const std::vector<at::Tensor>& xs) { return xs[0]; }, slot, dtype,
      /*check_input_grad=*/false);
  // The padding row got no gradient in any slot.
  for (std::int64_t b = 0; b < models; ++b) {
    EXPECT_EQ(fused->weight.grad()[b][2].abs().sum().item<double>(), 0.0);
  }
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedNormEmbeddingTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 3, 8)));

TEST(FusedLayerNorm, SlotsRoundTripAndSeed) {
  const auto options = torch::nn::LayerNormOptions({5});
  FusedLayerNorm fused(3, options);
  torch::nn::LayerNorm plain(options);
  {
    torch::NoGradGuard no_grad;
    plain->weight.uniform_();
  }
  test::expect_round_trip(fused, plain, 2);
  test::expect_seeded_slot(fused, 1, 4, [&] { return torch::nn::LayerNorm(options); });
}

TEST(FusedEmbedding, SlotsRoundTripSeedAndPerModelIndices) {
  const auto options = torch::nn::EmbeddingOptions(10, 4);
  FusedEmbedding fused(3, options);
  torch::nn::Embedding plain(options);
  test::expect_round_trip(fused, plain, 0);
  test::expect_seeded_slot(fused, 2, 11, [&] { return torch::nn::Embedding(options); });
  const at::Tensor idx = at::randint(0, 10, {3, 5}, at::kLong);
  const at::Tensor y = fused->forward_per_model(idx);
  for (std::int64_t b = 0; b < 3; ++b) {
    EXPECT_TRUE(at::equal(y[b], fused->extract_slot(b)->forward(idx[b])));
  }
}

}  // namespace
}  // namespace hfta::fusion
