#include "yaml_reader.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "hfta/core/did_you_mean.h"
#include "hfta/core/other_tools_names.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {
namespace {

const std::string kStrTag = "tag:yaml.org,2002:str";
const std::string kIntTag = "tag:yaml.org,2002:int";
const std::string kFloatTag = "tag:yaml.org,2002:float";
const std::string kBoolTag = "tag:yaml.org,2002:bool";

// yaml-cpp tags plain scalars "?", quoted ones "!", and keeps explicit tags (!!str ...).
bool is_text(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == kStrTag; }

// What a scalar holds when read as a number.
enum class Parsed { kNumber, kNotANumber, kOutOfRange };

bool looks_numeric(const std::string& s) {
  // strtod also takes "nan", "inf" and hex floats; sweep values must be plain decimal numbers.
  return !s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos &&
         s.find_first_of("0123456789") != std::string::npos;
}

Parsed parse_int(const std::string& s, std::int64_t& out) {
  if (!looks_numeric(s)) return Parsed::kNotANumber;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end != s.c_str() + s.size()) return Parsed::kNotANumber;
  if (errno == ERANGE) return Parsed::kOutOfRange;
  out = static_cast<std::int64_t>(v);
  return Parsed::kNumber;
}

Parsed parse_number(const std::string& s, double& out) {
  if (!looks_numeric(s)) return Parsed::kNotANumber;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return Parsed::kNotANumber;
  // Underflow to a subnormal is still a finite number; overflow is not.
  if (!std::isfinite(v) || (errno == ERANGE && v == 0 && s.find_first_of("123456789") !=
                                                            std::string::npos)) {
    return Parsed::kOutOfRange;
  }
  out = v;
  return Parsed::kNumber;
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
  YAML::Mark mark = node.Mark();
  // A value with nothing written has the next token's position, and an alias its
  // anchor's: report both at the key that holds them.
  for (const auto& [value, key_mark] : value_keys_) {
    if (value.is(node) && (node.IsNull() || mark.line < key_mark.line)) mark = key_mark;
  }
  error_at(mark, path, message);
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

bool YamlReader::check_key(const YAML::Node& key, const std::string& path) {
  if (key.IsScalar() && !key.Scalar().empty()) return true;
  error(key, path, "keys must be plain names, got " + describe_node(key));
  return false;
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
    if (!check_key(entry.first, path)) {
      ok = false;
      continue;
    }
    const std::string key = entry.first.Scalar();
    const std::string key_path = join_path(path, key);
    if (!seen.insert(key).second) {
      error(entry.first, key_path, "duplicate key '" + key + "'");
      ok = false;
    } else if (key == "<<" && entry.first.Tag() != "!") {
      // A merge key left by apply_merge_keys: a second one in the mapping (its
      // first was merged and removed), or one whose value is no mapping.
      error(entry.first, key_path,
            "a merge key '<<' that is not merged: a mapping takes one '<<', of a mapping (<<: *a) or a list of "
            "them (<<: [*a, *b])");
      ok = false;
    } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      // Another tool's name for a key here is known for sure; a typo is a guess.
      std::string hint = other_tools_name(NameKind::kKey, path, key);
      if (hint.empty()) hint = did_you_mean(key, allowed);
      error(entry.first, key_path, "unknown key '" + key + "'" + hint + "; expected " + join_alternatives(allowed) + context);
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
    if (entry.first.IsScalar() && entry.first.Scalar() == key) {
      value_keys_.emplace_back(entry.second, entry.first.Mark());
      return entry.second;
    }
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

namespace {

// A quoted scalar that would have been read as the value expected: the quotes
// made it a string, which users rarely mean.
std::string quoted_hint(const YAML::Node& node, bool would_read) {
  return is_text(node) && would_read ? " (quoted, so a string: write it without quotes)" : "";
}

}  // namespace

std::string quoted_value_hint(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  double unused = 0;
  return quoted_hint(node, s == "true" || s == "false" || parse_number(s, unused) == Parsed::kNumber);
}

std::optional<std::string> YamlReader::read_string(const YAML::Node& node,
                                                   const std::string& path) {
  if (!expect_scalar(node, path, "a string")) return std::nullopt;
  return node.Scalar();
}

std::optional<std::int64_t> YamlReader::read_int(const YAML::Node& node,
                                                 const std::string& path) {
  if (!expect_scalar(node, path, "an integer")) return std::nullopt;
  std::int64_t v = 0;
  const Parsed parsed = is_text(node) ? Parsed::kNotANumber : parse_int(node.Scalar(), v);
  if (parsed == Parsed::kOutOfRange) {
    error(node, path, "integer " + describe_node(node) + " is out of range (at most 9223372036854775807 in magnitude)");
  } else if (parsed == Parsed::kNotANumber) {
    std::int64_t unquoted = 0;
    double real = 0;
    // 64.0: a whole number, but not written as one.
    const bool whole = !is_text(node) && parse_number(node.Scalar(), real) == Parsed::kNumber &&
                       real == std::floor(real) && std::abs(real) < 9e15;
    error(node, path, "expected an integer, got " + describe_node(node) +
                          (whole ? write_as_integer(static_cast<std::int64_t>(real))
                                 : quoted_hint(node, parse_int(node.Scalar(), unquoted) == Parsed::kNumber)));
  }
  if (parsed != Parsed::kNumber) return std::nullopt;
  return v;
}

std::optional<double> YamlReader::read_number(const YAML::Node& node, const std::string& path) {
  if (!expect_scalar(node, path, "a number")) return std::nullopt;
  double v = 0;
  const Parsed parsed = is_text(node) ? Parsed::kNotANumber : parse_number(node.Scalar(), v);
  if (parsed == Parsed::kOutOfRange) {
    error(node, path, "number " + describe_node(node) + " is out of range");
  } else if (parsed == Parsed::kNotANumber) {
    double unquoted = 0;
    error(node, path, "expected a finite number, got " + describe_node(node) +
                          quoted_hint(node, parse_number(node.Scalar(), unquoted) == Parsed::kNumber));
  }
  if (parsed != Parsed::kNumber) return std::nullopt;
  return v;
}

std::optional<bool> YamlReader::read_bool(const YAML::Node& node, const std::string& path) {
  if (!expect_scalar(node, path, "true or false")) return std::nullopt;
  const std::string& s = node.Scalar();
  if (!is_text(node)) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  error(node, path, "expected true or false, got " + describe_node(node) +
                        quoted_hint(node, s == "true" || s == "false"));
  return std::nullopt;
}

std::optional<search::ParamValue> YamlReader::read_value(const YAML::Node& node,
                                                         const std::string& path) {
  if (!expect_scalar(node, path, "a single value (number, string or boolean)")) {
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  const std::string& tag = node.Tag();
  if (is_text(node)) return search::ParamValue(s);
  if (tag == kBoolTag) {
    if (auto b = read_bool(node, path)) return search::ParamValue(*b);
    return std::nullopt;
  }
  if (tag == kIntTag) {
    if (auto i = read_int(node, path)) return search::ParamValue(*i);
    return std::nullopt;
  }
  if (tag == kFloatTag) {
    if (auto d = read_number(node, path)) return search::ParamValue(*d);
    return std::nullopt;
  }
  if (s == "true" || s == "True" || s == "TRUE") return search::ParamValue(true);
  if (s == "false" || s == "False" || s == "FALSE") return search::ParamValue(false);
  std::int64_t i = 0;
  if (parse_int(s, i) == Parsed::kNumber) return search::ParamValue(i);
  double d = 0;
  switch (parse_number(s, d)) {
    case Parsed::kNumber: return search::ParamValue(d);
    case Parsed::kOutOfRange:
      error(node, path, "number " + describe_node(node) + " is out of range");
      return std::nullopt;
    case Parsed::kNotANumber: break;
  }
  if (s.empty() || s == "~" || s == "null") {
    error(node, path, "expected a value, got nothing");
    return std::nullopt;
  }
  // YAML's spellings of NaN and infinity are numbers, not strings, and none a
  // trial could take.
  static const std::set<std::string> non_finite = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf",
                                                   "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  if (non_finite.count(s)) {
    const bool nan = s.find('a') != std::string::npos || s.find('A') != std::string::npos;
    error(node, path, "expected a finite value, got " + s + (nan ? " (not a number)" : " (infinity)") +
                          "; quote it for the string");
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
  std::string hint = other_tools_name(NameKind::kValue, path.substr(path.rfind('.') + 1), *s);
  if (hint.empty()) hint = did_you_mean(*s, names);
  error(node, path, "'" + *s + "' is not one of " + join_alternatives(names) + hint);
  return std::nullopt;
}

namespace {

// `seen`: where the collections already walked begin in the file. An alias
// names its anchor's node (and so its place), so a node is walked once however
// often it is named (aliases of aliases would otherwise multiply the walk),
// and never from inside itself; a set, as a file may hold 10^5 collections.
void apply_merge_keys(YAML::Node node, std::set<int>& seen) {
  if (!node.IsMap() && !node.IsSequence()) return;
  if (!seen.insert(node.Mark().pos).second) return;
  if (node.IsSequence()) {
    for (auto item : node) apply_merge_keys(item, seen);
    return;
  }
  std::set<std::string> own;
  std::vector<YAML::Node> merged;
  bool merge_key_seen = false, merges = false;
  for (auto entry : node) {
    apply_merge_keys(entry.second, seen);
    if (!entry.first.IsScalar()) continue;
    if (entry.first.Scalar() != "<<") {
      own.insert(entry.first.Scalar());
      continue;
    }
    if (merge_key_seen) continue;  // a second "<<" stays, reported as a duplicate key
    merge_key_seen = true;
    const YAML::Node& value = entry.second;
    merges = value.IsMap() || (value.IsSequence() && value.size() > 0);
    for (const auto& m : value) merges = merges && (value.IsMap() || m.IsMap());
    if (!merges) continue;  // not a merge: "<<" stays, reported as an unknown key
    if (value.IsMap()) merged.push_back(value);
    for (const auto& m : value) {
      if (value.IsSequence()) merged.push_back(m);
    }
  }
  if (!merges) return;
  node.remove("<<");  // the first, the one merged
  for (const auto& m : merged) {
    if (m.is(node)) continue;  // merged into itself: adds nothing (and is not read while it grows)
    for (const auto& entry : m) {
      if (entry.first.IsScalar() && own.insert(entry.first.Scalar()).second) node.force_insert(entry.first, entry.second);
    }
  }
}

}  // namespace

void apply_merge_keys(YAML::Node node) {
  std::set<int> seen;
  apply_merge_keys(std::move(node), seen);
}

std::optional<search::ParamValue> YamlReader::read_value(const YAML::Node& node, const std::string& path,
                                                         bool fraction_list) {
  if (!fraction_list) return read_value(node, path);
  auto shortest = [](const std::vector<double>& numbers) {
    std::string text;
    for (const double v : numbers) {
      std::array<char, 32> digits{};  // the shortest text that reads back as the same double
      const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), v).ptr;
      text += (text.empty() ? "" : ",") + std::string(digits.data(), end);
    }
    return text;
  };
  if (!node.IsSequence()) {
    auto v = read_value(node, path);
    const auto* text = v ? std::get_if<std::string>(&*v) : nullptr;
    if (const auto numbers = text ? trainers::parse_fractions(*text) : std::nullopt) return search::ParamValue(shortest(*numbers));
    return v;  // (what it sets says what is wrong with it)
  }
  std::vector<double> numbers;
  bool ok = node.size() > 0;
  if (!ok) error(node, path, "expected at least one number in the list, got an empty list");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const auto v = read_number(node[i], path + "[" + std::to_string(i) + "]");
    if (v) numbers.push_back(*v);
    ok = ok && v;
  }
  if (!ok) return std::nullopt;
  return search::ParamValue(shortest(numbers));
}

}  // namespace hfta::core
