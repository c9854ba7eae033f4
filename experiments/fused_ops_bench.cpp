// Forward + backward of each fused op against the per-model loop (B plain
// LibTorch modules, one after another), for B = 1, 2, ..., 64, side by side in
// one run. Prints Google Benchmark's lines, then a table of loop/fused ratios
// (> 1: the fused op is faster). Usage: fused_ops_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn.h>

#include "hfta/fusion/fused_activation.h"
#include "hfta/fusion/fused_batch_norm.h"
#include "hfta/fusion/fused_conv.h"
#include "hfta/fusion/fused_dropout.h"
#include "hfta/fusion/fused_embedding.h"
#include "hfta/fusion/fused_layer_norm.h"
#include "hfta/fusion/fused_transformer_encoder_layer.h"
#include "hfta/fusion/fused_linear.h"
#include "hfta/fusion/fused_prelu.h"
#include "hfta/fusion/host_allocator.h"
#include "hfta/fusion/layout.h"

namespace {

using namespace hfta::fusion;
using Step = std::function<void()>;

// One op at one B: a fused step and a per-model-loop step, each forward + backward.
// `staged` is the loop in the array's order: every model's forward, then every
// backward. It tells how much of a gap between loop and array is that order
// (a model's backward no longer finds its forward's tensors in cache), which
// any array pays, rather than the fused op's own work.
struct Case {
  Step fused;
  Step loop;
  Step staged;
};

// Ops with a choice of strategy are timed both ways and keep the faster here, to
// show the best each op can do, as the engine does when it builds an array.
template <typename T, typename = void>
struct Tunable : std::false_type {};
template <typename T>
struct Tunable<T, std::void_t<decltype(std::declval<T&>()->tune(std::declval<at::Tensor>()))>>
    : std::true_type {};

// Forward + backward with a fixed upstream gradient (a loss would add its own cost).
void fwd_bwd(const at::Tensor& y, const at::Tensor& grad) { y.backward(grad); }

// Gradients are dropped before each step, as the engine's optimizers and the
// serial loop of throughput_bench do (PyTorch 2's zero_grad(set_to_none=True)):
// backward then hands each its fresh gradient instead of adding it to the last.
void drop_grads(torch::nn::Module& m, const at::Tensor& input) {
  for (auto& p : m.parameters()) p.mutable_grad().reset();
  if (input.requires_grad()) input.mutable_grad().reset();
}

template <typename Fused, typename Plain, typename MakeFused, typename MakePlain>
Case module_case(std::int64_t models, MakeFused make_fused, MakePlain make_plain,
                 std::vector<std::int64_t> plain_input, bool conv_layout, bool integer_input = false) {
  auto fused = std::make_shared<Fused>(make_fused(models));
  auto plains = std::make_shared<std::vector<Plain>>();
  auto inputs = std::make_shared<std::vector<at::Tensor>>();
  for (std::int64_t b = 0; b < models; ++b) {
    plains->push_back(make_plain());
    inputs->push_back(integer_input ? at::randint(0, 1000, plain_input, at::kLong)
                                    : at::randn(plain_input).set_requires_grad(true));
  }
  at::Tensor fused_input;
  if (integer_input) {
    fused_input = (*inputs)[0];
  } else {
    const at::Tensor stacked = at::stack(*inputs).detach();
    fused_input = (conv_layout ? stack_to_conv(stacked) : stacked).contiguous().set_requires_grad(true);
  }
  if constexpr (Tunable<Fused>::value) (*fused)->tune(fused_input);
  const at::Tensor y0 = (*fused)->forward(fused_input);
  const at::Tensor fused_grad = at::randn_like(y0);
  const at::Tensor plain_grad = at::randn_like((*plains)[0]->forward((*inputs)[0]));
  Case c;
  c.fused = [fused, fused_input, fused_grad] {
    drop_grads(**fused, fused_input);
    fwd_bwd((*fused)->forward(fused_input), fused_grad);
  };
  c.loop = [plains, inputs, plain_grad] {
    for (std::size_t b = 0; b < plains->size(); ++b) {
      drop_grads(*(*plains)[b], (*inputs)[b]);
      fwd_bwd((*plains)[b]->forward((*inputs)[b]), plain_grad);
    }
  };
  c.staged = [plains, inputs, plain_grad] {
    std::vector<at::Tensor> outputs, grads;
    for (std::size_t b = 0; b < plains->size(); ++b) {
      drop_grads(*(*plains)[b], (*inputs)[b]);
      outputs.push_back((*plains)[b]->forward((*inputs)[b]));
      grads.push_back(plain_grad);
    }
    torch::autograd::backward(outputs, grads);
  };
  return c;
}

struct Op {
  std::string name;
  std::function<Case(std::int64_t)> make;
};

std::vector<Op> ops() {
  using namespace torch::nn;
  return {
      {"linear_64_batch32", [](std::int64_t m) {
         return module_case<FusedLinear, Linear>(m, [](std::int64_t b) { return FusedLinear(b, 64, 64); },
                                                 [] { return Linear(64, 64); }, {32, 64}, false);
       }},
      {"linear_256_batch128", [](std::int64_t m) {
         return module_case<FusedLinear, Linear>(m, [](std::int64_t b) { return FusedLinear(b, 256, 256); },
                                                 [] { return Linear(256, 256); }, {128, 256}, false);
       }},
      {"conv2d_16c_16px_batch32", [](std::int64_t m) {
         const auto o = Conv2dOptions(16, 16, 3).padding(1);
         return module_case<FusedConv2d, Conv2d>(m, [o](std::int64_t b) { return FusedConv2d(b, o); },
                                                 [o] { return Conv2d(o); }, {32, 16, 16, 16}, true);
       }},
      {"conv2d_6to16c_14px_k5_batch32", [](std::int64_t m) {  // LeNet-5's second convolution
         const auto o = Conv2dOptions(6, 16, 5);
         return module_case<FusedConv2d, Conv2d>(m, [o](std::int64_t b) { return FusedConv2d(b, o); },
                                                 [o] { return Conv2d(o); }, {32, 6, 14, 14}, true);
       }},
      {"conv2d_dw_16c_16px_batch32", [](std::int64_t m) {  // MobileNetV3's depthwise convolutions
         const auto o = Conv2dOptions(16, 16, 3).padding(1).groups(16).bias(false);
         return module_case<FusedConv2d, Conv2d>(m, [o](std::int64_t b) { return FusedConv2d(b, o); },
                                                 [o] { return Conv2d(o); }, {32, 16, 16, 16}, true);
       }},
      {"conv2d_1to16c_32px_s2_batch64", [](std::int64_t m) {  // DCGAN discriminator's first
         const auto o = Conv2dOptions(1, 16, 4).stride(2).padding(1).bias(false);
         return module_case<FusedConv2d, Conv2d>(m, [o](std::int64_t b) { return FusedConv2d(b, o); },
                                                 [o] { return Conv2d(o); }, {64, 1, 32, 32}, true);
       }},
      {"conv1d_16c_64_batch32", [](std::int64_t m) {
         const auto o = Conv1dOptions(16, 16, 5).padding(2);
         return module_case<FusedConv1d, Conv1d>(m, [o](std::int64_t b) { return FusedConv1d(b, o); },
                                                 [o] { return Conv1d(o); }, {32, 16, 64}, true);
       }},
      {"convtranspose2d_16to8_batch32", [](std::int64_t m) {
         const auto o = ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1);
         return module_case<FusedConvTranspose2d, ConvTranspose2d>(
             m, [o](std::int64_t b) { return FusedConvTranspose2d(b, o); }, [o] { return ConvTranspose2d(o); },
             {32, 16, 8, 8}, true);
       }},
      {"batchnorm2d_16c_16px_batch32", [](std::int64_t m) {
         const auto o = BatchNormOptions(16);
         return module_case<FusedBatchNorm2d, BatchNorm2d>(
             m, [o](std::int64_t b) { return FusedBatchNorm2d(b, o); }, [o] { return BatchNorm2d(o); },
             {32, 16, 16, 16}, true);
       }},
      {"batchnorm1d_64_batch32", [](std::int64_t m) {
         const auto o = BatchNormOptions(64);
         return module_case<FusedBatchNorm1d, BatchNorm1d>(
             m, [o](std::int64_t b) { return FusedBatchNorm1d(b, o); }, [o] { return BatchNorm1d(o); },
             {32, 64}, false);
       }},
      {"layernorm_64_batch32x16", [](std::int64_t m) {
         const auto o = LayerNormOptions({64});
         return module_case<FusedLayerNorm, LayerNorm>(
             m, [o](std::int64_t b) { return FusedLayerNorm(b, o); }, [o] { return LayerNorm(o); },
             {32, 16, 64}, false);
       }},
      {"embedding_1000x64_batch32x16", [](std::int64_t m) {
         const auto o = EmbeddingOptions(1000, 64);
         return module_case<FusedEmbedding, Embedding>(
             m, [o](std::int64_t b) { return FusedEmbedding(b, o); }, [o] { return Embedding(o); },
             {32, 16}, false, /*integer_input=*/true);
       }},
      {"encoder_layer_64d_ff256_64x64", [](std::int64_t m) {
         // Sequences and batch both 64 long, so the fused [B, N, L, E] and the plain
         // [L, N, E] layouts do the same work.
         const auto o = TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).dropout(0.0);
         return module_case<FusedTransformerEncoderLayer, TransformerEncoderLayer>(
             m, [o](std::int64_t b) { return FusedTransformerEncoderLayer(b, o); },
             [o] { return TransformerEncoderLayer(o); }, {64, 64, 64}, false);
       }},
      {"dropout_256_batch128", [](std::int64_t m) {
         return module_case<FusedDropout, Dropout>(
             m, [](std::int64_t b) { return FusedDropout(std::vector<double>(b, 0.1), Layout::kMatmul); },
             [] { return Dropout(0.1); }, {128, 256}, false);
       }},
      {"prelu_16c_16px_batch32", [](std::int64_t m) {
         const auto o = PReLUOptions().num_parameters(16);
         return module_case<FusedPReLU, PReLU>(
             m, [o](std::int64_t b) { return FusedPReLU(b, o, Layout::kConv); }, [o] { return PReLU(o); },
             {32, 16, 16, 16}, true);
       }},
      {"maxpool2d_16c_16px_batch32", [](std::int64_t m) {
         const auto o = MaxPool2dOptions(2);
         return module_case<FusedMaxPool2d, MaxPool2d>(
             m, [o](std::int64_t) { return FusedMaxPool2d(o); }, [o] { return MaxPool2d(o); },
             {32, 16, 16, 16}, true);
       }},
  };
}

// Collects each benchmark's median time so the ratios can be printed together.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      // "op/mode/B=n/min_time:.../repeats:3_median" -> "op/mode/B=n"
      std::string name = run.benchmark_name();
      const auto cut = name.find("/min_time");
      if (cut != std::string::npos) name = name.substr(0, cut);
      seconds[name] = run.GetAdjustedRealTime();
    }
  }
  std::map<std::string, double> seconds;
};

}  // namespace

int main(int argc, char** argv) {
  configure_host_allocator();
  at::set_num_threads(1);  // the serial baseline and HFTA's reference numbers are single-threaded
  const std::vector<std::int64_t> sizes = {1, 2, 4, 8, 16, 32, 64};
  for (const auto& op : ops()) {
    for (std::int64_t b : sizes) {
      for (const std::string mode : {"loop", "staged", "fused"}) {
        benchmark::RegisterBenchmark((op.name + "/" + mode + "/B=" + std::to_string(b)).c_str(),
                                     [op, b, mode](benchmark::State& state) {
                                       at::manual_seed(0);
                                       const Case c = op.make(b);
                                       const Step& step = mode == "fused" ? c.fused : mode == "staged" ? c.staged : c.loop;
                                       for (int i = 0; i < 2; ++i) step();  // warm-up
                                       for (auto _ : state) step();
                                     })
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.05)
            ->Repetitions(3)
            ->ReportAggregatesOnly(true);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  auto table = [&](const std::string& numerator, const std::string& denominator, const std::string& title) {
    std::cout << "\n" << numerator << "/" << denominator << " time ratio " << title << "\n";
    std::cout << std::left << std::setw(32) << "op";
    for (std::int64_t b : sizes) std::cout << std::right << std::setw(8) << ("B=" + std::to_string(b));
    std::cout << "\n";
    for (const auto& op : ops()) {
      if (!reporter.seconds.count(op.name + "/" + denominator + "/B=1")) continue;
      std::cout << std::left << std::setw(32) << op.name;
      for (std::int64_t b : sizes) {
        const std::string suffix = "/B=" + std::to_string(b);
        const auto n = reporter.seconds.find(op.name + "/" + numerator + suffix);
        const auto d = reporter.seconds.find(op.name + "/" + denominator + suffix);
        if (n == reporter.seconds.end() || d == reporter.seconds.end()) {  // (filtered out: not measured)
          std::cout << std::right << std::setw(8) << "-";
          continue;
        }
        std::cout << std::right << std::setw(8) << std::fixed << std::setprecision(2) << n->second / d->second;
      }
      std::cout << "\n";
    }
  };
  table("loop", "fused", "(forward + backward; > 1 means fused is faster)");
  table("staged", "fused",
        "(the loop in the array's order, all forwards then all backwards; > 1 means fused is faster)");
  return 0;
}
