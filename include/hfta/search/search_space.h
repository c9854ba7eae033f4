// Sampling configurations from a sweep's parameters, conditions included.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hfta/search/parameter_spec.h"
#include "hfta/search/rng.h"

namespace hfta::search {

/// One trial's hyperparameters: name -> value, for the parameters active in it.
using Config = std::map<std::string, ParamValue>;

/// The seed a trial initialises its model and data order from: a pure function
/// of the sweep's seed and the trial id.
std::uint64_t trial_seed(std::uint64_t sweep_seed, std::int64_t trial_id);

/// How sample() draws: independent streams, or a quasi-random sequence.
enum class Sampling {
  kRandom,  ///< each parameter from its own stream of random numbers
  kQuasi,   ///< trial t is point t of a scrambled Halton sequence (halton.h), one dimension per drawn parameter
};

/// The parameters of a sweep, ordered so that every parameter comes after the
/// parameters its condition names. A name with branches (ParameterSpec::branch)
/// takes its value in a trial from the one branch whose condition holds there.
class SearchSpace {
 public:
  /// Throws std::invalid_argument when a condition names a missing parameter or forms a cycle.
  explicit SearchSpace(std::vector<ParameterSpec> parameters, Sampling sampling = Sampling::kRandom);

  /// Trial `trial_id`'s configuration: each parameter drawn from its own stream
  /// keyed by (sweep seed, trial id, parameter name), so adding one parameter
  /// leaves the others' values unchanged; grid parameters take their cycled() values.
  /// Sampling::kQuasi: each drawn parameter (neither const nor grid) from its
  /// coordinate of point `trial_id` (dimensions in parameters() order, so adding
  /// a parameter moves those after it to other coordinates), through draw_at().
  Config sample(std::uint64_t sweep_seed, std::int64_t trial_id) const;

  /// As sample(), but with `fixed`'s values where it has them (a point to
  /// evaluate, each value as_drawn()): every other parameter keeps the value
  /// sample() gives it, and conditions are judged on the values chosen.
  Config sample(std::uint64_t sweep_seed, std::int64_t trial_id, const Config& fixed) const;

  /// A grid parameter's value in trial `trial_id` where the method is not grid
  /// (as Ray Tune's grid_search under any scheduler): trial t takes combination
  /// t mod N of the grid parameters' N combinations, in grid()'s order (the last
  /// grid parameter varying fastest; a grid whose condition names another grid
  /// only in the combinations that meet it), so N consecutive trials cover the grid.
  ParamValue cycled(const ParameterSpec& parameter, std::int64_t trial_id) const;
  /// The grid parameters' combinations (1 without any; saturates past 2^62).
  std::int64_t grid_combinations() const { return grid_combinations_; }

  /// True when `parameter`'s conditions hold for the values chosen so far.
  static bool active(const ParameterSpec& parameter, const Config& chosen);

  /// One value drawn from a parameter's distribution.
  static ParamValue draw(const ParameterSpec& parameter, Rng& rng);
  /// The value at `u` in [0, 1) of a parameter's distribution (its inverse
  /// CDF): uniform u gives draw()'s distribution, stratified u spreads the
  /// values as evenly (an integer range or a choice in equal parts of [0, 1)).
  static ParamValue draw_at(const ParameterSpec& parameter, double u);

  /// Every combination of the choice, grid and const parameters, respecting
  /// conditions, in a fixed order. Throws std::invalid_argument if a parameter
  /// has no finite set of values.
  std::vector<Config> grid() const;

  /// The parameters, condition-ordered (ties by name).
  const std::vector<ParameterSpec>& parameters() const { return parameters_; }

 private:
  std::vector<ParameterSpec> parameters_;
  Sampling sampling_ = Sampling::kRandom;
  std::map<std::string, std::size_t> quasi_dimension_;  ///< Sampling::kQuasi: each drawn parameter's coordinate
  void enumerate_grid_combinations();

  std::map<std::string, std::int64_t> grid_stride_;  ///< trials between a grid parameter's values
  std::int64_t grid_combinations_ = 1;
  /// Grids nested by their conditions: each combination's value indices (-1: absent), rows of
  /// grid_position_.size(); shared, as spaces are copied into every searcher.
  std::shared_ptr<const std::vector<std::int32_t>> grid_table_;
  std::map<std::string, std::size_t> grid_position_;
};

/// `value` as `parameter` draws it (1 as 1.0 for a real range, a listed value
/// as listed, an integer for an integer range), or nullopt with `why` saying
/// why the parameter could never draw it.
std::optional<ParamValue> as_drawn(const ParameterSpec& parameter, const ParamValue& value, std::string& why);

/// Rounds x onto min + k*q within [min, max]. Whole min and q give an integer value.
ParamValue quantize(double x, const ParameterSpec& parameter);

/// The steps from min to a quantized parameter's last grid point: its largest
/// k with min + k*q <= max, give or take a billionth of a step (so that
/// 0 + 3 * 0.1 > 0.3 keeps 0.3).
double quantized_steps(const ParameterSpec& parameter);

}  // namespace hfta::search
