#include <gtest/gtest.h>

#include "equivalence.h"
#include "hfta/fusion/batch_norm.h"
#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/fusion/layout.h"

namespace hfta::fusion {
namespace {

class FusedBatchNormTest : public test::OpTest {};

// Several training steps (each checked), then the running statistics and eval mode.
template <typename Fused, typename Plain>
void train_then_eval(Fused& fused, std::vector<Plain>& plains, at::ScalarType dtype,
                     const std::vector<std::int64_t>& shape,
                     const std::function<at::Tensor(const std::vector<at::Tensor>&)>& to_fused,
                     const std::function<at::Tensor(const at::Tensor&, std::int64_t)>& slot_of) {
  const auto models = static_cast<std::int64_t>(plains.size());
  auto inputs = [&] {
    std::vector<at::Tensor> xs;
    for (std::int64_t b = 0; b < models; ++b) {
      xs.push_back(at::randn(shape, at::TensorOptions().dtype(dtype)) * (b + 1) + b);
    }
    return xs;
  };
  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    fused->zero_grad();
    for (auto& p : plains) p->zero_grad();
    test::expect_equivalent(fused, plains, inputs(), to_fused, slot_of, dtype);
  }
  for (std::int64_t b = 0; b < models; ++b) {
    auto slot = fused->extract_slot(b);
    HFTA_EXPECT_CLOSE(slot->running_mean, plains[b]->running_mean, dtype);
    HFTA_EXPECT_CLOSE(slot->running_var, plains[b]->running_var, dtype);
    EXPECT_EQ(slot->num_batches_tracked.template item<std::int64_t>(), 4);
  }
  fused->eval();
  for (auto& p : plains) p->eval();
  fused->zero_grad();
  for (auto& p : plains) p->zero_grad();
  test::expect_equivalent(fused, plains, inputs(), to_fused, slot_of, dtype);
}

TEST_P(FusedBatchNormTest, BatchNorm2dMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(4);
  for (Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
  SCOPED_TRACE(to_string(strategy));
  const auto options = torch::nn::BatchNormOptions(3).momentum(0.2);
  FusedBatchNorm2d fused(models, options, at::TensorOptions().dtype(dtype));
  fused->set_strategy(strategy);
  auto plains = test::affine_plains<torch::nn::BatchNorm2d>(fused, models, dtype,
                                                            [&] { return torch::nn::BatchNorm2d(options); });
  train_then_eval(
      fused, plains, dtype, {4, 3, 5, 5},
      [](const std::vector<at::Tensor>& xs) { return stack_to_conv(at::stack(xs)); },
      [models = models](const at::Tensor& y, std::int64_t b) { return conv_to_stack(y, models)[b]; });
  }
}

// Both layouts BatchNorm1d takes (after Linear: matmul; after Conv1d: conv),
// with and without a length dimension, under both strategies.
TEST_P(FusedBatchNormTest, BatchNorm1dMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(5);
  for (const Layout layout : {Layout::kMatmul, Layout::kConv}) {
    for (const Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
      for (const auto& shape : std::vector<std::vector<std::int64_t>>{{6, 4}, {5, 4, 3}}) {
        SCOPED_TRACE(::testing::Message() << (layout == Layout::kConv ? "conv" : "matmul") << " layout, "
                                          << to_string(strategy) << ", shape " << c10::IntArrayRef(shape));
        const auto options = torch::nn::BatchNormOptions(4).momentum(0.3);
        FusedBatchNorm1d fused(models, options, at::TensorOptions().dtype(dtype), layout);
        fused->set_strategy(strategy);
        auto plains = test::affine_plains<torch::nn::BatchNorm1d>(fused, models, dtype,
                                                                  [&] { return torch::nn::BatchNorm1d(options); });
        if (layout == Layout::kConv) {
          train_then_eval(
              fused, plains, dtype, shape,
              [](const std::vector<at::Tensor>& xs) { return stack_to_conv(at::stack(xs)); },
              [models = models](const at::Tensor& y, std::int64_t b) { return conv_to_stack(y, models)[b]; });
        } else {
          train_then_eval(
              fused, plains, dtype, shape, [](const std::vector<at::Tensor>& xs) { return at::stack(xs); },
              [](const at::Tensor& y, std::int64_t b) { return y[b]; });
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedBatchNormTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 3, 8)));

TEST(FusedBatchNorm, TuneLeavesRunningStatisticsUntouched) {
  FusedBatchNorm2d bn(3, torch::nn::BatchNormOptions(4));
  const at::Tensor mean = bn->running_mean.clone();
  const at::Tensor count = bn->num_batches_tracked.clone();
  bn->tune(at::randn({5, 12, 6, 6}) + 3);
  EXPECT_TRUE(at::equal(bn->running_mean, mean));
  EXPECT_TRUE(at::equal(bn->num_batches_tracked, count));
}

TEST(FusedBatchNorm, SlotsRoundTripAndSeed) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  const auto options = torch::nn::BatchNormOptions(3);
  FusedBatchNorm2d fused(2, options, to);
  torch::nn::BatchNorm2d plain(options);
  plain->to(dtype);
  {
    torch::NoGradGuard no_grad;
    plain->running_mean.uniform_();
    plain->running_var.uniform_(1, 2);
    plain->num_batches_tracked.fill_(5);
    plain->weight.uniform_();
  }
  test::expect_round_trip(fused, plain, 1);
  test::expect_seeded_slot(fused, 0, 3, [&] { return torch::nn::BatchNorm2d(options); });
  EXPECT_THROW(FusedBatchNorm2d(2, torch::nn::BatchNormOptions(3).momentum(c10::nullopt)),
               std::invalid_argument);
  for (const Layout layout : {Layout::kMatmul, Layout::kConv}) {
    FusedBatchNorm1d fused1d(3, options, to, layout);
    torch::nn::BatchNorm1d plain1d(options);
    plain1d->to(dtype);
    {
      torch::NoGradGuard no_grad;
      plain1d->running_mean.uniform_();
      plain1d->running_var.uniform_(1, 2);
      plain1d->num_batches_tracked.fill_(7);
      plain1d->weight.uniform_();
      plain1d->bias.uniform_();
    }
    test::expect_round_trip(fused1d, plain1d, 2);
    test::expect_seeded_slot(fused1d, 1, 4, [&] { return torch::nn::BatchNorm1d(options); });
  }
  }
}

// The direct kernel against at::batch_norm on the same tensors: with and without
// affine parameters and running statistics, 3-D and 4-D inputs, odd run lengths
// (vector tails), values far from zero mean, and every gradient.
TEST(DirectBatchNorm, MatchesAtBatchNormInValuesGradientsAndRunningStatistics) {
  at::manual_seed(11);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double tol = dtype == at::kFloat ? 1e-5 : 1e-10;
    const auto o = at::TensorOptions().dtype(dtype);
    for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 3, 5, 7}, {6, 5, 33}, {2, 4, 1, 1}}) {
      for (const bool affine : {true, false}) {
        for (const bool running : {true, false}) {
          SCOPED_TRACE(::testing::Message() << "dims " << shape.size() << " affine " << affine << " running "
                                            << running << " dtype " << dtype);
          const std::int64_t c = shape[1];
          const at::Tensor x0 = at::randn(shape, o) * 2 + 5;
          const at::Tensor w0 = at::rand({c}, o) + 0.5, b0 = at::randn({c}, o);
          const at::Tensor rm0 = at::randn({c}, o), rv0 = at::rand({c}, o) + 0.5;
          const at::Tensor g = at::randn(shape, o);
          struct Run {
            at::Tensor x, w, b, rm, rv, y;
          };
          auto make = [&] {
            Run r{x0.clone().requires_grad_(true), affine ? w0.clone().requires_grad_(true) : at::Tensor(),
                  affine ? b0.clone().requires_grad_(true) : at::Tensor(), running ? rm0.clone() : at::Tensor(),
                  running ? rv0.clone() : at::Tensor(), at::Tensor()};
            return r;
          };
          Run mine = make(), want = make();
          mine.y = batch_norm_training(mine.x, mine.w, mine.b, mine.rm, mine.rv, 0.1, 1e-5);
          want.y = at::batch_norm(want.x, want.w, want.b, want.rm, want.rv, true, 0.1, 1e-5, false);
          mine.y.backward(g);
          want.y.backward(g);
          EXPECT_TRUE(at::allclose(mine.y, want.y, tol, tol));
          EXPECT_TRUE(at::allclose(mine.x.grad(), want.x.grad(), tol, tol));
          if (affine) {
            EXPECT_TRUE(at::allclose(mine.w.grad(), want.w.grad(), tol, tol));
            EXPECT_TRUE(at::allclose(mine.b.grad(), want.b.grad(), tol, tol));
          }
          if (running) {
            EXPECT_TRUE(at::allclose(mine.rm, want.rm, tol, tol));
            EXPECT_TRUE(at::allclose(mine.rv, want.rv, tol, tol));
          }
        }
      }
    }
  }
}

// The matmul layout's kernel [B, N, C] against at::batch_norm on each model's
// [N, C]: values, every gradient and the running statistics, odd channel counts
// (vector tails), values far from zero mean; and a model's numbers in an array
// of three equal, bit for bit, those of its array of one.
TEST(DirectBatchNorm, RowsMatchAtBatchNormPerModelAndAnyArraySize) {
  at::manual_seed(12);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const double tol = dtype == at::kFloat ? 1e-5 : 1e-10;
    const auto o = at::TensorOptions().dtype(dtype);
    for (const auto& shape : std::vector<std::vector<std::int64_t>>{{3, 7, 5}, {2, 33, 17}, {1, 2, 64}}) {
      for (const bool affine : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "shape " << c10::IntArrayRef(shape) << " affine " << affine
                                          << " dtype " << dtype);
        const std::int64_t models = shape[0], c = shape[2];
        const at::Tensor x0 = at::randn(shape, o) * 2 + 5, g = at::randn(shape, o);
        const at::Tensor w0 = at::rand({models * c}, o) + 0.5, b0 = at::randn({models * c}, o);
        const at::Tensor rm0 = at::randn({models * c}, o), rv0 = at::rand({models * c}, o) + 0.5;
        auto leaf = [](const at::Tensor& t) { return t.clone().requires_grad_(true); };
        const at::Tensor x = leaf(x0), w = affine ? leaf(w0) : at::Tensor(), b = affine ? leaf(b0) : at::Tensor();
        const at::Tensor rm = rm0.clone(), rv = rv0.clone();
        const at::Tensor y = batch_norm_training_rows(x, w, b, rm, rv, 0.1, 1e-5);
        y.backward(g);
        for (std::int64_t m = 0; m < models; ++m) {
          const auto part = [&](const at::Tensor& t) { return t.narrow(0, m * c, c); };
          // At::batch_norm on the model's [N, C] alone.
          const at::Tensor px = leaf(x0[m]), pw = affine ? leaf(part(w0)) : at::Tensor();
          const at::Tensor pb = affine ? leaf(part(b0)) : at::Tensor();
          const at::Tensor prm = part(rm0).clone(), prv = part(rv0).clone();
          at::batch_norm(px, pw, pb, prm, prv, true, 0.1, 1e-5, false).backward(g[m]);
          const at::Tensor py = at::batch_norm(x0[m], affine ? part(w0) : at::Tensor(),
                                               affine ? part(b0) : at::Tensor(), {}, {}, true, 0.1, 1e-5, false);
          EXPECT_TRUE(at::allclose(y[m], py, tol, tol));
          EXPECT_TRUE(at::allclose(x.grad()[m], px.grad(), tol, tol));
          if (affine) {
            EXPECT_TRUE(at::allclose(part(w.grad()), pw.grad(), tol, tol));
            EXPECT_TRUE(at::allclose(part(b.grad()), pb.grad(), tol, tol));
          }
          EXPECT_TRUE(at::allclose(part(rm), prm, tol, tol));
          EXPECT_TRUE(at::allclose(part(rv), prv, tol, tol));
          // The same model as an array of one: bit for bit.
          const at::Tensor ox = leaf(x0.narrow(0, m, 1)), ow = affine ? leaf(part(w0)) : at::Tensor();
          const at::Tensor ob = affine ? leaf(part(b0)) : at::Tensor();
          const at::Tensor orm = part(rm0).clone(), orv = part(rv0).clone();
          const at::Tensor oy = batch_norm_training_rows(ox, ow, ob, orm, orv, 0.1, 1e-5);
          oy.backward(g.narrow(0, m, 1));
          EXPECT_TRUE(at::equal(oy[0], y[m]));
          EXPECT_TRUE(at::equal(ox.grad()[0], x.grad()[m]));
          if (affine) EXPECT_TRUE(at::equal(ow.grad(), part(w.grad())));
          EXPECT_TRUE(at::equal(orm, part(rm)) && at::equal(orv, part(rv)));
        }
      }
    }
  }
  EXPECT_THROW(batch_norm_training_rows(at::randn({2, 5, 3}), at::ones({5}), {}, {}, {}, 0.1, 1e-5),
               std::invalid_argument);
}

TEST(DirectBatchNorm, RejectsAnInputWithOtherChannels) {
  EXPECT_THROW(batch_norm_training(at::randn({4, 5, 3, 3}), at::ones({6}), at::zeros({6}), {}, {}, 0.1, 1e-5),
               std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
