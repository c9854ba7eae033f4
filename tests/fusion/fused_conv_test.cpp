#include <gtest/gtest.h>

#include <random>

#include "equivalence.h"
#include "hfta/fusion/fused_conv.h"
#include "hfta/fusion/layout.h"
#include "hfta/fusion/slot_state.h"

namespace hfta::fusion {
namespace {

using Param = std::tuple<at::ScalarType, std::int64_t>;

// Model b's inputs stacked into the conv layout, and model b's part of an output.
at::Tensor to_conv(const std::vector<at::Tensor>& xs) { return stack_to_conv(at::stack(xs)); }
std::function<at::Tensor(const at::Tensor&, std::int64_t)> slot_of(std::int64_t models) {
  return [models](const at::Tensor& y, std::int64_t b) { return conv_to_stack(y, models)[b]; };
}

template <typename Fused, typename Options>
void check(const Options& options, std::int64_t models, at::ScalarType dtype,
           const std::vector<std::int64_t>& input_shape) {
  for (Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
  SCOPED_TRACE(to_string(strategy));
  Fused fused(models, options, at::TensorOptions().dtype(dtype));
  fused->set_strategy(strategy);
  std::vector<typename Fused::Impl::Plain> plains;
  std::vector<at::Tensor> inputs;
  for (std::int64_t b = 0; b < models; ++b) {
    plains.emplace_back(options);
    plains.back()->to(dtype);
    fused->load_slot(b, plains.back());
    inputs.push_back(at::randn(input_shape, at::TensorOptions().dtype(dtype)));
  }
  test::expect_equivalent(fused, plains, inputs, to_conv, slot_of(models), dtype);
  }
}

class FusedConvTest : public test::OpTest {};

TEST_P(FusedConvTest, Conv2dMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(1);
  check<FusedConv2d>(torch::nn::Conv2dOptions(3, 5, 3).padding(1), models, dtype, {2, 3, 8, 7});
  check<FusedConv2d>(torch::nn::Conv2dOptions(4, 6, {3, 2}).stride(2).dilation({1, 2}).groups(2).bias(false),
                     models, dtype, {3, 4, 9, 9});
  // Input channels in 8s: in float32, oneDNN's NCHW kernels rather than the channels-last path.
  check<FusedConv2d>(torch::nn::Conv2dOptions(8, 4, 3).padding(1), models, dtype, {2, 8, 6, 6});
  // Depthwise: in float32 channels-last or NCHW, as the strategy says.
  check<FusedConv2d>(torch::nn::Conv2dOptions(6, 6, 3).padding(1).groups(6), models, dtype, {2, 6, 7, 7});
}

// Random shapes from a seeded stream: channels, kernel, stride, padding,
// dilation and groups, with an input large enough for one output pixel.
TEST_P(FusedConvTest, RandomShapesMatchPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(4);
  std::mt19937 rng(static_cast<unsigned>(10 + models));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int draw = 0; draw < 3; ++draw) {
    const int groups = pick(1, 3), in = groups * pick(1, 4), out = groups * pick(1, 4);
    const int kernel = pick(1, 4), stride = pick(1, 2), padding = pick(0, kernel - 1), dilation = pick(1, 2);
    const int size = dilation * (kernel - 1) + 1 + pick(0, 6), n = pick(1, 4);
    SCOPED_TRACE(::testing::Message() << "in " << in << " out " << out << " kernel " << kernel << " stride " << stride
                                      << " padding " << padding << " dilation " << dilation << " groups " << groups
                                      << " size " << size << " batch " << n);
    check<FusedConv2d>(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).dilation(dilation)
                           .groups(groups).bias(draw != 1),
                       models, dtype, {n, in, size, size + pick(0, 3)});
    check<FusedConv1d>(torch::nn::Conv1dOptions(in, out, kernel).stride(stride).padding(padding).dilation(dilation)
                           .groups(groups),
                       models, dtype, {n, in, size});
    check<FusedConvTranspose2d>(torch::nn::ConvTranspose2dOptions(in, out, kernel).stride(stride).groups(groups)
                                    .output_padding(stride - 1).bias(draw != 2),
                                models, dtype, {n, in, pick(1, 5), pick(1, 5)});
  }
}

TEST_P(FusedConvTest, Conv1dMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(2);
  check<FusedConv1d>(torch::nn::Conv1dOptions(3, 4, 5).padding(2), models, dtype, {2, 3, 11});
  check<FusedConv1d>(torch::nn::Conv1dOptions(6, 3, 1).groups(3), models, dtype, {4, 6, 5});
}

TEST_P(FusedConvTest, ConvTranspose2dMatchesPlainModules) {
  const auto [dtype, models] = param();
  at::manual_seed(3);
  check<FusedConvTranspose2d>(torch::nn::ConvTranspose2dOptions(4, 3, 4).stride(2).padding(1),
                              models, dtype, {2, 4, 5, 5});
  check<FusedConvTranspose2d>(
      torch::nn::ConvTranspose2dOptions(4, 6, 3).stride(2).output_padding(1).groups(2).bias(false),
      models, dtype, {2, 4, 3, 4});
}

INSTANTIATE_TEST_SUITE_P(DtypesAndSizes, FusedConvTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kDouble, at::kBFloat16),
                                            ::testing::Values(1, 3, 8)));

TEST(FusedConv, SlotsRoundTripAndSeed) {
  for (const auto dtype : {at::kFloat, at::kDouble}) {
  SCOPED_TRACE(c10::toString(dtype));
  const auto to = at::TensorOptions().dtype(dtype);
  const auto o2 = torch::nn::Conv2dOptions(3, 4, 3);
  FusedConv2d conv(3, o2, to);
  torch::nn::Conv2d plain(o2);
  plain->to(dtype);
  test::expect_round_trip(conv, plain, 2);
  EXPECT_EQ(slot_state_dict(*conv, 0)[0].value().sizes(), plain->weight.sizes());
  test::expect_seeded_slot(conv, 1, 7, [&] { return torch::nn::Conv2d(o2); });

  const auto o1 = torch::nn::Conv1dOptions(2, 3, 3);
  FusedConv1d conv1(2, o1, to);
  torch::nn::Conv1d plain1(o1);
  plain1->to(dtype);
  test::expect_round_trip(conv1, plain1, 1);
  test::expect_seeded_slot(conv1, 0, 8, [&] { return torch::nn::Conv1d(o1); });

  const auto ot = torch::nn::ConvTranspose2dOptions(3, 2, 2);
  FusedConvTranspose2d deconv(4, ot, to);
  torch::nn::ConvTranspose2d plain_t(ot);
  plain_t->to(dtype);
  test::expect_round_trip(deconv, plain_t, 3);
  test::expect_seeded_slot(deconv, 2, 9, [&] { return torch::nn::ConvTranspose2d(ot); });
  }
}

// Model b of an array of `models`, under each strategy, gives bitwise the
// output and every gradient of an array of that model alone. A shared input
// (an image's first layer, forward_shared) is [N, C_in, ...] for every model.
template <typename Fused, typename Options>
void expect_bitwise_as_alone(const Options& options, const std::vector<std::int64_t>& shape,
                             std::int64_t models = 3, bool shared = false) {
  const std::int64_t in = shape[1], out = options.out_channels();
  for (Strategy strategy : {Strategy::kFused, Strategy::kPerModel}) {
    SCOPED_TRACE(std::to_string(in) + " to " + std::to_string(out) + " channels, " +
                 std::to_string(shape.back()) + " pixels wide, " + to_string(strategy) + (shared ? ", shared" : ""));
    Fused array(models, options);
    array->set_strategy(strategy);
    std::vector<std::int64_t> array_shape = shape;
    if (!shared) array_shape[1] = models * in;
    const at::Tensor x = at::randn(array_shape).requires_grad_(!shared);
    auto run = [shared](Fused& op, const at::Tensor& input) {
      return shared ? op->forward_shared(input) : op->forward(input);
    };
    const at::Tensor y = run(array, x);
    const at::Tensor gy = at::randn_like(y);
    y.backward(gy);
    // In the conv layout, contiguous at any B: the ops before read it so (a
    // channels-last one, summed over the pixels, once rounded differently at B = 8).
    if (!shared) EXPECT_TRUE(x.grad().is_contiguous()) << "input gradient's layout";
    for (std::int64_t b = 0; b < models; ++b) {
      Fused alone(1, options);
      alone->load_slot(0, array->extract_slot(b));
      const at::Tensor xb = shared ? x : x.detach().narrow(1, b * in, in).contiguous().requires_grad_(true);
      const at::Tensor yb = run(alone, xb);
      yb.backward(gy.narrow(1, b * out, out).contiguous());
      EXPECT_TRUE(at::equal(yb, y.narrow(1, b * out, out))) << "output of model " << b;
      if (!shared) {
        EXPECT_TRUE(at::equal(xb.grad(), x.grad().narrow(1, b * in, in))) << "input gradient of model " << b;
      }
      const std::int64_t rows = alone->weight.size(0);
      EXPECT_TRUE(at::equal(alone->weight.grad(), array->weight.grad().narrow(0, b * rows, rows)))
          << "weight gradient of model " << b;
      if (options.bias()) {
        EXPECT_TRUE(at::equal(alone->bias.grad(), array->bias.grad().narrow(0, b * out, out)))
            << "bias gradient of model " << b;
      }
    }
  }
}

// A model's numbers must not depend on the size of its array, or a fused sweep
// drifts from `--fusion off` (one model per array), and compaction or a resume
// into another array would move a trial: in float32 on CPU each model's output
// and every gradient equal, bit for bit, those of an array of that model
// alone, on every path (fused_conv.h) and strategy. On two threads, as a
// sweep's one worker runs: oneDNN splits a grouped weight gradient by channel
// count there, so its sums differ more.
TEST(FusedConv, ModelsComputeBitwiseAsInAnArrayOfOne) {
  at::manual_seed(4);
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  using torch::nn::Conv2dOptions;
  const std::vector<std::pair<Conv2dOptions, std::vector<std::int64_t>>> cases{
      // oneDNN's kernels model by model, in place: one group, any channel count
      {Conv2dOptions(6, 16, 5), {8, 6, 14, 14}},                      // LeNet-5's second
      {Conv2dOptions(3, 8, 4).stride(2).padding(1), {8, 3, 16, 16}},  // a colour image's first
      {Conv2dOptions(16, 16, 3).padding(1), {8, 16, 8, 8}},
      {Conv2dOptions(16, 32, 3).stride(2).padding(1).bias(false), {8, 16, 8, 8}},  // ResNet-18's
      {Conv2dOptions(3, 8, 3).stride(2), {4, 3, 8, 8}},  // the last pixel read by no window
      // channels-last: grouped, input channels per group not in 8s
      {Conv2dOptions(4, 6, 3).groups(2).bias(false), {4, 4, 9, 9}},
      {Conv2dOptions(16, 16, 3).stride(2).padding(1).groups(16).bias(false), {4, 16, 12, 12}},  // depthwise
      // the direct depthwise kernels
      {Conv2dOptions(16, 16, 3).padding(1).groups(16), {32, 16, 16, 16}},
      {Conv2dOptions(24, 24, 5).padding(2).groups(24).bias(false), {8, 24, 1, 1}},
      // pointwise: products per model
      {Conv2dOptions(8, 24, 1).bias(false), {8, 8, 8, 8}},
      {Conv2dOptions(16, 8, 1), {8, 16, 1, 1}},  // squeeze-and-excitation's, on pooled maps
      {Conv2dOptions(6, 10, 1), {4, 6, 5, 3}}};
  for (const auto& [options, shape] : cases) expect_bitwise_as_alone<FusedConv2d>(options, shape);
  expect_bitwise_as_alone<FusedConv1d>(torch::nn::Conv1dOptions(16, 24, 1), {8, 16, 32});  // PointNet's
  expect_bitwise_as_alone<FusedConv1d>(torch::nn::Conv1dOptions(16, 16, 5).padding(2), {8, 16, 32});
  expect_bitwise_as_alone<FusedConvTranspose2d>(torch::nn::ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1),
                                                {8, 16, 4, 4});  // DCGAN's generator
  // A first layer's shared input, in an array of eight (where one convolution
  // with all models' filters summed a weight gradient differently).
  expect_bitwise_as_alone<FusedConv2d>(Conv2dOptions(1, 8, 3).stride(2).padding(1), {32, 1, 32, 32}, 8, true);
  at::set_num_threads(threads);
}

TEST(FusedConv, TuneMeasuresBothStrategiesAndLeavesTheModuleAsItWas) {
  // Grouped, two input channels a group: channels-last, grouped or per model.
  FusedConv2d conv(4, torch::nn::Conv2dOptions(4, 6, 3).padding(1).groups(2));
  const at::Tensor x = at::randn({2, 16, 8, 8});
  const StrategyChoice choice = conv->tune(x);
  // Both ways were measured (what they measured is for the benchmark, not a test).
  EXPECT_TRUE(choice.seconds_of(Strategy::kFused) > 0);
  EXPECT_TRUE(choice.seconds_of(Strategy::kPerModel) > 0);
  EXPECT_EQ(choice.seconds.size(), 2u);
  EXPECT_EQ(conv->strategy(), choice.strategy);
  EXPECT_FALSE(conv->weight.grad().defined());  // tuning leaves no gradient behind
}

TEST(FusedConv, MeasuresOnlyWhereThereIsAChoice) {
  // Paths that compute one way: the direct depthwise kernels, products per
  // model, oneDNN's kernels model by model; and any array of one.
  const auto depthwise = torch::nn::Conv2dOptions(8, 8, 3).padding(1).groups(8).bias(false);
  EXPECT_TRUE(FusedConv2d(3, depthwise)->tune(at::randn({4, 24, 8, 8})).seconds.empty());
  EXPECT_TRUE(FusedConv2d(3, torch::nn::Conv2dOptions(8, 8, 1))->tune(at::randn({4, 24, 8, 8})).seconds.empty());
  EXPECT_TRUE(FusedConv2d(3, torch::nn::Conv2dOptions(8, 8, 3))->tune(at::randn({4, 24, 8, 8})).seconds.empty());
  FusedConv2d alone(1, torch::nn::Conv2dOptions(3, 4, 3));
  alone->tune_on_next_forward();  // a tuning request (the array trainer's) at B = 1
  alone->forward(at::randn({2, 3, 8, 8}));
  EXPECT_EQ(alone->strategy(), Strategy::kFused);
  // In float64 the generic path measures both.
  FusedConv2d f64(3, torch::nn::Conv2dOptions(8, 8, 3), at::TensorOptions().dtype(at::kDouble));
  EXPECT_EQ(f64->tune(at::randn({4, 24, 8, 8}, at::kDouble)).seconds.size(), 2u);
}

TEST(FusedConv, RejectsWhatItCannotFuse) {
  EXPECT_THROW(FusedConv2d(2, torch::nn::Conv2dOptions(1, 1, 3).padding_mode(torch::kReflect)),
               std::invalid_argument);
  FusedConv2d same(2, torch::nn::Conv2dOptions(1, 1, 3).padding(torch::kSame));
  EXPECT_THROW(same->forward(at::randn({1, 2, 5, 5})), std::invalid_argument);
}

}  // namespace
}  // namespace hfta::fusion
