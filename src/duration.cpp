#include "hfta/core/duration.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace hfta::core {

std::optional<double> duration_seconds(const std::string& text) {
  if (text.empty()) return 0.0;
  static const std::pair<char, double> units[] = {{'h', 3600}, {'m', 60}, {'s', 1}};
  double total = 0;
  std::size_t next_unit = 0, at = 0;
  while (at < text.size()) {
    // A plain decimal number: digits and at most one point (no sign, exponent or hex).
    const std::size_t start = at;
    while (at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) || text[at] == '.')) ++at;
    const std::string number = text.substr(start, at - start);
    if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) return std::nullopt;
    errno = 0;
    const double n = std::strtod(number.c_str(), nullptr);  // no throw, as stod's out_of_range
    if (errno == ERANGE) return std::nullopt;  // past a double, or a nonzero so small it would read as 0: no limit
    if (at == text.size()) {  // a bare number: seconds, alone
      if (next_unit > 0) return std::nullopt;
      total += n;
      break;
    }
    while (next_unit < std::size(units) && units[next_unit].first != text[at]) ++next_unit;
    if (next_unit == std::size(units)) return std::nullopt;
    total += n * units[next_unit++].second;
    ++at;
  }
  if (!std::isfinite(total) || total < 0) return std::nullopt;
  return total;
}

std::string duration_label(const std::string& text) {
  const bool bare = text.find_first_of("hms") == std::string::npos;
  return bare ? text + " s" : text;
}

}  // namespace hfta::core
