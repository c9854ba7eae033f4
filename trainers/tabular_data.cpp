#include "hfta/trainers/tabular_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <ATen/ATen.h>

#include "hfta/trainers/catalog.h"

namespace hfta::trainers {
namespace {

// The split's own seed, not the sweep's: every sweep on a file sees the same
// validation rows, so their results compare.
constexpr std::uint64_t kSplitSeed = 20260601;

// A file larger than this is no table a CPU sweep tunes an MLP on; a wrong
// path (a disk image) would fill the memory.
constexpr std::int64_t kMaxTableBytes = std::int64_t{2} << 30;

// Without the spaces and tabs around it (and a carriage return that ended
// the file's last line without a line feed).
std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const std::size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// One field's text as a finite number, or nullopt; `range`, when given, is
// set where it is a number beyond a double's range (1e400). One too small for
// a double (1e-400) is read as the nearest, 0 or a subnormal, as pandas reads it.
std::optional<double> number(const std::string& field, bool* range = nullptr) {
  std::string t = trimmed(field);
  if (t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+') t.erase(0, 1);
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range && end == t.data() + t.size()) {
    const double nearest = std::strtod(t.c_str(), nullptr);  // (±HUGE_VAL past the top, 0 or subnormal below)
    if (std::fabs(nearest) < 1) v = nearest, ec = std::errc();
  }
  if (range) *range = ec == std::errc::result_out_of_range && end == t.data() + t.size();
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string lower(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  return t;
}

// The spellings of a missing value that tables carry (pandas, R, UCI's "?").
bool looks_missing(const std::string& field) {
  const std::string t = lower(trimmed(field));
  return t.empty() || t == "na" || t == "n/a" || t == "nan" || t == "-nan" || t == "null" || t == "none" || t == "?" ||
         t == "-";
}

// The byte where `text` stops being UTF-8, or npos.
std::size_t first_non_utf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return i;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 2) return i;
    }
    i += n;
  }
  return std::string::npos;
}

// "'alcohol' (column 3)" for messages.
std::string column_text(const std::string& name, std::size_t index) {
  return "'" + name + "' (column " + std::to_string(index + 1) + ")";
}

// One record of CSV text: its fields, and the line it starts on. Quoted
// fields may hold commas, line breaks and "" for a quote.
struct Record {
  std::vector<std::string> fields;
  int line = 0;
};

// Reads the record at text[at] into `r` (its strings reused), moving `at` and
// `line` past it; false at the end. Blank lines are skipped.
bool next_record(const std::string& text, std::size_t& at, int& line, Record& r, const std::string& name,
                 const std::string& part) {
  while (at < text.size()) {
    r.line = line;
    std::size_t n = 0;  // fields so far
    auto field = [&]() -> std::string& {
      if (r.fields.size() <= n) r.fields.emplace_back();
      return r.fields[n];
    };
    field().clear();
    bool quoted = false, was_quoted = false, blank = true;
    for (; at < text.size(); ++at) {
      const char c = text[at];
      if (quoted) {
        if (c == '"' && at + 1 < text.size() && text[at + 1] == '"') {
          field() += '"';
          ++at;
        } else if (c == '"') {
          quoted = false;
        } else {
          if (c == '\n') ++line;
          field() += c;
        }
        continue;
      }
      if (c == '"' && trimmed(field()).empty()) {
        quoted = was_quoted = true;
        field().clear();
        blank = false;
      } else if (c == ',') {
        ++n;
        field().clear();
        was_quoted = false;
        blank = false;
      } else if (c == '\n' || (c == '\r' && at + 1 < text.size() && text[at + 1] == '\n')) {
        at += c == '\r' ? 2 : 1;
        ++line;
        break;
      } else if (was_quoted && c != ' ' && c != '\t' && c != '\r') {
        throw TableError(part, name + ":" + std::to_string(line) + ": text after a quoted field's closing quote ('" +
                                   std::string(1, c) + "'); a quote inside a quoted field is written \"\"");
      } else if (!was_quoted) {
        field() += c;
        if (c != ' ' && c != '\t' && c != '\r') blank = false;
      }
    }
    if (quoted) throw TableError(part, name + ":" + std::to_string(r.line) + ": a quoted field has no closing quote");
    r.fields.resize(n + 1);
    if (!blank) return true;
  }
  return false;
}

// Integer labels that may be a measurement (kManyIntegerClasses), said where the classes fail.
std::string many_integers(const std::string& label, std::int64_t classes) {
  return "; '" + label + "' holds " + std::to_string(classes) +
         " different integers: if they are a measurement, set task.loss: mse to predict the number";
}

// What is wrong with a regression's target that is no finite number.
std::string target_problem(const std::string& label, const std::string& value) {
  bool range = false;
  number(value, &range);
  const std::string m = lower(value);
  const std::string start = "the target column '" + label + "' holds " + value;
  if (range) return start + ": beyond the range of a double (about 1.8e308); rescale the column";
  if (m == "inf" || m == "-inf" || m == "+inf" || m == "infinity" || m == "-infinity") {
    return start + ": an infinity; a regression's target must be finite";
  }
  return start + ": a regression (task.loss mse, l1 or huber) learns a number in every row; to classify, leave "
                 "task.loss out";
}

}  // namespace

Table parse_table(const std::string& text, const std::string& name, const std::string& label, const std::string& part,
                  bool numeric_label) {
  if (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0) {
    throw TableError(part, name + ": UTF-16 text (it starts with its byte-order mark); save it as UTF-8 CSV");
  }
  if (text.find('\0') != std::string::npos) {
    throw TableError(part, name + ": holds NUL (zero) bytes: not a CSV text file (a spreadsheet or a compressed file? "
                                  "save it as CSV)");
  }
  if (text.find('\r') != std::string::npos && text.find('\n') == std::string::npos) {
    throw TableError(part, name + ": its lines end in a carriage return alone (classic Mac OS); save it with LF or "
                                  "CRLF line endings");
  }
  if (const std::size_t bad = first_non_utf8(text); bad != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[bad])));
    throw TableError(part, name + ":" + std::to_string(line) + ": byte " + byte +
                               " is not UTF-8 (Latin-1 or Windows-1252 text, most likely); save the table as UTF-8");
  }
  std::size_t at = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // a byte-order mark (Excel's UTF-8 export)
  int line = 1;
  Record header;
  if (!next_record(text, at, line, header, name, part)) {
    throw TableError(part, name + ": empty; a table starts with a header row naming its columns");
  }
  std::vector<std::string> columns;
  std::map<std::string, std::size_t> seen;
  for (std::size_t c = 0; c < header.fields.size(); ++c) {
    const std::string col = trimmed(header.fields[c]);
    const std::string where = name + ":" + std::to_string(header.line) + ": ";
    if (col.empty()) {
      throw TableError(part, where + "column " + std::to_string(c + 1) + " of the header has no name" +
                                 (c == 0 ? " (pandas' to_csv writes its index there: save with index=False)" : ""));
    }
    if (auto [it, fresh] = seen.emplace(col, c); !fresh) {
      throw TableError(part, where + "two columns are named '" + col + "' (columns " + std::to_string(it->second + 1) +
                                 " and " + std::to_string(c + 1) + ")");
    }
    columns.push_back(col);
  }
  // A first row of numbers is data, not names: a file without its header.
  // Names that are numbers too are taken where the label is named among them,
  // or where they are pandas' 0, 1, 2, ... of an unnamed frame, or years.
  if (columns.size() > 1 && (label.empty() || !seen.count(label))) {
    std::vector<double> numbers;
    for (const auto& col : columns) {
      if (auto v = number(col)) numbers.push_back(*v);
    }
    bool counted = true, years = true;
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      counted = counted && numbers[i] == static_cast<double>(i);
      years = years && numbers[i] == std::floor(numbers[i]) && numbers[i] >= 1800 && numbers[i] <= 2200;
    }
    const bool distinct = std::set<double>(numbers.begin(), numbers.end()).size() == numbers.size();
    if (numbers.size() + 1 >= columns.size() && !counted && !(years && distinct)) {
      throw TableError(part, name + ":" + std::to_string(header.line) + ": the first row holds " + columns.front() +
                                 ", " + columns[1] +
                                 ", ...: a table starts with a header row naming its columns, not with data");
    }
  }
  if (columns.size() < 2) {
    for (const auto& [separator, said] : {std::pair{';', "semicolons"}, std::pair{'\t', "tabs"}}) {
      if (columns.front().find(separator) != std::string::npos) {
        throw TableError(part, name + ":" + std::to_string(header.line) + ": its fields are separated by " + said +
                                   "; a CSV table's are by commas (save it as CSV with commas)");
      }
    }
    throw TableError(part, name + ":" + std::to_string(header.line) + ": the header names " +
                               std::to_string(columns.size()) +
                               " column; a table needs a label column and at least one feature (fields are separated "
                               "by commas)");
  }
  std::size_t label_at = columns.size() - 1;
  if (!label.empty()) {
    auto it = seen.find(label);
    if (it == seen.end()) {
      std::string names;
      for (std::size_t c = 0; c < columns.size() && c < 12; ++c) names += (c ? ", " : "") + columns[c];
      if (columns.size() > 12) names += ", ... (" + std::to_string(columns.size()) + " in all)";
      // (A test table lacking the training table's label is the test table's problem.)
      throw TableError(part == "test" ? part : "label",
                       name + ":" + std::to_string(header.line) + ": no column is named '" + label + "'; the columns: " +
                           names,
                       columns);
    }
    label_at = it->second;
  }
  Table t;
  t.name = name;
  t.label = columns[label_at];
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c != label_at) t.features.push_back(columns[c]);
  }
  // Per column, the rows whose field read as a number: a column of numbers
  // with a stray text (a unit, a thousands separator) is no column of
  // categories, and is told so once every row is read.
  std::vector<std::int64_t> numbers_in(columns.size(), 0);
  std::int64_t records = 0;
  std::size_t text_column = columns.size();  // the column of the latest text field's problem
  static const std::string kTextHint = "\x01";  // where that problem's hint goes, once known
  // A row's values and label into `t`, or what is wrong with it.
  auto take = [&](const Record& row) -> std::string {
    const std::string where = name + ":" + std::to_string(row.line) + ": ";
    if (row.fields.size() != columns.size()) {
      return where + "the row holds " + std::to_string(row.fields.size()) + " fields; the header names " +
             std::to_string(columns.size()) + " columns";
    }
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string& field = row.fields[c];
      if (c == label_at) {
        const std::string l = trimmed(field);
        if (l.empty()) return where + "the row has no label (column " + column_text(t.label, c) + ")";
        if (const std::string m = lower(l);
            m == "na" || m == "n/a" || m == "#n/a" || m == "nan" || m == "null" || m == "none" || m == "?") {
          return where + "the row's label (column " + column_text(t.label, c) + ") is '" + l +
                 "': a missing value? every row needs its label; drop the row";
        }
        if (numeric_label && !number(l)) return where + target_problem(t.label, l);
        t.labels.push_back(l);
        continue;
      }
      bool range = false;
      if (auto v = number(field, &range)) {
        t.values.push_back(*v);
        ++numbers_in[c];
        continue;
      }
      std::string why = where + "column " + column_text(columns[c], c) + " holds '" + trimmed(field) + "', not a number";
      if (range) {
        why += ": beyond the range of a double (about 1.8e308); rescale the column";
      } else if (const std::string m = lower(trimmed(field));
                 m == "inf" || m == "-inf" || m == "+inf" || m == "infinity" || m == "-infinity") {
        why += ": an infinity; every value must be finite";
      } else if (looks_missing(field)) {
        why += ": a missing value? hfta-tune does not fill them in; fill them, or drop the row or the column";
      } else {
        text_column = c;
        why += kTextHint;
      }
      return why;
    }
    t.lines.push_back(row.line);
    return "";
  };
  // Every row is read: the first problem is said whole, and how many rows
  // after it have one, so that a user mends them in one go.
  std::string first;
  std::size_t first_text_column = columns.size();
  std::vector<int> others;
  Record row;
  while (next_record(text, at, line, row, name, part)) {
    ++records;
    text_column = columns.size();
    const std::string why = take(row);
    if (why.empty()) continue;
    if (first.empty()) {
      first = why;
      first_text_column = text_column;
    } else {
      others.push_back(row.line);
    }
  }
  if (const auto hint = first.find(kTextHint); hint != std::string::npos) {
    const std::int64_t numbers = numbers_in[first_text_column];
    first.replace(hint, kTextHint.size(),
                  2 * numbers >= records
                      ? ": the column holds numbers in " + std::to_string(numbers) + " of its " + std::to_string(records) +
                            " rows; write this one as a plain number (no unit, thousands separator or currency sign)"
                      : ": a column of categories? encode it as numbers (one 0/1 column per category) before tuning");
  }
  if (!first.empty()) {
    if (!others.empty()) {
      std::string lines;
      for (std::size_t i = 0; i < others.size() && i < 5; ++i) lines += (i ? ", " : "") + std::to_string(others[i]);
      first += " (and " + std::to_string(others.size()) + (others.size() == 1 ? " more row" : " more rows") +
               " with a problem: line" + (others.size() == 1 ? " " : "s ") + lines + (others.size() > 5 ? ", ..." : "") +
               ")";
    }
    throw TableError(part, first);
  }
  if (t.rows() == 0) throw TableError(part, name + ": holds a header row and no data rows");
  return t;
}

Table read_table(const std::string& path, const std::string& name, const std::string& label, const std::string& part,
                 std::string* bytes, bool numeric_label) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw TableError(part, name + ": " + std::strerror(errno));
  if (S_ISDIR(info.st_mode)) throw TableError(part, name + ": a directory, not a CSV file");
  if (!S_ISREG(info.st_mode)) throw TableError(part, name + ": not a regular file (a table is read from a file)");
  if (info.st_size > kMaxTableBytes) {
    throw TableError(part, name + ": " + std::to_string(info.st_size >> 20) + " MiB; a table is at most " +
                               std::to_string(kMaxTableBytes >> 20) + " MiB");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw TableError(part, name + ": cannot be read: " + std::strerror(errno));
  std::string read = text.str();
  Table t = parse_table(read, name, label, part, numeric_label);
  if (bytes) *bytes = std::move(read);
  return t;
}

std::int64_t default_validation_rows(std::int64_t rows) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(rows) / 5)));
}

namespace {

// A column's standardisation, worked in units of its largest magnitude so
// that neither the sum nor the squares overflow (a column of 1e200s has a
// finite deviation): value -> (value / unit - centre) / spread.
struct Standardiser {
  double unit = 1, centre = 0, spread = 1;
  /// The mean and scale a user applies: (value - mean) / scale.
  double mean() const { return centre * unit; }
  double scale() const { return spread * unit; }
  double operator()(double v) const { return (v / unit - centre) / spread; }
};

// From the training rows' values of one column (`at(r)`); a constant column
// stays centred, with scale 1.
template <typename At>
Standardiser standardiser(const std::vector<std::int64_t>& rows, At at) {
  Standardiser s;
  double largest = 0;
  for (auto r : rows) largest = std::max(largest, std::fabs(at(r)));
  if (largest > 0) s.unit = largest;
  double sum = 0, squares = 0;
  for (auto r : rows) sum += at(r) / s.unit;
  const double mean = sum / static_cast<double>(rows.size());
  for (auto r : rows) squares += (at(r) / s.unit - mean) * (at(r) / s.unit - mean);
  const double sd = std::sqrt(squares / static_cast<double>(rows.size()));
  s.centre = mean;
  s.spread = sd > 1e-12 * std::max(1.0, std::fabs(mean)) ? sd : 1.0 / s.unit;
  return s;
}

// A test table has the training table's header, in its order.
void check_test_header(const Table& train, const Table& test) {
  if (test.features == train.features && test.label == train.label) return;
  std::size_t c = 0;
  while (c < test.features.size() && c < train.features.size() && test.features[c] == train.features[c]) ++c;
  const std::string differs =
      c < test.features.size() && c < train.features.size()
          ? "its feature " + std::to_string(c + 1) + " is '" + test.features[c] + "', the training table's '" +
                train.features[c] + "'"
          : "it has " + std::to_string(test.features.size()) + " features, the training table " +
                std::to_string(train.features.size());
  throw TableError("test", test.name + ":1: " + differs + ": a test table has the training table's header, in its order");
}

// Every row's target as a number (regression), or a TableError at the first
// that is not (a table parsed with numeric_label has none).
std::vector<double> targets(const Table& t, const std::string& part) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < t.rows(); ++i) {
    const auto v = number(t.labels[i]);
    if (!v) throw TableError(part, t.name + ":" + std::to_string(t.lines[i]) + ": " + target_problem(t.label, t.labels[i]));
    out.push_back(*v);
  }
  return out;
}

// The largest standardised value the models take: the square root of
// float32's largest, in which they train, so that its products there (a
// weight times it, a target's squared error) stay finite.
const double kLargestStandardised = std::sqrt(static_cast<double>(std::numeric_limits<float>::max()));

std::string shortest(double v) {
  std::ostringstream out;
  out << std::setprecision(6) << v;
  return out.str();
}

// Where a value standardised by the training rows lies past float32's range:
// finite as a double, it would train and measure as an infinity, every trial
// "diverged" with nothing to say why.
std::string past_float32(const Table& table, std::int64_t row, const std::string& what, double z,
                         const std::string& rescale) {
  return table.name + ":" + std::to_string(table.lines[static_cast<std::size_t>(row)]) + ": " + what + ", " +
         shortest(std::abs(z)) + " standard deviations of the training rows from their mean: past 1.8e19, the square "
         "root of float32's range (the models train in float32, where its products would be infinite); rescale " +
         rescale + " (a logarithm, or other units)";
}

// What a classification and a regression share: the rows split, each
// feature standardised by the training rows, and the splits as tensors.
// `label_of` gives a row's label tensor value (a class index, or a
// standardised target) for the training table; `test_label` for the test's.
template <typename Label, typename TestLabel>
TabularData assemble(const Table& train, const Table* test, const std::vector<std::int64_t>& training,
                     const std::vector<std::int64_t>& validation, at::ScalarType label_type, Label label_of,
                     TestLabel test_label) {
  const auto f = static_cast<std::int64_t>(train.features.size());
  TabularData out;
  out.features = train.features;
  out.label = train.label;
  for (auto r : validation) out.validation_lines.push_back(train.lines[r]);
  std::vector<Standardiser> columns;
  for (std::int64_t j = 0; j < f; ++j) {
    columns.push_back(standardiser(training, [&](std::int64_t r) { return train.values[r * f + j]; }));
    out.mean.push_back(columns.back().mean());
    out.scale.push_back(columns.back().scale());
  }
  const bool target = label_type == at::kFloat;  // a regression's standardised target
  auto split = [&](const Table& table, const std::vector<std::int64_t>& rows, auto label, const std::string& part) {
    const auto m = static_cast<std::int64_t>(rows.size());
    at::Tensor x = at::empty({m, f}, at::kFloat), y = at::empty({m}, at::kDouble);
    float* xp = x.data_ptr<float>();
    double* yp = y.data_ptr<double>();
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t r = rows[i];
      for (std::int64_t j = 0; j < f; ++j) {
        const double z = columns[j](table.values[r * f + j]);
        if (!(std::abs(z) <= kLargestStandardised)) {
          throw TableError(part, past_float32(table, r,
                                              "column '" + table.features[j] + "' holds " + shortest(table.values[r * f + j]),
                                              z, "the column"));
        }
        xp[i * f + j] = static_cast<float>(z);
      }
      yp[i] = label(r);
      if (target && !(std::abs(yp[i]) <= kLargestStandardised)) {
        throw TableError(part, past_float32(table, r, "the target '" + table.label + "' is " + table.labels[static_cast<std::size_t>(r)], yp[i],
                                            "the target"));
      }
    }
    return Split{x, y.to(label_type)};
  };
  out.data.train = split(train, training, label_of, "train");
  out.data.validation = split(train, validation, label_of, "train");
  if (!test) {
    out.data.test = split(train, {}, label_of, "test");
    return out;
  }
  std::vector<std::int64_t> all(test->rows());
  for (std::int64_t i = 0; i < test->rows(); ++i) all[i] = i;
  out.data.test = split(*test, all, test_label, "test");
  return out;
}

// A regression's split: validation rows drawn from a fixed seed (every sweep
// on the file sees the same), the target standardised by the training rows.
TabularData make_regression_data(const Table& train, const Table* test, std::int64_t validation_rows) {
  const std::int64_t n = train.rows();
  const std::vector<double> y = targets(train, "train");
  if (test) check_test_header(train, *test);  // (before its targets are read)
  if (validation_rows == 0) validation_rows = default_validation_rows(n);
  if (validation_rows > n - 2) {
    throw TableError("validation", train.name + " holds " + std::to_string(n) + (n == 1 ? " row" : " rows") + "; holding " +
                                       std::to_string(validation_rows) +
                                       " out for validation leaves fewer than 2 to train on (at most " +
                                       std::to_string(std::max<std::int64_t>(0, n - 2)) + ")");
  }
  std::vector<std::int64_t> rows(n);
  for (std::int64_t i = 0; i < n; ++i) rows[i] = i;
  std::mt19937_64 rng(kSplitSeed);
  for (std::size_t i = rows.size() - 1; i > 0; --i) std::swap(rows[i], rows[rng() % (i + 1)]);
  std::vector<std::int64_t> validation(rows.begin(), rows.begin() + validation_rows);
  std::vector<std::int64_t> training(rows.begin() + validation_rows, rows.end());
  std::sort(training.begin(), training.end());
  std::sort(validation.begin(), validation.end());
  if (std::all_of(training.begin(), training.end(), [&](std::int64_t r) { return y[r] == y[training.front()]; })) {
    throw TableError("train", train.name + ": every training row's target ('" + train.label + "') is " +
                                  train.labels[training.front()] + ": a constant leaves nothing to learn");
  }
  const Standardiser target = standardiser(training, [&](std::int64_t r) { return y[r]; });
  const std::vector<double> test_y = test ? targets(*test, "test") : std::vector<double>{};
  TabularData out = assemble(
      train, test, training, validation, at::kFloat, [&](std::int64_t r) { return target(y[r]); },
      [&](std::int64_t r) { return target(test_y[r]); });
  out.regression = true;
  out.target_mean = target.mean();
  out.target_scale = target.scale();
  out.data.classes = 1;  // one output: the standardised target
  out.data.target_scale = out.target_scale;
  return out;
}

}  // namespace

TabularData make_tabular_data(const Table& train, const Table* test, std::int64_t validation_rows, bool regression) {
  if (regression) return make_regression_data(train, test, validation_rows);
  const std::int64_t n = train.rows();
  // The classes: sorted as numbers where every label is an integer (one
  // spelling each: 1 and 1.0 are one class), else as text.
  bool integers = true;
  for (const auto& l : train.labels) {
    const auto v = number(l);
    if (v && *v != std::floor(*v)) {
      const std::size_t row = static_cast<std::size_t>(&l - train.labels.data());
      throw TableError("train", train.name + ":" + std::to_string(train.lines[row]) + ": the label column '" +
                                    train.label + "' holds " + l +
                                    ": labels are classes, and a number with a fraction is a measurement; to predict "
                                    "it, set task.loss: mse (regression); to classify, name the class column with "
                                    "task.data.label");
    }
    integers = integers && v && std::fabs(*v) < 9e15;
  }
  auto class_name = [integers](const std::string& l) {
    return integers ? std::to_string(static_cast<std::int64_t>(*number(l))) : l;
  };
  std::vector<std::string> classes;
  {
    std::set<std::string> distinct;
    for (const auto& l : train.labels) distinct.insert(class_name(l));
    classes.assign(distinct.begin(), distinct.end());
    if (integers) {
      std::sort(classes.begin(), classes.end(),
                [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
    }
  }
  if (classes.size() < 2) {
    throw TableError("train", train.name + ": every row's label ('" + train.label + "') is " + train.labels.front() +
                                  ": one class leaves nothing to learn");
  }
  const auto k = static_cast<std::int64_t>(classes.size());
  if (k > 1000 || (k > 100 && 2 * k > n)) {
    throw TableError("train", train.name + ": the label column '" + train.label + "' holds " + std::to_string(k) +
                                  " different values in " + std::to_string(n) +
                                  " rows: an id or a measurement, not a class (to predict a measurement, set "
                                  "task.loss: mse; to classify, name the class column with task.data.label)");
  }
  std::map<std::string, std::int64_t> index;
  for (std::int64_t c = 0; c < k; ++c) index[classes[c]] = c;

  if (validation_rows == 0) validation_rows = default_validation_rows(n);
  // Stratified: each class holds out its share of the validation rows
  // (largest remainders first), keeping at least one row to train on, taken
  // from its rows shuffled from a fixed seed.
  std::vector<std::int64_t> label_of(n);
  std::vector<std::vector<std::int64_t>> rows_of(k);
  for (std::int64_t i = 0; i < n; ++i) {
    label_of[i] = index[class_name(train.labels[i])];
    rows_of[label_of[i]].push_back(i);
  }
  if (validation_rows > n - k) {
    throw TableError("validation", train.name + " holds " + std::to_string(n) + (n == 1 ? " row" : " rows") + " of " + std::to_string(k) +
                                       " classes; holding " + std::to_string(validation_rows) +
                                       " out for validation leaves a class no row to train on (at most " +
                                       std::to_string(n - k) + ")");
  }
  std::vector<std::int64_t> held(k);
  std::vector<std::pair<double, std::int64_t>> remainders;
  std::int64_t given = 0;
  for (std::int64_t c = 0; c < k; ++c) {
    const double share = static_cast<double>(validation_rows) * static_cast<double>(rows_of[c].size()) / static_cast<double>(n);
    held[c] = std::min(static_cast<std::int64_t>(share), static_cast<std::int64_t>(rows_of[c].size()) - 1);
    given += held[c];
    remainders.push_back({share - static_cast<double>(held[c]), c});
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  while (given < validation_rows) {  // (validation_rows <= n - k: some class has room)
    for (const auto& [remainder, c] : remainders) {
      if (given < validation_rows && held[c] + 1 < static_cast<std::int64_t>(rows_of[c].size())) ++held[c], ++given;
    }
  }
  std::mt19937_64 rng(kSplitSeed);
  std::vector<std::int64_t> training, validation;
  for (std::int64_t c = 0; c < k; ++c) {
    auto& rows = rows_of[c];
    for (std::size_t i = rows.size() - 1; i > 0; --i) std::swap(rows[i], rows[rng() % (i + 1)]);
    validation.insert(validation.end(), rows.begin(), rows.begin() + held[c]);
    training.insert(training.end(), rows.begin() + held[c], rows.end());
  }
  std::sort(training.begin(), training.end());
  std::sort(validation.begin(), validation.end());

  // The test table's labels: classes of the training table only.
  if (test) check_test_header(train, *test);
  std::vector<std::int64_t> test_labels;
  for (std::int64_t i = 0; test && i < test->rows(); ++i) {
    const std::string& l = test->labels[i];
    const auto v = number(l);
    const bool integer = v && *v == std::floor(*v) && std::fabs(*v) < 9e15;
    auto it = integers ? (integer ? index.find(class_name(l)) : index.end()) : index.find(l);
    if (it == index.end()) {
      std::string names;
      for (std::int64_t c = 0; c < k && c < 12; ++c) names += (c ? ", " : "") + classes[c];
      throw TableError("test", test->name + ":" + std::to_string(test->lines[i]) + ": label " + l +
                                   " is no class of the training table (its classes: " + names + (k > 12 ? ", ..." : "") +
                                   ")" + (integers && k > kManyIntegerClasses ? many_integers(train.label, k) : ""));
    }
    test_labels.push_back(it->second);
  }
  TabularData out = assemble(
      train, test, training, validation, at::kLong, [&](std::int64_t r) { return static_cast<double>(label_of[r]); },
      [&](std::int64_t r) { return static_cast<double>(test_labels[r]); });
  out.classes = classes;
  out.integer_classes = integers;
  out.data.classes = k;
  return out;
}

}  // namespace hfta::trainers
