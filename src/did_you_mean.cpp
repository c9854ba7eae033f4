#include "hfta/core/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace hfta::core {
namespace {

// Characters past ASCII that print as nothing or as a space, so that a key
// holding one (a second byte order mark, a no-break space pasted from a web
// page) reads as a valid one: control characters, no-break and other odd
// spaces, zero-width characters and direction marks. (ASCII's control
// characters are config_error's to write out, as \x01.)
bool invisible(std::uint32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0xa0 || c == 0xad ||
         c == 0x34f || c == 0x61c || c == 0x115f || c == 0x1160 || c == 0x17b4 || c == 0x17b5 || c == 0x180e ||
         (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) || (c >= 0x205f && c <= 0x206f) ||
         c == 0x3000 || c == 0x3164 || c == 0xfeff || c == 0xffa0 || (c >= 0xfff9 && c <= 0xfffb);
}

// Calls `each(code point, its bytes)` over `text`'s UTF-8; a byte of no valid
// sequence is passed alone as U+FFFD (kept as it is, since that is visible).
template <typename Each>
void for_each_code_point(const std::string& text, Each each) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xe ? 3 : (byte >> 3) == 0x1e ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    std::uint32_t c = length == 1 ? byte : length == 2 ? byte & 0x1f : length == 3 ? byte & 0x0f : byte & 0x07;
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      c = (c << 6) | (next & 0x3f);
    }
    // Not overlong (C0 80 for U+0000), no surrogate, nothing past U+10FFFF.
    static constexpr std::uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && c >= kLeast[length] && !(c >= 0xd800 && c <= 0xdfff) && c <= 0x10ffff;
    const std::size_t taken = valid ? length : 1;
    each(valid ? c : 0xfffd, text.substr(i, taken));
    i += taken;
  }
}

std::string without_invisible(const std::string& text) {
  std::string out;
  for_each_code_point(text, [&](std::uint32_t c, const std::string& bytes) {
    if (!invisible(c)) out += bytes;
  });
  return out;
}

}  // namespace

std::string shown(const std::string& text) {
  std::string out;
  for_each_code_point(text, [&](std::uint32_t c, const std::string& bytes) {
    if (!invisible(c)) {
      out += bytes;
      return;
    }
    char code[16];
    std::snprintf(code, sizeof code, "<U+%04X>", static_cast<unsigned>(c));
    out += code;
  });
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // The word as it reads: without the invisible characters in it, and in
  // any letter case (SGD for sgd) is the word; else the closest, as typed.
  const std::string seen = without_invisible(word);
  if (seen != word && std::find(candidates.begin(), candidates.end(), seen) != candidates.end()) return seen;
  for (const auto& c : candidates) {
    if (c != word && lowercase(c) == lowercase(seen)) return c;
  }
  // A word cut short (val_acc) is the one candidate it begins, ahead of
  // another that a few edits make of it (val_auc).
  std::string begun;
  for (const auto& c : candidates) {
    if (seen.size() >= 3 && c.size() > seen.size() && lowercase(c).rfind(lowercase(seen), 0) == 0) {
      if (!begun.empty()) {
        begun.clear();
        break;
      }
      begun = c;
    }
  }
  if (!begun.empty()) return begun;
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(seen, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo changes a few characters; beyond a third of the word it is another word.
  const size_t limit = std::max<size_t>(2, std::max(seen.size(), best.size()) / 3);
  return best_distance <= limit && best_distance < std::max(seen.size(), best.size()) ? best : "";
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string match = closest_match(word, candidates);
  if (match.empty()) return "";
  const bool hidden = without_invisible(word) != word;
  return " (did you mean '" + match + "'?" + (hidden ? " it holds an invisible character, shown as <U+...>" : "") + ")";
}

std::string write_as_integer(std::int64_t whole) {
  return " (written with a decimal point or an exponent: write " + std::to_string(whole) + ")";
}

std::string join_alternatives(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? " or " : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace hfta::core
