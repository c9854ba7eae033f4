// The brackets and rungs of Hyperband (Li et al., JMLR 2018) and successive halving,
// computed in integer arithmetic so that no bracket is lost to floating-point logs.
#pragma once

#include <cstdint>
#include <vector>

namespace hfta::search {

/// One rung: n trials, each trained to budget r (in budget units; may be fractional).
struct RungPlan {
  std::int64_t n = 0;
  double r = 0;
  bool operator==(const RungPlan& o) const { return n == o.n && r == o.r; }
};

/// One bracket: its index s and its rungs, smallest budget first. Rung i runs in
/// round first_round + i: a rung starts once every rung of earlier rounds is done.
struct BracketPlan {
  int s = 0;
  std::vector<RungPlan> rungs;
  int first_round = 0;
  int iteration = 0;  ///< which pass of Hyperband over its brackets (repeat_iterations)
  bool operator==(const BracketPlan& o) const {
    return s == o.s && rungs == o.rungs && first_round == o.first_round && iteration == o.iteration;
  }
};

/// eta^k, exactly. Throws std::overflow_error beyond 2^62.
std::int64_t int_pow(std::int64_t eta, int k);

/// s_max = floor(log_eta(R / r_min)): the largest s with r_min * eta^s <= R.
int hyperband_s_max(std::int64_t max_budget, std::int64_t min_budget, std::int64_t eta);

/// Bracket s of Hyperband: n = ceil((s_max+1)/(s+1) * eta^s), r = R eta^-s,
/// rung i has n_i = floor(n eta^-i) trials at r_i = r eta^i.
BracketPlan hyperband_bracket(int s, int s_max, std::int64_t max_budget, std::int64_t eta);

/// Every Hyperband bracket, s = s_max down to 0.
std::vector<BracketPlan> hyperband_brackets(std::int64_t max_budget, std::int64_t min_budget,
                                            std::int64_t eta);

/// Successive halving: one bracket of n trials from the smallest budget Hyperband
/// would use (R eta^-s_max) to R, keeping the best 1/eta at each rung.
BracketPlan successive_halving_bracket(std::int64_t n, std::int64_t max_budget,
                                       std::int64_t min_budget, std::int64_t eta);

/// Delays each bracket's start so that every bracket's last rung runs in the same
/// round (a bracket with k fewer rungs starts k rounds later). Hyperband's brackets
/// then train their rungs to the same budgets at the same time: rungs from r to
/// eta r of several brackets fuse into one array where they would each have
/// trained alone, in as many rounds as before (Pack's pack-aware Hyperband).
void align_bracket_ends(std::vector<BracketPlan>& brackets);

/// Hyperband's outer loop run `iterations` times: the brackets again, with new
/// trials, each pass starting in the round after the one before has ended, so a
/// model-based searcher proposes a pass's trials from every result before it.
void repeat_iterations(std::vector<BracketPlan>& brackets, std::int64_t iterations);

/// The trials the brackets start: their first rungs' trials, summed.
std::int64_t started_trials(const std::vector<BracketPlan>& brackets);

/// Budget units summed over every trial of every rung (sum of n_i * r_i), as Li et al. count it.
double total_budget(const std::vector<BracketPlan>& brackets);

/// Budget units actually trained when promoted trials resume from their checkpoint:
/// each rung trains its trials only from the previous rung's budget.
double trained_budget(const std::vector<BracketPlan>& brackets);

}  // namespace hfta::search
