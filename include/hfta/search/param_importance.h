// Which hyperparameters mattered: fANOVA over a random forest fitted to the
// results (as Optuna's default, FanovaImportanceEvaluator).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hfta/search/search_space.h"

namespace hfta::search {

/// What each parameter's value alone explains of a metric's variance.
struct ParamImportance {
  /// Each parameter's main effect as a share of all the parameters' main
  /// effects (summing to 1; Optuna's normalized importance), largest first,
  /// ties by name.
  std::vector<std::pair<std::string, double>> params;
  /// The main effects together, as a share of the metric's variance (the
  /// rest is the parameters' interactions).
  double main_effects = 0;
  /// The parameters not judged, each with why, by name (constants aside).
  std::vector<std::pair<std::string, std::string>> left_out;
};

/// The importance of the parameters of `space` that every configuration
/// holds and that can take more than one value, from results `values[i]` of
/// `configs[i]` (finite numbers); the others but constants are left_out. A parameter is
/// seen on its scale (param_scale.h: log space for log distributions; a
/// name's numeric branches over the union of their ranges, in log space where
/// all are log, else linear); a listed one as the index of its value, each
/// as wide. Nullopt, with `why`, where there is no parameter to judge or the
/// results do not vary (`left_out` says which were left out, and why).
/// Deterministic in `seed`.
std::optional<ParamImportance> param_importance(const std::vector<ParameterSpec>& space,
                                                const std::vector<Config>& configs, const std::vector<double>& values,
                                                std::uint64_t seed, std::string& why,
                                                std::vector<std::pair<std::string, std::string>>* left_out = nullptr);

}  // namespace hfta::search
