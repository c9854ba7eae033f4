#include "hfta/core/config_error.h"

namespace hfta::core {
namespace {

std::string join(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += "\n";
    out += d.str();
  }
  return out;
}

}  // namespace

std::string Diagnostic::str() const {
  std::string out = file.empty() ? "<sweep>" : file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  return out + message;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace hfta::core
