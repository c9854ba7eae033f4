// How one hyperparameter of a sweep is distributed, before any sampling.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hfta/search/param_value.h"

namespace hfta::search {

/// The distributions of the sweep format.
enum class Distribution {
  kUniform,        ///< real in [min, max]
  kLogUniform,     ///< real in [min, max], uniform in log space (min > 0)
  kIntUniform,     ///< integer in [min, max]
  kIntLogUniform,  ///< integer in [min, max], uniform in log space (min >= 1)
  kQuantized,      ///< real min + k*q in [min, max], optionally log-spaced
  kChoice,         ///< one of values
  kConst,          ///< always value
  kGrid,           ///< one of values; grid search takes the cross product
};

/// The name used in sweep files ("log_uniform").
const char* distribution_name(Distribution d);

/// Parses a name used in sweep files; nullopt when unknown.
std::optional<Distribution> distribution_from_name(const std::string& name);

/// Every distribution name, in declaration order (for messages and did-you-mean).
std::vector<std::string> distribution_names();

/// True for choice, const and grid: the distributions whose values are listed.
bool is_categorical(Distribution d);

/// A parameter exists only when every named parameter has one of the listed values.
struct Condition {
  std::string parameter;
  std::vector<ParamValue> values;
  bool operator==(const Condition& o) const { return parameter == o.parameter && values == o.values; }
};

/// One hyperparameter of a sweep: its distribution and the fields that distribution uses.
struct ParameterSpec {
  std::string name;
  Distribution distribution = Distribution::kConst;
  double min = 0.0;  ///< uniform, log_uniform, int_*, quantized
  double max = 0.0;
  double q = 0.0;          ///< quantized: the step
  bool log = false;        ///< quantized: log-spaced before rounding
  std::vector<ParamValue> values;  ///< choice, grid; const holds its one value here
  std::vector<double> probabilities;  ///< choice: each value's chance, summing to 1 (empty: equal chances)
  bool fuse = true;        ///< false: different values never share an array
  std::vector<Condition> when;     ///< empty: always present
  /// Branches: one name with a distribution per condition (lr per optimizer), as
  /// a list in the sweep file; this spec's index there, -1 where there is no list.
  /// Branches of a name have conditions that never hold together.
  int branch = -1;

  bool operator==(const ParameterSpec& o) const;
  bool operator!=(const ParameterSpec& o) const { return !(*this == o); }
};

/// Whether one of `specs` (a name's branches, or its one spec) exists in every
/// trial: a spec without conditions, or branches whose one condition each names
/// the same parameter P, which has no condition itself and is listed, and whose
/// values together hold every value of P (of `limits`, where given: the values
/// P takes in the trials asked about). `all`: every parameter of the sweep.
bool always_present(const std::vector<const ParameterSpec*>& specs, const std::vector<ParameterSpec>& all,
                    const std::vector<ParamValue>* limits = nullptr);

}  // namespace hfta::search
