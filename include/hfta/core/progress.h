// What a running sweep shows: on a terminal one live line, redrawn as work
// advances (rung, array, results so far, best metric, elapsed and ETA); into a
// pipe or file, one plain line per finished array instead.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "hfta/search/scheduler.h"

namespace hfta::core {

struct ProgressTotals {
  double work = 0;            ///< the plan's trained budget (budget units summed over models)
  std::int64_t results = 0;   ///< rung results the plan expects (sum of n_i over all rungs)
  std::int64_t trials = 0;    ///< trials the plan starts (its first rungs' n_i)
};

class Progress {
 public:
  Progress(std::ostream* out, bool live, ProgressTotals totals, std::string metric, search::Goal goal,
           std::string unit);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A rung result of `trial` from an earlier run, replayed on resume: `work` was done before.
  void replayed(double work, std::int64_t trial, double metric);
  /// `work` done before this run that no rung result holds: a rung resumed
  /// from its mid-rung checkpoint starts that far in.
  void restored(double work);
  /// A replayed rung result whose checkpoint was lost: it no longer counts, as
  /// its work and result count again when its rung is trained again.
  void unreplayed(double work);
  /// An array of `models` trials starts training from `from` to `to` (with
  /// several workers, while others may be training).
  void array_started(std::int64_t models, double from, double to);
  /// `work` more budget units (summed over the array's models) are trained.
  void advanced(double work);
  /// A rung result of `trial`: one more of the totals, and the trial's metric
  /// now (NaN: diverged or failed). The best shown is the best trial's
  /// latest, as the final table ranks them: each trial where it ended, not a
  /// rung it later fell from.
  void result(std::int64_t trial, double metric);
  /// That array is done, after `steps` steps: a plain line (plain mode), or a
  /// redraw (live mode). It names its own shape, not the last one started.
  void array_finished(std::int64_t models, double from, double to, std::int64_t steps, double seconds,
                      double array_best);
  /// That array failed after `work` units (it is retried, or the sweep stops):
  /// it no longer runs, and its work counts no more.
  void array_abandoned(double work);
  /// A message between progress updates (live mode clears the line first).
  void message(const std::string& text);
  /// Ends the live line before the final table.
  void finish();
  /// How many trials are done training (the scheduler will not train them
  /// again), asked whenever the line is drawn, out of totals.trials.
  void count_done_with(std::function<std::int64_t()> done) { done_ = std::move(done); }
  /// The live line is cut to the width `columns` gives when it is drawn (0:
  /// unknown, not cut): a line that wraps is not redrawn in place, and every
  /// redraw would leave a row behind.
  void width_with(std::function<std::int64_t()> columns) { columns_ = std::move(columns); }

  /// Standard output's terminal width in columns (0 where it is no terminal).
  static std::int64_t terminal_columns();

  /// "1:05" or "1:02:03".
  static std::string clock(double seconds);

 private:
  // The status's fields as shown ("results 9/22", "ETA 1:05"), but trials
  // ("3/17": empty where not counted) and best (the value alone).
  struct Fields {
    std::string trials, results, best, elapsed, eta;
  };
  Fields fields() const;
  /// The fields as one line, `shorter` 0 in full, each step up to 5 dropping
  /// one more: the results, the metric's name, the elapsed time, (the array,
  /// which draw() adds), "trials" of "trials done".
  std::string joined(const Fields& f, int shorter) const;
  std::string status() const;
  void draw();

  std::ostream* out_;
  bool live_;
  ProgressTotals totals_;
  std::string metric_, unit_;
  search::Goal goal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), first_array_ = start_;
  double work_before_ = 0, work_now_ = 0;
  std::int64_t results_ = 0, models_ = 0, running_ = 0;  // models_, from_, to_: the last array started
  double from_ = 0, to_ = 0;
  std::map<std::int64_t, double> latest_;  ///< each trial's metric at its latest rung result
  bool drawn_ = false;
  std::string last_drawn_;
  std::function<std::int64_t()> done_, columns_;
};

}  // namespace hfta::core
