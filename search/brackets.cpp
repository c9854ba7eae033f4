#include "hfta/search/brackets.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hfta::search {

std::int64_t int_pow(std::int64_t eta, int k) {
  std::int64_t out = 1;
  for (int i = 0; i < k; ++i) {
    if (out > (std::int64_t(1) << 62) / eta) throw std::overflow_error("eta^k overflows");
    out *= eta;
  }
  return out;
}

int hyperband_s_max(std::int64_t max_budget, std::int64_t min_budget, std::int64_t eta) {
  if (eta < 2 || min_budget < 1 || max_budget < min_budget) {
    throw std::invalid_argument("hyperband needs eta >= 2 and 1 <= min budget <= max budget");
  }
  int s = 0;
  std::int64_t reach = min_budget;  // r_min * eta^s
  while (reach <= max_budget / eta) {
    reach *= eta;
    ++s;
  }
  return s;
}

BracketPlan hyperband_bracket(int s, int s_max, std::int64_t max_budget, std::int64_t eta) {
  BracketPlan bracket;
  bracket.s = s;
  const std::int64_t eta_s = int_pow(eta, s);
  // ceil((s_max + 1) * eta^s / (s + 1)) without floating point.
  const std::int64_t n = ((s_max + 1) * eta_s + s) / (s + 1);
  for (int i = 0; i <= s; ++i) {
    RungPlan rung;
    rung.n = n / int_pow(eta, i);
    // r_i = R eta^(i-s): one division, so powers of eta give exact budgets.
    rung.r = static_cast<double>(max_budget) / static_cast<double>(int_pow(eta, s - i));
    bracket.rungs.push_back(rung);
  }
  return bracket;
}

std::vector<BracketPlan> hyperband_brackets(std::int64_t max_budget, std::int64_t min_budget,
                                            std::int64_t eta) {
  const int s_max = hyperband_s_max(max_budget, min_budget, eta);
  std::vector<BracketPlan> out;
  for (int s = s_max; s >= 0; --s) out.push_back(hyperband_bracket(s, s_max, max_budget, eta));
  return out;
}

BracketPlan successive_halving_bracket(std::int64_t n, std::int64_t max_budget,
                                       std::int64_t min_budget, std::int64_t eta) {
  if (n < 1) throw std::invalid_argument("successive halving needs at least one trial");
  const int s = hyperband_s_max(max_budget, min_budget, eta);
  BracketPlan bracket;
  bracket.s = s;
  for (int i = 0; i <= s; ++i) {
    RungPlan rung;
    // Too few trials to fill a higher rung: the best one still goes on, so
    // that some trial reaches the full budget.
    rung.n = std::max<std::int64_t>(1, n / int_pow(eta, i));
    rung.r = static_cast<double>(max_budget) / static_cast<double>(int_pow(eta, s - i));
    bracket.rungs.push_back(rung);
  }
  return bracket;
}

void align_bracket_ends(std::vector<BracketPlan>& brackets) {
  std::size_t longest = 0;
  for (const auto& b : brackets) longest = std::max(longest, b.rungs.size());
  for (auto& b : brackets) b.first_round = static_cast<int>(longest - b.rungs.size());
}

void repeat_iterations(std::vector<BracketPlan>& brackets, std::int64_t iterations) {
  if (iterations < 1) throw std::invalid_argument("Hyperband needs at least one iteration");
  int rounds = 0;  // one pass's rounds: its last rung's round, plus one
  for (const auto& b : brackets) rounds = std::max(rounds, b.first_round + static_cast<int>(b.rungs.size()));
  const std::vector<BracketPlan> pass = brackets;
  for (std::int64_t k = 1; k < iterations; ++k) {
    for (BracketPlan b : pass) {
      b.first_round += static_cast<int>(k) * rounds;
      b.iteration = static_cast<int>(k);
      brackets.push_back(std::move(b));
    }
  }
}

std::int64_t started_trials(const std::vector<BracketPlan>& brackets) {
  std::int64_t n = 0;
  for (const auto& b : brackets) n += b.rungs.front().n;
  return n;
}

double total_budget(const std::vector<BracketPlan>& brackets) {
  double sum = 0;
  for (const auto& b : brackets) {
    for (const auto& r : b.rungs) sum += static_cast<double>(r.n) * r.r;
  }
  return sum;
}

double trained_budget(const std::vector<BracketPlan>& brackets) {
  double sum = 0;
  for (const auto& b : brackets) {
    double previous = 0;
    for (const auto& r : b.rungs) {
      sum += static_cast<double>(r.n) * (r.r - previous);
      previous = r.r;
    }
  }
  return sum;
}

}  // namespace hfta::search
