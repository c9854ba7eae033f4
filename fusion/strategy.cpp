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

// Every time of one strategy beats every time of another by a fifth: more
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

namespace {

struct Named {
  Strategy strategy;
  const char* name;
};
constexpr Named kNames[] = {{Strategy::kFused, "fused"}, {Strategy::kPerModel, "per-model"}};

}  // namespace

const char* to_string(Strategy s) {
  for (const auto& n : kNames) {
    if (n.strategy == s) return n.name;
  }
  return "unknown";
}

Strategy strategy_from_string(const std::string& name) {
  for (const auto& n : kNames) {
    if (name == n.name) return n.strategy;
  }
  throw std::invalid_argument("unknown strategy '" + name + "' (fused or per-model)");
}

bool grouped(Strategy s) { return s == Strategy::kFused; }

double StrategyChoice::seconds_of(Strategy s) const {
  for (const auto& [strategy, t] : seconds) {
    if (strategy == s) return t;
  }
  return 0;
}

StrategyChoice choose_strategy(const std::vector<Candidate>& candidates, int repeats,
                               const std::function<double()>& clock) {
  if (candidates.empty()) throw std::invalid_argument("choose_strategy: no candidates");
  const auto now = clock ? clock : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  auto seconds = [&now](const std::function<void()>& step) {
    const double start = now();
    step();
    return now() - start;
  };
  for (const auto& c : candidates) c.step();  // warm-up
  std::vector<std::vector<double>> times(candidates.size());
  std::vector<bool> in(candidates.size(), true);
  auto fastest = [&] {  // the lowest median still in; the earlier on a tie
    std::size_t best = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (in[i] && (best == candidates.size() || median(times[i]) < median(times[best]))) best = i;
    }
    return best;
  };
  for (int round = 0; round < std::max(1, repeats); ++round) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (in[i]) times[i].push_back(seconds(candidates[i].step));
    }
    if (round == 0) continue;
    const std::size_t best = fastest();
    bool all_tied = true;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!in[i] || i == best) continue;
      if (decisive(times[best], times[i])) {
        in[i] = false;
      } else if (!tied(times[best], times[i])) {
        all_tied = false;
      }
    }
    if (all_tied) break;
  }
  StrategyChoice choice;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    choice.seconds.emplace_back(candidates[i].strategy, median(times[i]));
  }
  choice.strategy = candidates[fastest()].strategy;
  return choice;
}

}  // namespace hfta::fusion

#include <ATen/ATen.h>
#include <torch/nn/module.h>

namespace hfta::fusion {

StrategyChoice tune_strategy(torch::nn::Module& module, const at::Tensor& example,
                             const std::function<at::Tensor(const at::Tensor&)>& forward,
                             const std::function<void(Strategy)>& use, const std::vector<Strategy>& strategies,
                             int repeats) {
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
  std::vector<Candidate> candidates;
  for (Strategy s : strategies) candidates.push_back({s, [&step, s] { step(s); }});
  const StrategyChoice choice = choose_strategy(candidates, repeats);
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
