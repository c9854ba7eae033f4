// How a fused op computes its B models. The batched kernel (one call for all B)
// is usually fastest, but not always on every device and shape: on the 2-core
// CPU, LeNet's second convolution ran grouped at 0.6x of one per model, while
// ResNet-18's ran grouped at 1.6x. Ops with an alternative measure both, in the
// shapes they really get, when an array is built, and keep the faster.
//
// Every strategy gives each model bitwise what an array of that model alone
// gives (tested per op), so the choice changes only the time, never a trial's
// numbers.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hfta::fusion {

enum class Strategy {
  kFused,     ///< one batched kernel for all B models
  kPerModel,  ///< the plain kernel once per model, inside the same op
};

const char* to_string(Strategy s);
/// The strategy named by to_string; throws std::invalid_argument for other names.
Strategy strategy_from_string(const std::string& name);
/// Whether s computes all models in one call (kFused).
bool grouped(Strategy s);

/// An op with a choice of strategy. tune_on_next_forward() asks it to time its
/// candidates on the next input it is given, then keep the fastest.
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

/// What a measurement chose, and what it measured: the median seconds per
/// forward + backward of each candidate, in the order given.
struct StrategyChoice {
  Strategy strategy = Strategy::kFused;
  std::vector<std::pair<Strategy, double>> seconds;
  /// The seconds measured for s; 0 when s was not a candidate.
  double seconds_of(Strategy s) const;
};

struct Candidate {
  Strategy strategy;
  std::function<void()> step;
};

/// Times each candidate's step (one warm-up, then the median of up to
/// `repeats`, in turns so that noise hits all alike) and picks the fastest;
/// ties go to the earlier candidate. From the second round on, a candidate is
/// dropped when every time of the fastest beats every one of its times by 20%;
/// it stops when one is left, or when the medians left lie within 10%. `clock`
/// (seconds) is a steady clock when empty.
StrategyChoice choose_strategy(const std::vector<Candidate>& candidates, int repeats = 5,
                               const std::function<double()>& clock = {});

}  // namespace hfta::fusion

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace hfta::fusion {

/// Measures `module`'s forward + backward on `example` under each of
/// `strategies` (`use` switches it), keeps the fastest, and leaves the module as
/// it was: gradients and buffers (running statistics) are restored.
StrategyChoice tune_strategy(torch::nn::Module& module, const at::Tensor& example,
                             const std::function<at::Tensor(const at::Tensor&)>& forward,
                             const std::function<void(Strategy)>& use,
                             const std::vector<Strategy>& strategies = {Strategy::kFused, Strategy::kPerModel},
                             int repeats = 5);

}  // namespace hfta::fusion
