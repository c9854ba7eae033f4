// Durations as the command line gives them (--time-limit): "90", "90s",
// "1.5m", "2h" or "1h30m". Parsed here, apart from any clock, so that what
// a user may write is checked by a unit test (tests/src/duration_test.cpp).
#pragma once

#include <optional>
#include <string>

namespace hfta::core {

/// Seconds in "90", "90s", "1.5m", "2h" or "1h30m" (units in that order, each
/// once; plain decimal numbers), or nullopt where `text` is no duration or
/// one past a double. "" is 0: no limit.
std::optional<double> duration_seconds(const std::string& text);

/// How a message names the duration `text` as given: "1h30m" as written, a
/// bare number of seconds with its unit ("90 s").
std::string duration_label(const std::string& text);

}  // namespace hfta::core
