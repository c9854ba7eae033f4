#include "hfta/core/progress.h"

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

void Progress::replayed(double work, double metric) {
  work_before_ += work;
  result(metric);
}

void Progress::unreplayed(double work) {
  work_before_ -= work;
  --results_;
}

void Progress::array_started(std::int64_t models, double from, double to) {
  models_ = models, from_ = from, to_ = to;
  ++running_;
  draw();
}

void Progress::advanced(double work) {
  work_now_ += work;
  draw();
}

void Progress::result(double metric) {
  ++results_;
  if (!std::isnan(metric) && (!has_best_ || search::better(metric, best_, goal_))) {
    best_ = metric;
    has_best_ = true;
  }
}

std::string Progress::status() const {
  std::ostringstream s;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (done_ && totals_.trials > 0) s << "trials done " << done_() << "/" << totals_.trials << ", ";
  s << "results " << results_ << "/" << totals_.results << ", best " << metric_ << " ";
  if (has_best_) s << best_; else s << "-";
  s << ", " << clock(elapsed) << " elapsed";
  // Time per unit of work so far, times the work left (the plan's total, less what is done).
  const double left = totals_.work - work_before_ - work_now_;
  if (work_now_ > 0 && left > 0) s << ", ETA " << clock(elapsed / work_now_ * left);
  return s.str();
}

void Progress::draw() {
  if (!live_) return;
  std::ostringstream line;
  line << "array B=" << models_ << " " << from_ << "->" << to_ << " " << unit_;
  if (running_ > 1) line << " (" << running_ << " arrays running)";
  line << " | " << status();
  *out_ << "\r" << line.str() << "\033[K" << std::flush;
  drawn_ = true;
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
        << " steps in " << clock(seconds) << ", best " << metric_ << " " << array_best << " | " << status()
        << std::endl;  // flushed: live even in a pipe
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

void Progress::finish() {
  if (live_ && drawn_) *out_ << "\n";
  drawn_ = false;
}

}  // namespace hfta::core
