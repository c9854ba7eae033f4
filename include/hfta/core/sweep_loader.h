// Loading and validating sweep files.
#pragma once

#include <cstddef>
#include <string>

#include "hfta/core/config_error.h"
#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// Reads and validates a sweep file. Throws ConfigError listing every problem,
/// each with the YAML path and line, when the file is unreadable, not YAML, or invalid.
/// `text`, when given, receives the file's bytes: the file is read once (a
/// pipe, /dev/stdin, has nothing left to read twice). A file larger than
/// `max_bytes` is refused unread: no sweep a user writes comes near 16 MiB
/// (/dev/zero or a wrong file would fill the memory); sweep.json, which run
/// writes indented from one, may be several times its size.
inline constexpr std::size_t kMaxSweepBytes = std::size_t{16} << 20;
SweepConfig load_sweep_file(const std::string& path, std::string* text = nullptr,
                            std::size_t max_bytes = kMaxSweepBytes);

/// Same as load_sweep_file for YAML text; `source` names it in messages.
SweepConfig load_sweep_string(const std::string& yaml, const std::string& source = "<sweep>");

}  // namespace hfta::core
