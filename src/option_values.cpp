#include "option_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <variant>

#include "hfta/core/did_you_mean.h"

namespace hfta::core {

using search::ParamValue;
using trainers::OptionType;

ParamValue default_value(const trainers::OptionSpec& option) {
  switch (option.type) {
    case OptionType::kBool: return option.default_value == "true";
    case OptionType::kInt: return static_cast<std::int64_t>(std::stoll(option.default_value));
    case OptionType::kReal: return std::stod(option.default_value);
    case OptionType::kString: return option.default_value;
  }
  return option.default_value;
}

std::optional<ParamValue> fit_option_value(const trainers::OptionSpec& option,
                                           const ParamValue& value, std::string* why) {
  // A string's or boolean's range text names its kind ("one of ...", "true or false").
  const bool numeric = option.type == OptionType::kInt || option.type == OptionType::kReal;
  std::string got = search::type_name(value) + " " + search::to_string(value);
  if (option.fractions && std::holds_alternative<std::string>(value)) got = "[" + search::to_string(value) + "]";
  const auto* real = std::get_if<double>(&value);
  if (option.type == OptionType::kInt && real && std::abs(*real) < 9e15 && *real == std::floor(*real)) {
    const auto whole = static_cast<std::int64_t>(*real);  // 100000, not 1e+05
    got = "number " + std::to_string(whole) + ".0" + write_as_integer(whole);
  }
  const std::string expected = std::string("expected ") + (numeric ? option_type_name(option.type) + std::string(" ") : "") +
                               option.range_text() + " for '" + option.name + "' (" + option.help + "), got " + got;
  std::optional<ParamValue> fitted;
  switch (option.type) {
    case OptionType::kBool:
      if (std::holds_alternative<bool>(value)) fitted = value;
      break;
    case OptionType::kInt:
      if (std::holds_alternative<std::int64_t>(value)) fitted = value;
      break;
    case OptionType::kReal:
      if (search::is_numeric(value)) fitted = search::as_double(value);
      break;
    case OptionType::kString:
      if (option.fractions && search::is_numeric(value)) {  // values: [0.5, 0.75] lists two values
        *why = expected + " (a list is one value: value: [0.5, 0.75], or values: [[0.3, 0.6], [0.5, 0.75]] to tune it)";
        return std::nullopt;
      }
      if (auto* s = std::get_if<std::string>(&value)) {
        if (option.fractions) {
          if (trainers::parse_fractions(*s)) fitted = value;
        } else if (std::find(option.allowed.begin(), option.allowed.end(), *s) != option.allowed.end()) {
          fitted = value;
        } else {
          *why = expected + did_you_mean(*s, option.allowed);
          return std::nullopt;
        }
      }
      break;
  }
  if (fitted && search::is_numeric(*fitted) && !option.in_range(search::as_double(*fitted))) {
    fitted.reset();
  }
  if (!fitted) {
    // "0.01" or "true" in quotes is a string that reads as what it looks like
    // once unquoted: said as the reader says it of a quoted scalar.
    // (Decimal numbers alone: strtod's inf, nan and hex arrive unquoted as strings.)
    const auto* text = std::get_if<std::string>(&value);
    static const std::regex decimal("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
    const bool number = text && std::regex_match(*text, decimal);
    const bool boolean = text && (*text == "true" || *text == "false");
    const bool unquoted_fits = (numeric && number) || (option.type == OptionType::kBool && boolean);
    *why = expected + (unquoted_fits ? " (quoted, so a string: write it without quotes)" : "");
  }
  return fitted;
}

std::string value_key(const ParamValue& v) {
  if (search::is_numeric(v)) {
    const double d = search::as_double(v);
    char text[64];
    std::snprintf(text, sizeof text, "n%a", d == 0 ? 0.0 : d);  // exact; -0 is 0, as == has it
    return text;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "btrue" : "bfalse";
  return "s" + search::to_string(v);
}

bool same_value(const ParamValue& a, const ParamValue& b) {
  if (search::is_numeric(a) && search::is_numeric(b)) {
    return search::as_double(a) == search::as_double(b);
  }
  return a == b;
}

}  // namespace hfta::core
