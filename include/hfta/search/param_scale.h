// The numeric scale a model of the search space sees a parameter in: log
// space for log distributions, with each integer or grid point owning the
// interval around it.
#pragma once

#include <utility>

#include "hfta/search/parameter_spec.h"

namespace hfta::search {

/// True for log_uniform, int_log_uniform and log-spaced quantized parameters.
bool log_scale(const ParameterSpec& p);

/// A numeric parameter's range on its scale (log space for log distributions).
/// Integers own the unit interval around them, and a linear grid's points the
/// step around them, so the ends are as likely as the middle.
std::pair<double, double> scaled_range(const ParameterSpec& p);

/// A numeric value on the parameter's scale.
double to_scale(const ParameterSpec& p, double x);

/// The value at `t` on the parameter's scale: rounded to an integer or onto
/// a quantized grid, and within [min, max].
ParamValue from_scale(const ParameterSpec& p, double t);

}  // namespace hfta::search
