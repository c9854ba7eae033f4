// Population based training's explore step: a new trial's configuration is its
// parent's, each hyperparameter that may change mid-training perturbed or drawn
// again (Ray Tune's PBT: resample_probability, perturbation_factors).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "hfta/search/search_space.h"

namespace hfta::search {

/// How explore() changes a value.
struct Perturbation {
  double resample_probability = 0.25;  ///< the chance a value is drawn again from its distribution
  std::vector<double> factors = {1.2, 0.8};  ///< else a number is multiplied by one of these (equal chances)
};

/// `parent` with each parameter named in `mutable_names` that is present in it
/// (for a name with branches, the branch that holds there) drawn again with
/// probability resample_probability, else perturbed: a real number times a
/// factor, clamped to its range (a quantized one onto its grid); an integer
/// the same, rounded, and moved by one where rounding undoes the factor; a
/// listed value to the value next to it in the list, up or down (clamped at
/// the ends). Constants and every other parameter keep the parent's value.
/// Each parameter draws from its own stream keyed by (seed, child, name).
Config explore(const Config& parent, const SearchSpace& space, const std::set<std::string>& mutable_names,
               const Perturbation& perturbation, std::uint64_t seed, std::int64_t child);

}  // namespace hfta::search
