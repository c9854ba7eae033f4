#include "yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "hfta/core/did_you_mean.h"

namespace hfta::core {
namespace {

// yaml-cpp tags plain (unquoted) scalars "?" and quoted ones "!".
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!"; }

std::optional<std::int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  // strtod also takes "nan", "inf" and hex floats; sweep values must be plain finite numbers.
  if (s.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'";
    }
    default: return "nothing";
  }
}

void YamlReader::error(const YAML::Node& node, const std::string& path,
                       const std::string& message) {
  error_at(node.Mark(), path, message);
}

void YamlReader::error_at(const YAML::Mark& mark, const std::string& path,
                          const std::string& message) {
  Diagnostic d;
  d.file = file_;
  d.path = path;
  // yaml-cpp marks are 0-based and -1 for nodes it did not read from the text.
  d.line = mark.line >= 0 ? mark.line + 1 : 0;
  d.column = mark.column >= 0 ? mark.column + 1 : 0;
  d.message = message;
  diagnostics_.push_back(std::move(d));
}

bool YamlReader::check_mapping(const YAML::Node& node, const std::string& path,
                               const std::vector<std::string>& allowed,
                               const std::string& context) {
  if (!node.IsMap()) {
    error(node, path, "expected a mapping (key: value lines), got " + describe_node(node));
    return false;
  }
  std::set<std::string> seen;
  bool ok = true;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      error(entry.first, path, "keys must be plain names");
      ok = false;
      continue;
    }
    const std::string key = entry.first.Scalar();
    const std::string key_path = join_path(path, key);
    if (!seen.insert(key).second) {
      error(entry.first, key_path, "duplicate key '" + key + "'");
      ok = false;
    } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      error(entry.first, key_path,
            "unknown key '" + key + "'" + did_you_mean(key, allowed) + "; expected " +
                join_alternatives(allowed) + context);
      ok = false;
    }
  }
  return ok;
}

std::optional<YAML::Node> YamlReader::child(const YAML::Node& map, const std::string& path,
                                            const std::string& key, bool required) {
  if (!map.IsMap()) return std::nullopt;
  // Look the key up by iterating: operator[] on a const node would hide duplicates
  // and cannot give a position for a missing key.
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.second;
  }
  if (required) error(map, join_path(path, key), "missing required key '" + key + "'");
  return std::nullopt;
}

bool YamlReader::expect_scalar(const YAML::Node& node, const std::string& path,
                               const char* expected) {
  if (node.IsScalar()) return true;
  error(node, path, std::string("expected ") + expected + ", got " + describe_node(node));
  return false;
}

std::optional<std::string> YamlReader::read_string(const YAML::Node& node,
                                                   const std::string& path) {
  if (!expect_scalar(node, path, "a string")) return std::nullopt;
  return node.Scalar();
}

std::optional<std::int64_t> YamlReader::read_int(const YAML::Node& node,
                                                 const std::string& path) {
  if (!expect_scalar(node, path, "an integer")) return std::nullopt;
  auto v = is_quoted(node) ? std::nullopt : parse_int(node.Scalar());
  if (!v) error(node, path, "expected an integer, got " + describe_node(node));
  return v;
}

std::optional<double> YamlReader::read_number(const YAML::Node& node, const std::string& path) {
  if (!expect_scalar(node, path, "a number")) return std::nullopt;
  auto v = is_quoted(node) ? std::nullopt : parse_number(node.Scalar());
  if (!v) error(node, path, "expected a finite number, got " + describe_node(node));
  return v;
}

std::optional<bool> YamlReader::read_bool(const YAML::Node& node, const std::string& path) {
  if (!expect_scalar(node, path, "true or false")) return std::nullopt;
  const std::string& s = node.Scalar();
  if (!is_quoted(node)) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  error(node, path, "expected true or false, got " + describe_node(node));
  return std::nullopt;
}

std::optional<search::ParamValue> YamlReader::read_value(const YAML::Node& node,
                                                         const std::string& path) {
  if (!expect_scalar(node, path, "a single value (number, string or boolean)")) {
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  if (is_quoted(node)) return search::ParamValue(s);
  if (s == "true" || s == "True" || s == "TRUE") return search::ParamValue(true);
  if (s == "false" || s == "False" || s == "FALSE") return search::ParamValue(false);
  if (auto i = parse_int(s)) return search::ParamValue(*i);
  if (auto d = parse_number(s)) return search::ParamValue(*d);
  if (s.empty() || s == "~" || s == "null") {
    error(node, path, "expected a value, got nothing");
    return std::nullopt;
  }
  return search::ParamValue(s);
}

std::optional<size_t> YamlReader::read_enum(const YAML::Node& node, const std::string& path,
                                            const std::vector<std::string>& names) {
  auto s = read_string(node, path);
  if (!s) return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *s) return i;
  }
  error(node, path,
        "'" + *s + "' is not one of " + join_alternatives(names) + did_you_mean(*s, names));
  return std::nullopt;
}

}  // namespace hfta::core
