// Suggestions for misspelt names in messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hfta::core {

/// Edit distance (insertions, deletions, substitutions) between two strings.
size_t edit_distance(const std::string& a, const std::string& b);

/// The closest candidate when it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or "", ready to append to a message.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

/// `text` with each character past ASCII that prints as nothing or as a space
/// (a byte order mark, a no-break space, a zero-width space) written as <U+FEFF>.
std::string shown(const std::string& text);

/// `text` in lower case (ASCII letters).
std::string lowercase(std::string text);

/// " (written with a decimal point or an exponent: write 16)", for a whole
/// number written as a real (16.0, 1.6e1) where an integer is expected.
std::string write_as_integer(std::int64_t whole);

/// "a, b or c" for messages listing what was expected.
std::string join_alternatives(const std::vector<std::string>& words);

}  // namespace hfta::core
