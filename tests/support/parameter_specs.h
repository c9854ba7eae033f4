// Parameters as tests of the search side write them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hfta/search/parameter_spec.h"

namespace hfta::search::test {

/// A parameter over [min, max].
inline ParameterSpec range(const std::string& name, Distribution d, double min, double max) {
  ParameterSpec p;
  p.name = name;
  p.distribution = d;
  p.min = min;
  p.max = max;
  return p;
}

/// A parameter of listed values (choice, grid or const).
inline ParameterSpec listed(const std::string& name, Distribution d, std::vector<ParamValue> values) {
  ParameterSpec p;
  p.name = name;
  p.distribution = d;
  p.values = std::move(values);
  return p;
}

}  // namespace hfta::search::test
