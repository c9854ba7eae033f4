// How a fused op computes its B models. The batched kernel (one call for all B)
// is usually fastest, but not always on every device and shape: on the 2-core
// CPU, a grouped convolution of 64 models ran at 0.8x of 64 separate ones. Ops
// with an alternative measure both when the array is built and keep the faster.
#pragma once

#include <functional>

namespace hfta::fusion {

enum class Strategy {
  kFused,     ///< one batched kernel for all B models
  kPerModel,  ///< the plain kernel once per model, inside the same op
};

const char* to_string(Strategy s);

/// The strategy an op of this kind starts with on `device_is_cpu` devices, from
/// measurements (experiments/results/fused_ops_bench-cpu.md): on the CPU a
/// grouped convolution ran at 0.6-0.8x of one per model and a fused 2-D batch
/// norm at 0.8x, so those start per model there; everything else starts fused.
/// A fixed rule rather than a timing, so a run's numbers never depend on noise.
enum class OpKind { kConvolution, kBatchNorm2d, kOther };
Strategy default_strategy(OpKind op, bool device_is_cpu);

/// What a measurement chose, and what it measured (seconds per forward + backward).
struct StrategyChoice {
  Strategy strategy = Strategy::kFused;
  double fused_seconds = 0;
  double per_model_seconds = 0;
};

/// Times both steps (one warm-up, then the median of `repeats`, alternating so
/// that noise hits both alike) and picks the faster; ties go to kFused.
StrategyChoice choose_strategy(const std::function<void()>& fused,
                               const std::function<void()>& per_model, int repeats = 5);

}  // namespace hfta::fusion

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace hfta::fusion {

/// Measures `module`'s forward + backward on `example` under each strategy
/// (`use` switches it), keeps the faster, and leaves the module as it was:
/// gradients and buffers (running statistics) are restored.
StrategyChoice tune_strategy(torch::nn::Module& module, const at::Tensor& example,
                             const std::function<at::Tensor(const at::Tensor&)>& forward,
                             const std::function<void(Strategy)>& use, int repeats = 5);

}  // namespace hfta::fusion
