#include "hfta/search/param_value.h"

#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace hfta::search {

std::string to_string(const ParamValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      // Shortest text that reads back as the same double.
      char buf[32];
      auto result = std::to_chars(buf, buf + sizeof(buf), d);
      return std::string(buf, result.ptr);
    }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, value);
}

std::string display(const ParamValue& value) {
  const auto* s = std::get_if<std::string>(&value);
  if (!s) return to_string(value);
  // (Read as a number or a boolean, it would pass for one: "0.5" beside 0.5.)
  char* end = nullptr;
  std::strtod(s->c_str(), &end);
  const bool number_like = !s->empty() && *end == '\0';
  const bool plain = !s->empty() && !number_like && *s != "true" && *s != "false" &&
                     s->find_first_of(",:{}[]\"'\n\t\r") == std::string::npos && s->front() != ' ' &&
                     s->back() != ' ';
  if (plain) return *s;
  std::string quoted = "\"";
  for (char c : *s) {
    if (c == '"' || c == '\\') quoted += std::string("\\") + c;
    else if (c == '\n') quoted += "\\n";
    else if (c == '\t') quoted += "\\t";
    else if (c == '\r') quoted += "\\r";
    else quoted += c;
  }
  return quoted + "\"";
}

std::string type_name(const ParamValue& value) {
  switch (value.index()) {
    case 0: return "boolean";
    case 1: return "integer";
    case 2: return "number";
    default: return "string";
  }
}

bool is_numeric(const ParamValue& value) {
  return std::holds_alternative<std::int64_t>(value) || std::holds_alternative<double>(value);
}

double as_double(const ParamValue& value) {
  if (auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&value)) return *d;
  throw std::invalid_argument("not a number: " + to_string(value));
}

bool same(const ParamValue& a, const ParamValue& b) {
  if (is_numeric(a) && is_numeric(b)) return as_double(a) == as_double(b);
  return a == b;
}

}  // namespace hfta::search
