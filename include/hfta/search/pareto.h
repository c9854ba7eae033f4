// Several objectives at once (Optuna's `directions`): which results are
// better when no single number orders them. Non-dominated sorting with
// NSGA-II's crowding distance (Deb et al., 2002) gives one order that every
// multi-objective decision uses: a rung's promotions (as MO-ASHA's NSGA-II
// selection, Schmucker et al., 2021), TPE's good and bad groups (as Optuna's
// MOTPE, which breaks the last front's ties by hypervolume instead) and the
// order of the results' Pareto front.
#pragma once

#include <cstddef>
#include <vector>

#include "hfta/search/scheduler.h"

namespace hfta::search {

/// Whether values a dominate b: no worse in any objective, better in one.
bool dominates(const std::vector<double>& a, const std::vector<double>& b, const std::vector<Goal>& goals);

/// Each point's front: 0 for the points no other dominates, 1 for those only
/// front 0 dominates, and so on. Points must be finite; O(n log n) for two
/// objectives, O(objectives x n^2) for more.
std::vector<std::size_t> pareto_fronts(const std::vector<std::vector<double>>& points, const std::vector<Goal>& goals);

/// The points' order: by front, within a front the larger crowding distance
/// first (each objective's extremes count as infinitely far, so they lead),
/// then the smaller index.
std::vector<std::size_t> pareto_order(const std::vector<std::vector<double>>& points, const std::vector<Goal>& goals);

}  // namespace hfta::search
