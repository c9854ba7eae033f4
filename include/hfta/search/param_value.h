// A hyperparameter's value: a boolean, an integer, a real number or a string.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace hfta::search {

/// One concrete value of a hyperparameter, as sampled or as written in a sweep.
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

/// The value as a user would write it ("0.001", "adam", "true").
std::string to_string(const ParamValue& value);

/// The value inside a list shown to people ("{a, b}", "lr: 0.1, opt: adam"):
/// as to_string, but a string that would read as something else there (with
/// a comma, a colon, a brace or bracket, a quote, a line break or tab, spaces
/// at an end, empty, or as a number or boolean) in double quotes, escaped, so
/// that "0.5, 0.75" stays one value and "0.5" is no number.
std::string display(const ParamValue& value);

/// Name of the value's type for messages: "boolean", "integer", "number" or "string".
std::string type_name(const ParamValue& value);

/// True for integers and real numbers.
bool is_numeric(const ParamValue& value);

/// The value as a double; integers convert, other types throw std::invalid_argument.
double as_double(const ParamValue& value);

/// True for equal values, an integer and a real number of the same value included (1 and 1.0).
bool same(const ParamValue& a, const ParamValue& b);

}  // namespace hfta::search
