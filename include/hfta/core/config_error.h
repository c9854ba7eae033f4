// The one error type for invalid user input: what is wrong, where, and what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace hfta::core {

/// One problem found in a sweep file.
struct Diagnostic {
  std::string file;     ///< the sweep file as the user named it
  std::string path;     ///< the YAML path, e.g. "parameters.lr.min"; empty for the whole file
  int line = 0;         ///< 1-based; 0 when unknown
  int column = 0;       ///< 1-based; 0 when unknown
  std::string message;  ///< what is wrong and what was expected

  /// "sweep.yaml:12:5: parameters.lr.min: ..." as compilers print errors.
  std::string str() const;
};

/// Thrown when a sweep is invalid; holds every problem found, in file order.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace hfta::core
