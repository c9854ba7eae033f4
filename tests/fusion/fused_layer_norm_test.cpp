#include <gtest/gtest.h>

#include "equivalence.h"
#include "hfta/fusion/fused_embedding.h"
#include "hfta/fusion/fused_layer_norm.h"
#include "hfta/fusion/layer_norm.h"
#include "hfta/fusion/embedding.h"

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
    auto plains = test::affine_plains<torch::nn::LayerNorm>(fused, models, dtype,
                                                            [&] { return torch::nn::LayerNorm(options); });
    std::vector<at::Tensor> inputs;
    for (std::int64_t b = 0; b < models; ++b) {
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
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  const auto options = torch::nn::LayerNormOptions({5});
  FusedLayerNorm fused(3, options, to);
  torch::nn::LayerNorm plain(options);
  plain->to(dtype);
  {
    torch::NoGradGuard no_grad;
    plain->weight.uniform_();
  }
  test::expect_round_trip(fused, plain, 2);
  test::expect_seeded_slot(fused, 1, 4, [&] { return torch::nn::LayerNorm(options); });
  }
}

TEST(FusedEmbedding, SlotsRoundTripSeedAndPerModelIndices) {
  // With padding_idx the plain module zeroes that row when built: so must a seeded slot.
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  for (const auto& options : {torch::nn::EmbeddingOptions(10, 4), torch::nn::EmbeddingOptions(10, 4).padding_idx(3)}) {
    FusedEmbedding fused(3, options, at::TensorOptions().dtype(dtype));
    torch::nn::Embedding plain(options);
    plain->to(dtype);
    test::expect_round_trip(fused, plain, 0);
    test::expect_seeded_slot(fused, 2, 11, [&] { return torch::nn::Embedding(options); });
    if (options.padding_idx()) EXPECT_EQ(fused->extract_slot(2)->weight[3].abs().sum().item<double>(), 0.0);
    // Each model its own indices: values and gradients equal each plain slot's.
    const at::Tensor idx = at::randint(0, 10, {3, 5}, at::kLong);
    idx[1][0] = 3;
    fused->zero_grad();
    const at::Tensor y = fused->forward_per_model(idx);
    const at::Tensor g = at::randn_like(y);
    y.backward(g);
    for (std::int64_t b = 0; b < 3; ++b) {
      auto alone = fused->extract_slot(b);
      const at::Tensor yb = alone->forward(idx[b]);
      yb.backward(g[b]);
      EXPECT_TRUE(at::equal(y[b], yb));
      EXPECT_TRUE(at::allclose(fused->weight.grad()[b], alone->weight.grad(), 1e-6, 1e-6)) << "slot " << b;
    }
  }
  }
  // Options whose gradients the fused kernel does not reproduce are refused, not ignored.
  for (const auto& options : {torch::nn::EmbeddingOptions(10, 4).max_norm(1.0),
                              torch::nn::EmbeddingOptions(10, 4).scale_grad_by_freq(true),
                              torch::nn::EmbeddingOptions(10, 4).sparse(true)}) {
    EXPECT_THROW(FusedEmbedding(2, options), std::invalid_argument);
  }
}

// The direct kernels against LibTorch's ops on the same tensors, on shapes the
// module tests do not reach: wide rows (the eight-lane sums and their tails),
// large offsets, rows far from zero mean, and every gradient.
TEST(DirectLayerNorm, MatchesAtLayerNormPerModelInValuesAndGradients) {
  at::manual_seed(8);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    for (const std::int64_t dim : {1, 7, 8, 9, 64, 100}) {
      SCOPED_TRACE("dim " + std::to_string(dim));
      const std::int64_t models = 3;
      const auto o = at::TensorOptions().dtype(dtype);
      const at::Tensor x = (at::randn({models, 4, 5, dim}, o) * 3 + 10).set_requires_grad(true);
      const at::Tensor w = at::randn({models, dim}, o).set_requires_grad(true);
      const at::Tensor b = at::randn({models, dim}, o).set_requires_grad(true);
      const at::Tensor g = at::randn({models, 4, 5, dim}, o);
      const at::Tensor y = layer_norm(x, w, b, 1e-5);
      y.backward(g);
      const double tol = dtype == at::kFloat ? 1e-5 : 1e-10;
      if (dim == 1) {
        // A one-value row normalises to exactly 0, so the output is the bias
        // and the input gets no gradient, up to the rounding of one product
        // times rstd = 1/sqrt(eps). (LibTorch's x * rstd - mean * rstd leaves
        // about 1e-3 of rounding in float; it is not the reference here.)
        EXPECT_TRUE(at::equal(y, b.view({models, 1, 1, 1}).expand_as(y)));
        EXPECT_LT(x.grad().abs().max().item<double>(), dtype == at::kFloat ? 1e-4 : 1e-12);
        if (dtype == at::kFloat) continue;
      }
      for (std::int64_t m = 0; m < models; ++m) {
        const at::Tensor xm = x[m].detach().clone().set_requires_grad(true);
        const at::Tensor wm = w[m].detach().clone().set_requires_grad(true);
        const at::Tensor bm = b[m].detach().clone().set_requires_grad(true);
        const at::Tensor ym = at::layer_norm(xm, {dim}, wm, bm, 1e-5);
        ym.backward(g[m]);
        EXPECT_TRUE(at::allclose(y[m], ym, tol, tol));
        EXPECT_TRUE(at::allclose(x.grad()[m], xm.grad(), tol, tol));
        EXPECT_TRUE(at::allclose(w.grad()[m], wm.grad(), tol, tol));
        EXPECT_TRUE(at::allclose(b.grad()[m], bm.grad(), tol, tol));
      }
    }
  }
}

TEST(DirectEmbedding, MatchesAtEmbeddingExactlyWithRepeatsAndPadding) {
  at::manual_seed(9);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const std::int64_t models = 4, num = 13, dim = 9;
    const at::Tensor w = at::randn({models, num, dim}, at::TensorOptions().dtype(dtype)).set_requires_grad(true);
    // Per-model indices with repeats (gradients sum in order) and the padding row.
    const at::Tensor idx = at::randint(0, num, {models, 6, 50}, at::kLong);
    idx.select(2, 0).fill_(3);
    const at::Tensor g = at::randn({models, 6, 50, dim}, w.options());
    embed(w, idx, 3).backward(g);
    for (std::int64_t m = 0; m < models; ++m) {
      const at::Tensor wm = w[m].detach().clone().set_requires_grad(true);
      const at::Tensor ym = at::embedding(wm, idx[m], 3);
      ym.backward(g[m]);
      EXPECT_TRUE(at::equal(embed(w, idx, 3)[m], ym));
      EXPECT_TRUE(at::allclose(w.grad()[m], wm.grad(), 1e-6, 1e-6));
    }
    // An expanded batch (stride 0 over models) is read in place.
    const at::Tensor shared = idx[0].unsqueeze(0).expand({models, 6, 50});
    EXPECT_TRUE(at::equal(embed(w, shared, -1)[2], at::embedding(w[2], idx[0])));
  }
}

TEST(DirectLayerNormAndEmbedding, RejectInputsNotLaidOutPerModel) {
  const at::Tensor w = at::ones({3, 4}), b = at::zeros({3, 4});
  EXPECT_NO_THROW(layer_norm(at::randn({3, 2, 4}), w, b, 1e-5));
  EXPECT_THROW(layer_norm(at::randn({2, 3, 4}), w, b, 1e-5), std::invalid_argument);  // models second
  EXPECT_THROW(layer_norm(at::randn({3, 2, 5}), w, b, 1e-5), std::invalid_argument);  // wrong width
  const at::Tensor tables = at::randn({3, 10, 4});
  EXPECT_THROW(embed(tables, at::zeros({6}, at::kLong), -1), std::invalid_argument);  // not [3, N]
}

TEST(DirectEmbedding, RejectsAnIndexOutsideTheTable) {
  const at::Tensor w = at::randn({2, 5, 3});
  for (const std::int64_t bad : {5, -1}) {
    const at::Tensor idx = at::zeros({2, 4}, at::kLong);
    idx[1][2] = bad;
    try {
      embed(w, idx, -1);
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const std::out_of_range& e) {
      EXPECT_NE(std::string(e.what()).find("outside the table of 5 rows"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hfta::fusion
