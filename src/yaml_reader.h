// Typed reads from a YAML tree that record every problem with its path and line
// instead of stopping at the first, so one run of `validate` reports them all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hfta/core/config_error.h"
#include "hfta/search/param_value.h"

namespace hfta::core {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  /// Records a problem at `node` (its line and column) under `path`.
  void error(const YAML::Node& node, const std::string& path, const std::string& message);
  /// Records a problem with a position but no node (e.g. a parse error).
  void error_at(const YAML::Mark& mark, const std::string& path, const std::string& message);

  bool ok() const { return diagnostics_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const std::string& file() const { return file_; }

  /// Checks `node` is a mapping whose keys are all in `allowed` (each at most once).
  /// Unknown keys are reported with a did-you-mean; `context` ends the message.
  bool check_mapping(const YAML::Node& node, const std::string& path,
                     const std::vector<std::string>& allowed, const std::string& context = "");

  /// True when `key` is a non-empty plain name; reports it otherwise.
  bool check_key(const YAML::Node& key, const std::string& path);

  /// The child `key` of a mapping (nullopt when absent), reporting it when missing and `required`.
  std::optional<YAML::Node> child(const YAML::Node& map, const std::string& path,
                                  const std::string& key, bool required);

  std::optional<std::string> read_string(const YAML::Node& node, const std::string& path);
  std::optional<std::int64_t> read_int(const YAML::Node& node, const std::string& path);
  std::optional<double> read_number(const YAML::Node& node, const std::string& path);
  std::optional<bool> read_bool(const YAML::Node& node, const std::string& path);
  /// A scalar as the type it reads as: quoted text is a string; true/false a
  /// boolean; then an integer, a number, or else a string.
  std::optional<search::ParamValue> read_value(const YAML::Node& node, const std::string& path);
  /// As read_value; where `fraction_list` (milestones), a list of numbers
  /// ([0.5, 0.75], as PyTorch's MultiStepLR takes them) or a text of fractions
  /// ("0.50, 0.75") reads as the text of each number's shortest form, "0.5,0.75",
  /// so that each way of writing one list is one value.
  std::optional<search::ParamValue> read_value(const YAML::Node& node, const std::string& path, bool fraction_list);
  /// One of `names`, reported with the alternatives (and a did-you-mean) otherwise.
  std::optional<size_t> read_enum(const YAML::Node& node, const std::string& path,
                                  const std::vector<std::string>& names);

 private:
  bool expect_scalar(const YAML::Node& node, const std::string& path, const char* expected);

  std::string file_;
  std::vector<Diagnostic> diagnostics_;
  /// Values handed out by child(), with their key's position (see error()).
  std::vector<std::pair<YAML::Node, YAML::Mark>> value_keys_;
};

/// " (quoted, so a string: write it without quotes)" for a quoted scalar that
/// unquoted would read as a number or a boolean; "" otherwise.
std::string quoted_value_hint(const YAML::Node& node);

/// "task.model" from "task" and "model"; "model" when the parent is the root.
std::string join_path(const std::string& parent, const std::string& key);

/// What a node is, for "expected a number, got a mapping".
std::string describe_node(const YAML::Node& node);

/// Applies YAML merge keys (`<<: *defaults`, or a list of such mappings),
/// which yaml-cpp 0.7 reads as a key named "<<": the merged mappings' entries
/// join the mapping (an earlier mapping's over a later one's, its own over
/// both), keeping their lines for error messages. In place, throughout `node`.
void apply_merge_keys(YAML::Node node);

}  // namespace hfta::core
