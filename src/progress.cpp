#include "hfta/core/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace hfta::core {

Progress::Progress(std::ostream* out, bool live, ProgressTotals totals, std::string metric, search::Goal goal,
                   std::string unit)
    : out_(out), live_(live && out != nullptr), totals_(totals), metric_(std::move(metric)),
      unit_(std::move(unit)), goal_(goal) {}

std::string Progress::clock(double seconds) {
  const auto s = static_cast<long>(std::max(0.0, std::round(seconds)));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

void Progress::replayed(double work, std::int64_t trial, double metric) {
  work_before_ += work;
  result(trial, metric);
}

void Progress::restored(double work) { work_before_ += work; }

void Progress::unreplayed(double work) {
  work_before_ -= work;
  --results_;
}

void Progress::array_started(std::int64_t models, double from, double to) {
  if (models_ == 0) first_array_ = std::chrono::steady_clock::now();
  models_ = models, from_ = from, to_ = to;
  ++running_;
  draw();
}

void Progress::advanced(double work) {
  work_now_ += work;
  draw();
}

void Progress::result(std::int64_t trial, double metric) {
  ++results_;
  latest_[trial] = metric;
}

Progress::Fields Progress::fields() const {
  Fields f;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::int64_t done = done_ && totals_.trials > 0 ? done_() : -1;
  // (PBT's total is the plan's estimate too: members that stop or diverge make more clones.)
  if (done >= 0) f.trials = std::to_string(done) + "/" + std::to_string(std::max(done, totals_.trials));
  // (ASHA's and median stopping's totals are the plan's estimate: ASHA can
  // promote more, so the count never reads past a total it outgrew.)
  f.results = "results " + std::to_string(results_) + "/" + std::to_string(std::max(results_, totals_.results));
  const double* best = nullptr;
  for (const auto& [trial, metric] : latest_) {
    if (!std::isnan(metric) && (!best || search::better(metric, *best, goal_))) best = &metric;
  }
  std::ostringstream value;
  if (best) value << *best; else value << "-";
  f.best = value.str();
  f.elapsed = clock(elapsed) + " elapsed";
  // Time per unit of work so far, times the work left (the plan's total, less
  // what is done); none once every trial is done (median stopping's total is
  // its worst case).
  const double left = totals_.work - work_before_ - work_now_;
  // The rate is the training's, from the first array (not the start-up's:
  // a resume that read and checked a sweep's files first overestimated).
  const double training = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_array_).count();
  if (work_now_ > 0 && left > 0 && done != totals_.trials) f.eta = "ETA " + clock(training / work_now_ * left);
  return f;
}

std::string Progress::status() const { return joined(fields(), 0); }

std::string Progress::joined(const Fields& f, int shorter) const {
  std::string s;
  auto add = [&s](const std::string& field) {
    if (!field.empty()) s += (s.empty() ? "" : ", ") + field;
  };
  if (!f.trials.empty()) add((shorter >= 5 ? "done " : "trials done ") + f.trials);
  if (shorter < 1) add(f.results);
  add("best " + (shorter < 2 ? metric_ + " " : "") + f.best);
  if (shorter < 3) add(f.elapsed);
  add(f.eta);
  return s;
}

void Progress::draw() {
  if (!live_) return;
  std::string array;
  if (models_ > 0) {  // (before the first array: the counts alone)
    std::ostringstream a;
    a << "array B=" << models_ << " " << from_ << "->" << to_ << " " << unit_;
    if (running_ > 1) a << " (" << running_ << " arrays running)";
    array = a.str() + " | ";
  }
  // (Plain ASCII: a character a column.) One column spare, as a line that
  // fills the last one wraps on some terminals. A narrow terminal drops whole
  // fields, least telling first (the results count, the metric's name, the
  // elapsed time, the array), so that the trials done, the best value and the
  // ETA stay whole down to about 40 columns; only then is the line cut.
  const Fields f = fields();
  const std::int64_t width = columns_ ? columns_() : 0;
  const auto fits = [width](const std::string& t) { return width <= 1 || static_cast<std::int64_t>(t.size()) < width; };
  // (Without the array, the elapsed time comes back where it fits again.)
  const std::string candidates[] = {array + joined(f, 0), array + joined(f, 1), array + joined(f, 2),
                                    array + joined(f, 3), joined(f, 2), joined(f, 3), joined(f, 5)};
  std::string text;
  for (const auto& candidate : candidates) {
    text = candidate;
    if (fits(text)) break;
  }
  if (!fits(text)) text.resize(static_cast<std::size_t>(width - 1));
  if (drawn_ && text == last_drawn_) return;  // (most redraws change nothing: no bytes for them)
  *out_ << "\r" << text << "\033[K" << std::flush;
  drawn_ = true;
  last_drawn_ = text;
}

void Progress::array_finished(std::int64_t models, double from, double to, std::int64_t steps, double seconds,
                              double array_best) {
  running_ = std::max<std::int64_t>(0, running_ - 1);
  if (live_) {
    draw();
    return;
  }
  if (!out_) return;
  *out_ << "array of " << models << " trial(s) " << from << " -> " << to << " " << unit_ << ": " << steps
        << " steps in " << clock(seconds) << ", best " << metric_ << " ";
  if (std::isnan(array_best)) *out_ << "-"; else *out_ << array_best;  // (every trial diverged or failed)
  *out_ << " | " << status() << std::endl;  // flushed: live even in a pipe
}

void Progress::array_abandoned(double work) {
  running_ = std::max<std::int64_t>(0, running_ - 1);
  work_now_ -= work;
  draw();
}

void Progress::message(const std::string& text) {
  if (!out_) return;
  if (live_ && drawn_) *out_ << "\r\033[K";
  *out_ << text << std::endl;  // flushed: a message must not wait in a pipe's buffer for the next line
  drawn_ = false;
  draw();
}

std::int64_t Progress::terminal_columns() {
  struct winsize size {};
  return ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

void Progress::finish() {
  if (live_ && drawn_) *out_ << "\n" << std::flush;
  drawn_ = false;
}

// A sweep stopped by a signal or an error ends here too: its messages, on
// standard error, then start on a line of their own below the last one drawn.
Progress::~Progress() { finish(); }

}  // namespace hfta::core
