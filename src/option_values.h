// Checking values against the options and hyperparameters the trainers declare.
#pragma once

#include <optional>
#include <string>

#include "hfta/search/param_value.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {

/// The option's default as a typed value.
search::ParamValue default_value(const trainers::OptionSpec& option);

/// `value` converted to the option's type (an integer for a real option becomes
/// a double), or nullopt with `why` saying what was expected.
std::optional<search::ParamValue> fit_option_value(const trainers::OptionSpec& option,
                                                   const search::ParamValue& value,
                                                   std::string* why);

/// True when both are the same value; integers and reals compare by number.
bool same_value(const search::ParamValue& a, const search::ParamValue& b);

/// A text equal for two values exactly where same_value holds: a key to find
/// repeats among many values in one lookup each.
std::string value_key(const search::ParamValue& v);

}  // namespace hfta::core
