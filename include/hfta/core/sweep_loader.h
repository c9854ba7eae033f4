// Loading and validating sweep files.
#pragma once

#include <string>

#include "hfta/core/config_error.h"
#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// Reads and validates a sweep file. Throws ConfigError listing every problem,
/// each with the YAML path and line, when the file is unreadable, not YAML, or invalid.
/// `text`, when given, receives the file's bytes: the file is read once (a
/// pipe, /dev/stdin, has nothing left to read twice).
SweepConfig load_sweep_file(const std::string& path, std::string* text = nullptr);

/// Same as load_sweep_file for YAML text; `source` names it in messages.
SweepConfig load_sweep_string(const std::string& yaml, const std::string& source = "<sweep>");

}  // namespace hfta::core
