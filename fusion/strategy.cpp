#include "hfta/fusion/strategy.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <vector>

namespace hfta::fusion {

namespace {


double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Every time of one strategy beats every time of the other by a fifth: more
// repeats would not change the choice (the noise here is a few percent, and a
// late spike only slows one sample), so a large op stops tuning early.
bool decisive(const std::vector<double>& a, const std::vector<double>& b) {
  const auto [a_min, a_max] = std::minmax_element(a.begin(), a.end());
  const auto [b_min, b_max] = std::minmax_element(b.begin(), b.end());
  return *a_max * 1.2 < *b_min || *b_max * 1.2 < *a_min;
}

// Both strategies' medians within 10%: more repeats would refine a choice
// worth at most that much of one op, and they cost most on the ops where the
// strategies tie, the compute-bound ones: PointNet's widest convolution at
// B = 8 ran 12 times at 0.23 s (fused 0.239 s, per model 0.220 s), most of
// its array's 2.8 s of tuning.
bool tied(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = median(a), mb = median(b);
  return std::max(ma, mb) <= 1.1 * std::min(ma, mb);
}

}  // namespace

const char* to_string(Strategy s) { return s == Strategy::kFused ? "fused" : "per-model"; }

Strategy strategy_from_string(const std::string& name) {
  if (name == "fused") return Strategy::kFused;
  if (name == "per-model") return Strategy::kPerModel;
  throw std::invalid_argument("unknown strategy '" + name + "' (fused or per-model)");
}

StrategyChoice choose_strategy(const std::function<void()>& fused, const std::function<void()>& per_model,
                               int repeats, const std::function<double()>& clock) {
  const auto now = clock ? clock : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  auto seconds = [&now](const std::function<void()>& step) {
    const double start = now();
    step();
    return now() - start;
  };
  fused();
  per_model();
  std::vector<double> f, p;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    f.push_back(seconds(fused));
    p.push_back(seconds(per_model));
    if (f.size() >= 2 && (decisive(f, p) || tied(f, p))) break;
  }
  StrategyChoice choice;
  choice.fused_seconds = median(f);
  choice.per_model_seconds = median(p);
  choice.strategy = choice.per_model_seconds < choice.fused_seconds ? Strategy::kPerModel : Strategy::kFused;
  return choice;
}

}  // namespace hfta::fusion

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace hfta::fusion {

StrategyChoice tune_strategy(torch::nn::Module& module, const at::Tensor& example,
                             const std::function<at::Tensor(const at::Tensor&)>& forward,
                             const std::function<void(Strategy)>& use, int repeats) {
  std::vector<at::Tensor> grads, buffers;
  for (const auto& p : module.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
  for (const auto& b : module.buffers()) buffers.push_back(b.clone());

  const at::Tensor input =
      example.is_floating_point() ? example.detach().clone().set_requires_grad(true) : example;
  at::Tensor upstream;
  auto step = [&](Strategy s) {
    use(s);
    const at::Tensor y = forward(input);
    if (!upstream.defined()) upstream = at::ones_like(y);  // not randn: leave the global RNG alone
    y.backward(upstream);
  };
  const StrategyChoice choice = choose_strategy([&] { step(Strategy::kFused); },
                                                [&] { step(Strategy::kPerModel); }, repeats);
  {
    at::NoGradGuard no_grad;
    std::size_t i = 0;
    for (auto& p : module.parameters()) p.mutable_grad() = grads[i++];
    i = 0;
    for (auto& b : module.buffers()) b.copy_(buffers[i++]);
  }
  use(choice.strategy);
  return choice;
}

}  // namespace hfta::fusion
