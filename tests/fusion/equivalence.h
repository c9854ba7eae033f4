// Checks a fused op against B independent plain LibTorch modules: outputs, input
// gradients and every parameter's gradient, slot by slot.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include "hfta/fusion/mixed_precision.h"

namespace hfta::test {

/// The bound: relative error 1e-5 in float32, 1e-10 in float64; under
/// bfloat16 autocast, bfloat16's (8 bits of mantissa, and sums of such terms).
inline double tolerance(at::ScalarType t) {
  if (fusion::autocast_enabled(c10::DeviceType::CPU)) return 3e-2;
  return t == at::kDouble ? 1e-10 : 1e-5;
}

/// An op test over (dtype, B). The dtype kBFloat16 stands for float32 modules
/// run under LibTorch's CPU autocast to bfloat16, as mixed-precision training
/// runs them: param() then gives float32, and the scope lasts the test.
class OpTest : public ::testing::TestWithParam<std::tuple<at::ScalarType, std::int64_t>> {
 protected:
  void SetUp() override {
    if (std::get<0>(GetParam()) == at::kBFloat16) autocast_.emplace(fusion::Precision::kBFloat16, at::kCPU);
  }
  void TearDown() override { autocast_.reset(); }
  std::tuple<at::ScalarType, std::int64_t> param() const {
    const auto [dtype, models] = GetParam();
    return {dtype == at::kBFloat16 ? at::kFloat : dtype, models};
  }

 private:
  std::optional<fusion::AutocastScope> autocast_;
};

/// max |got - want| / max |want| (0 when both are zero).
inline double relative_error(const at::Tensor& got, const at::Tensor& want) {
  const double scale = want.abs().max().item<double>();
  const double diff = (got.to(want.scalar_type()) - want).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

#define HFTA_EXPECT_CLOSE(got, want, dtype)                                                   \
  do {                                                                                        \
    ASSERT_EQ((got).sizes(), (want).sizes());                                                 \
    EXPECT_LE(::hfta::test::relative_error((got), (want)), ::hfta::test::tolerance(dtype))    \
        << "relative error " << ::hfta::test::relative_error((got), (want));                  \
  } while (0)

/// Slot b's parameter gradients, under the plain module's names: the fused op's
/// gradients are swapped in for its parameters, slot b is extracted, and the
/// parameters are put back. Works for every op whose slot extraction is a
/// linear rearrangement of its parameters.
template <typename Fused>
std::vector<std::pair<std::string, at::Tensor>> slot_gradients(Fused& fused, std::int64_t b) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> saved;
  for (auto& p : fused->parameters()) {
    saved.push_back(p.detach().clone());
    p.copy_(p.grad().defined() ? p.grad() : at::zeros_like(p));
  }
  auto plain = fused->extract_slot(b);
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : plain->named_parameters()) out.emplace_back(p.key(), p.value().detach().clone());
  std::size_t i = 0;
  for (auto& p : fused->parameters()) p.copy_(saved[i++]);
  return out;
}

/// B plain modules from `make()` in `dtype`, each with distinct affine
/// parameters (weight in [0.5, 1.5], bias in [-1, 1], so slot mix-ups show),
/// loaded into its slot of `fused`. For the norms.
template <typename Plain, typename Fused, typename Make>
std::vector<Plain> affine_plains(Fused& fused, std::int64_t models, at::ScalarType dtype, const Make& make) {
  std::vector<Plain> plains;
  for (std::int64_t b = 0; b < models; ++b) {
    plains.push_back(make());
    plains.back()->to(dtype);
    torch::NoGradGuard no_grad;
    plains.back()->weight.uniform_(0.5, 1.5);
    plains.back()->bias.uniform_(-1, 1);
    fused->load_slot(b, plains.back());
  }
  return plains;
}

/// Runs fused and plain forward and backward with the same inputs and upstream
/// gradients and compares everything. `inputs[b]` is model b's input in the plain
/// layout; `to_fused` builds the fused input from them; `slot_of(Y, b)` takes model
/// b's part of the fused output in the plain layout.
template <typename Fused, typename Plain>
void expect_equivalent(Fused& fused, std::vector<Plain>& plains, const std::vector<at::Tensor>& inputs,
                       const std::function<at::Tensor(const std::vector<at::Tensor>&)>& to_fused,
                       const std::function<at::Tensor(const at::Tensor&, std::int64_t)>& slot_of,
                       at::ScalarType dtype, bool check_input_grad = true) {
  const auto models = static_cast<std::int64_t>(plains.size());
  std::vector<at::Tensor> xs;
  for (const auto& x : inputs) xs.push_back(x.detach().clone().set_requires_grad(x.is_floating_point()));
  at::Tensor fused_x = to_fused(inputs).detach().clone();
  if (fused_x.is_floating_point()) fused_x.set_requires_grad(true);

  const at::Tensor y = fused->forward(fused_x);
  std::vector<at::Tensor> grads;
  at::Tensor fused_grad = at::zeros_like(y);
  for (std::int64_t b = 0; b < models; ++b) {
    const at::Tensor yb = plains[b]->forward(xs[b]);
    // The same dtype as the plain module's: under autocast, the same ops run in the half type.
    EXPECT_EQ(slot_of(y, b).scalar_type(), yb.scalar_type());
    HFTA_EXPECT_CLOSE(slot_of(y, b), yb, dtype);
    const at::Tensor g = at::randn_like(yb);
    yb.backward(g);
    grads.push_back(g);
  }
  // The upstream gradient in the fused layout: scatter each model's through slot_of.
  {
    torch::NoGradGuard no_grad;
    for (std::int64_t b = 0; b < models; ++b) slot_of(fused_grad, b).copy_(grads[b]);
  }
  y.backward(fused_grad);
  if (check_input_grad && fused_x.is_floating_point()) {
    std::vector<at::Tensor> input_grads;
    for (const auto& x : xs) input_grads.push_back(x.grad());
    HFTA_EXPECT_CLOSE(fused_x.grad(), to_fused(input_grads), dtype);
  }
  for (std::int64_t b = 0; b < models; ++b) {
    const auto got = slot_gradients(fused, b);
    const auto want = plains[b]->named_parameters();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("slot " + std::to_string(b) + " gradient of " + got[i].first);
      EXPECT_EQ(got[i].first, want[i].key());
      HFTA_EXPECT_CLOSE(got[i].second, want[i].value().grad(), dtype);
    }
  }
}

/// Every parameter and buffer of a module, copied.
template <typename Module>
std::vector<at::Tensor> state_of(Module& m) {
  std::vector<at::Tensor> out;
  for (const auto& p : m->parameters()) out.push_back(p.detach().clone());
  for (const auto& b : m->buffers()) out.push_back(b.detach().clone());
  return out;
}

/// Slot b round-trips exactly, its state dict has the plain module's names and
/// shapes, and loading it leaves every other slot as it was (loading slot b's
/// old contents back restores the whole array bit for bit).
template <typename Fused, typename Plain>
void expect_round_trip(Fused& fused, Plain& plain, std::int64_t b) {
  const auto before = state_of(fused);
  auto original = fused->extract_slot(b);
  fused->load_slot(b, plain);
  auto back = fused->extract_slot(b);
  const auto want = plain->named_parameters();
  const auto got = back->named_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].key(), want[i].key());
    EXPECT_TRUE(at::equal(got[i].value(), want[i].value())) << got[i].key();
  }
  const auto wb = plain->named_buffers();
  const auto gb = back->named_buffers();
  ASSERT_EQ(gb.size(), wb.size());
  for (std::size_t i = 0; i < gb.size(); ++i) {
    EXPECT_EQ(gb[i].key(), wb[i].key());
    EXPECT_TRUE(at::equal(gb[i].value(), wb[i].value())) << gb[i].key();
  }
  fused->load_slot(b, original);
  const auto after = state_of(fused);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(at::equal(after[i], before[i])) << "loading slot " << b << " changed another slot (tensor " << i << ")";
  }
}

/// Slot b seeded with `seed` equals the plain module built after manual_seed(seed),
/// and seeding a slot leaves the global random stream where it was.
template <typename Fused, typename MakePlain>
void expect_seeded_slot(Fused& fused, std::int64_t b, std::uint64_t seed, const MakePlain& make_plain) {
  at::manual_seed(12345);
  const at::Tensor before = at::rand({4});
  at::manual_seed(12345);
  fused->init_slot(b, seed);
  EXPECT_TRUE(at::equal(at::rand({4}), before)) << "init_slot disturbed the global generator";
  at::manual_seed(seed);
  auto plain = make_plain();
  auto got = fused->extract_slot(b);
  const auto want = plain->named_parameters();
  const auto have = got->named_parameters();
  ASSERT_EQ(have.size(), want.size());
  for (std::size_t i = 0; i < have.size(); ++i) {
    EXPECT_TRUE(at::equal(have[i].value(), want[i].value().to(have[i].value().scalar_type())))
        << have[i].key();
  }
}

}  // namespace hfta::test
