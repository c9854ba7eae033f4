// How a fused op computes its B models. The batched kernel (one call for all B)
// is usually fastest, but not always on every device and shape: on the 2-core
// CPU, LeNet's second convolution ran grouped at 0.6x of one per model, while
// ResNet-18's ran grouped at 1.6x. Ops with an alternative measure both, in the
// shapes they really get, when an array is built, and keep the faster.
#pragma once

#include <functional>
#include <string>
#include <utility>

namespace hfta::fusion {

enum class Strategy {
  kFused,     ///< one batched kernel for all B models
  kPerModel,  ///< the plain kernel once per model, inside the same op
};

const char* to_string(Strategy s);
/// The strategy named by to_string; throws std::invalid_argument for other names.
Strategy strategy_from_string(const std::string& name);

/// An op with a choice of strategy. tune_on_next_forward() asks it to time both
/// on the next input it is given, then keep the faster.
class StrategicOp {
 public:
  virtual ~StrategicOp() = default;
  Strategy strategy() const { return strategy_; }
  void set_strategy(Strategy s) { strategy_ = s; }
  void tune_on_next_forward() { tune_requested_ = true; }
  /// Drops a request forward never took (the op was bypassed, as a convolution
  /// of a shared input is).
  void cancel_tune_request() { tune_requested_ = false; }

 protected:
  /// True once after tune_on_next_forward(): forward then tunes on its input.
  bool take_tune_request() { return std::exchange(tune_requested_, false); }
  Strategy strategy_ = Strategy::kFused;

 private:
  bool tune_requested_ = false;
};

/// What a measurement chose, and what it measured (seconds per forward + backward).
struct StrategyChoice {
  Strategy strategy = Strategy::kFused;
  double fused_seconds = 0;
  double per_model_seconds = 0;
};

/// Times both steps (one warm-up, then the median of `repeats`, alternating so
/// that noise hits both alike) and picks the faster; ties go to kFused. Stops
/// after two repeats when every time of one beats every time of the other by
/// 20%, or when their medians lie within 10%. `clock` (seconds) is a steady
/// clock when empty.
StrategyChoice choose_strategy(const std::function<void()>& fused, const std::function<void()>& per_model,
                               int repeats = 5, const std::function<double()>& clock = {});

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
