#include "hfta/core/config_error.h"

#include "hfta/core/did_you_mean.h"

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

// Control characters a path or message echoes from the file, written out:
// a zero byte would end the printed report there, and a line break would
// split one problem over lines; and characters that print as nothing (a
// second byte order mark), so that a key that looks right shows what is wrong.
std::string printable(const std::string& text) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    }
  }
  return shown(out);
}

}  // namespace

std::string Diagnostic::str() const {
  std::string out = file.empty() ? "<sweep>" : file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!path.empty()) out += printable(path) + ": ";
  return out + printable(message);
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace hfta::core
