#include <gtest/gtest.h>

#include <random>

#include "equivalence.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/fusion/slot_state.h"

namespace hfta::fusion {
namespace {

class FusedLinearTest : public test::OpTest {};

TEST_P(FusedLinearTest, MatchesPlainLinearLayers) {
  const auto [dtype, models] = param();
  at::manual_seed(models);
  // Fixed shapes (odd, vector-wide, square), then random ones drawn from a seeded stream.
  std::vector<std::tuple<int, int, int, bool>> shapes = {{7, 5, 4, true}, {33, 17, 9, false}, {64, 64, 32, true}};
  std::mt19937 rng(static_cast<unsigned>(models));
  std::uniform_int_distribution<int> size(1, 48);
  for (int draw = 0; draw < 3; ++draw) shapes.emplace_back(size(rng), size(rng), size(rng) % 12 + 1, draw % 2 == 0);
  for (const auto& [in, out, n, bias] : shapes) {
    SCOPED_TRACE(std::to_string(in) + "->" + std::to_string(out));
    std::vector<torch::nn::Linear> plains;
    FusedLinear fused(models, in, out, bias, at::TensorOptions().dtype(dtype));
    std::vector<at::Tensor> inputs;
    for (std::int64_t b = 0; b < models; ++b) {
      plains.emplace_back(torch::nn::LinearOptions(in, out).bias(bias));
      plains.back()->to(dtype);
      fused->load_slot(b, plains.back());
      // Extra batch dimensions per model: [N, 3, in].
      inputs.push_back(at::randn({n, 3, in}, at::TensorOptions().dtype(dtype)));
    }
    test::expect_equivalent(
        fused, plains, inputs, [](const std::vector<at::Tensor>& xs) { return at::stack(xs); },
        [](const at::Tensor& y, std::int64_t b) { return y[b]; }, dtype);
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedLinearTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 3, 8)));

TEST(FusedLinear, SlotsRoundTripAndSeed) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  FusedLinear fused(3, 6, 4, true, to);
  torch::nn::Linear plain(6, 4);
  plain->to(dtype);
  test::expect_round_trip(fused, plain, 1);
  const auto state = slot_state_dict(*fused, 1);
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].key(), "weight");
  EXPECT_EQ(state[0].value().sizes(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(state[1].key(), "bias");
  test::expect_seeded_slot(fused, 2, 99, [] { return torch::nn::Linear(6, 4); });
  }
}

}  // namespace
}  // namespace hfta::fusion
