// The progress display: plain lines into pipes, one redrawn line on terminals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>
#include <sstream>

#include "hfta/core/progress.h"

namespace hfta::core {
namespace {

TEST(Progress, PlainModePrintsOneLinePerArrayWithCountsBestAndEta) {
  std::ostringstream out;
  Progress p(&out, /*live=*/false, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  p.replayed(10, 0, 0.5);  // from an earlier run: counts, but no time to estimate from
  p.array_started(3, 0, 30);
  p.advanced(90);
  EXPECT_EQ(out.str(), "");  // nothing until the array finishes
  p.result(1, 0.7);
  p.result(2, 0.6);
  p.array_finished(3, 0, 30, 30, 2.0, 0.7);
  const std::string line = out.str();
  EXPECT_NE(line.find("array of 3 trial(s) 0 -> 30 steps: 30 steps in 0:02, best val_accuracy 0.7"), std::string::npos)
      << line;
  EXPECT_NE(line.find("results 3/4, best val_accuracy 0.7"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA"), std::string::npos) << line;  // no work left: 10 + 90 of 100
  EXPECT_EQ(line.find('\r'), std::string::npos);
}

TEST(Progress, LiveModeRedrawsOneLineAndClearsItForMessages) {
  std::ostringstream out;
  Progress p(&out, /*live=*/true, {1000, 9}, "val_loss", search::Goal::kMinimize, "epochs");
  p.array_started(9, 0, 1);
  p.advanced(9);
  p.result(0, 0.4);
  p.result(1, 0.3);
  p.array_finished(9, 0, 1, 391, 3.0, 0.3);
  EXPECT_NE(out.str().find("\rarray B=9 0->1 epochs | results 2/9, best val_loss 0.3"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("ETA"), std::string::npos);
  EXPECT_NE(out.str().find("\033[K"), std::string::npos);
  p.message("resuming: 2 trial(s)");
  EXPECT_NE(out.str().find("\r\033[Kresuming: 2 trial(s)\n"), std::string::npos);
  p.finish();
  EXPECT_EQ(out.str().back(), '\n');
}

TEST(Progress, ArraysOfSeveralWorkersAreEachReportedWithTheirOwnShape) {
  std::ostringstream plain;
  Progress p(&plain, /*live=*/false, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  p.array_started(1, 0, 120);  // worker 1
  p.array_started(1, 40, 120);  // worker 2, while the first still trains
  p.array_finished(1, 0, 120, 120, 4.0, 0.8);
  EXPECT_NE(plain.str().find("array of 1 trial(s) 0 -> 120 steps: 120 steps"), std::string::npos) << plain.str();

  std::ostringstream live;
  Progress l(&live, /*live=*/true, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  l.array_started(2, 0, 40);
  l.array_started(1, 40, 120);
  EXPECT_NE(live.str().find("array B=1 40->120 steps (2 arrays running) |"), std::string::npos) << live.str();
  l.array_finished(2, 0, 40, 40, 1.0, 0.7);
  EXPECT_EQ(live.str().substr(live.str().rfind('\r')).find("arrays running"), std::string::npos);
}

TEST(Progress, CountsTheTrialsDoneAsToldWhenDrawn) {
  std::ostringstream out;
  Progress p(&out, /*live=*/false, {100, 4, 3}, "val_accuracy", search::Goal::kMaximize, "steps");
  std::int64_t done = 1;
  p.count_done_with([&] { return done; });
  p.array_started(2, 0, 30);
  done = 2;  // asked as the line is drawn, not when the array started
  p.array_finished(2, 0, 30, 30, 1.0, 0.7);
  EXPECT_NE(out.str().find("| trials done 2/3, results 0/4"), std::string::npos) << out.str();
  // Without a count of trials (a plan that gives none), the line says nothing of them.
  std::ostringstream none;
  Progress q(&none, /*live=*/false, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  q.count_done_with([] { return std::int64_t{1}; });
  q.array_finished(2, 0, 30, 30, 1.0, 0.7);
  EXPECT_EQ(none.str().find("trials done"), std::string::npos) << none.str();
}

TEST(Progress, TheBestIsEachTrialWhereItEndedAsTheFinalTableRanksThem) {
  std::ostringstream out;
  Progress p(&out, /*live=*/false, {100, 6, 3}, "val_loss", search::Goal::kMinimize, "epochs");
  p.result(0, 0.67);
  p.result(1, 0.62);
  p.result(2, std::nan(""));  // diverged
  p.array_finished(3, 0, 1, 10, 1.0, 0.62);
  EXPECT_NE(out.str().find("best val_loss 0.62 | results 3/6, best val_loss 0.62,"), std::string::npos) << out.str();
  // Trial 1, promoted, then stopped early at a worse loss: the best is trial 0's now.
  p.result(1, 1.72);
  p.array_finished(1, 1, 3, 20, 1.0, 1.72);
  EXPECT_NE(out.str().find("best val_loss 1.72 | results 4/6, best val_loss 0.67,"), std::string::npos) << out.str();
  // An array whose trials all diverged has no best.
  p.result(2, std::nan(""));
  p.array_finished(1, 1, 3, 20, 1.0, std::nan(""));
  EXPECT_NE(out.str().find("best val_loss - | results 5/6"), std::string::npos) << out.str();
}

TEST(Progress, NeitherCountNorEtaReadsPastTheEnd) {
  std::ostringstream out;
  Progress p(&out, /*live=*/false, {100, 2, 2}, "val_accuracy", search::Goal::kMaximize, "steps");
  std::int64_t done = 0;
  p.count_done_with([&] { return done; });
  p.restored(40);  // a rung resumed from its mid-rung checkpoint
  p.array_started(2, 0, 30);
  p.advanced(60);
  p.result(0, 0.5);
  p.result(1, 0.6);
  p.array_finished(2, 0, 30, 30, 1.0, 0.6);
  EXPECT_EQ(out.str().find("ETA"), std::string::npos) << out.str();  // 40 restored + 60 of 100: none left
  EXPECT_NE(out.str().find("results 2/2"), std::string::npos) << out.str();

  // Median stopping's total is its worst case: work is left, and every trial is done.
  std::ostringstream median;
  Progress q(&median, /*live=*/false, {1000, 2, 2}, "val_accuracy", search::Goal::kMaximize, "steps");
  q.count_done_with([&] { return done; });
  q.array_started(2, 0, 30);
  q.advanced(60);
  q.result(0, 0.5);
  q.array_finished(2, 0, 30, 30, 1.0, 0.5);
  EXPECT_NE(median.str().find("ETA"), std::string::npos) << median.str();  // 940 left, a trial not done
  done = 2;
  // ASHA promoted more than its plan counted.
  q.result(1, 0.6);
  q.result(1, 0.7);
  q.array_finished(2, 0, 30, 30, 1.0, 0.7);
  const std::string last = median.str().substr(median.str().rfind("array of"));
  EXPECT_NE(last.find("trials done 2/2, results 3/3"), std::string::npos) << last;
  EXPECT_EQ(last.find("ETA"), std::string::npos) << last;
}

TEST(Progress, BeforeTheFirstArrayTheLiveLineHoldsTheCountsAlone) {
  std::ostringstream out;
  Progress p(&out, /*live=*/true, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  p.message("resuming: 2 trial(s)");
  EXPECT_EQ(out.str().find("array B=0"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\rresults 0/4, best val_accuracy -"), std::string::npos) << out.str();
}

// A narrow terminal drops whole fields, least telling first, so that the
// trials done, the best value and the ETA stay whole (cutting the line at 80
// columns left "best val_accuracy 0." and never showed the ETA); only at a
// width too small for those is the line cut.
TEST(Progress, ANarrowTerminalDropsWholeFieldsBeforeCuttingTheLine) {
  std::ostringstream out;
  Progress p(&out, /*live=*/true, {1000, 206, 143}, "val_accuracy", search::Goal::kMaximize, "steps");
  p.count_done_with([] { return std::int64_t{15}; });
  std::int64_t columns = 0;  // not known: whole
  p.width_with([&] { return columns; });
  p.result(3, 0.61234);
  p.array_started(12, 60, 180);
  p.advanced(100);
  auto last = [&out] { return out.str().substr(out.str().rfind('\r') + 1); };
  EXPECT_EQ(last().substr(0, last().find(" elapsed")),
            "array B=12 60->180 steps | trials done 15/143, results 1/206, best val_accuracy 0.61234, 0:00")
      << last();
  EXPECT_NE(last().find(" elapsed, ETA "), std::string::npos) << last();
  const std::vector<std::pair<std::int64_t, std::string>> widths = {
      {100, "array B=12 60->180 steps | trials done 15/143, best val_accuracy 0.61234, 0:00 elapsed, ETA "},
      {90, "array B=12 60->180 steps | trials done 15/143, best 0.61234, 0:00 elapsed, ETA "},
      {80, "array B=12 60->180 steps | trials done 15/143, best 0.61234, ETA "},
      {60, "trials done 15/143, best 0.61234, 0:00 elapsed, ETA "},  // (the elapsed time back, the array gone)
      {50, "trials done 15/143, best 0.61234, ETA "},
      {40, "done 15/143, best 0.61234, ETA "}};
  for (const auto& [width, expected] : widths) {
    columns = width;
    p.advanced(1);
    EXPECT_EQ(last().substr(0, expected.size()), expected) << width;
    EXPECT_LT(last().size() - 3, static_cast<std::size_t>(width)) << last();  // (less "\033[K")
  }
  columns = 20;  // too narrow even for those: cut
  p.advanced(1);
  EXPECT_EQ(last(), "done 15/143, best 0\033[K");
  // A redraw that would show the same line writes nothing.
  const std::size_t before = out.str().size();
  p.advanced(0);
  EXPECT_EQ(out.str().size(), before);
}

// A sweep stopped by a signal or an error destroys its display before the
// message is printed (on standard error): the live line is ended first, so
// the message does not run on from it.
TEST(Progress, ALiveLineIsEndedWhenTheDisplayGoes) {
  std::ostringstream out;
  {
    Progress p(&out, /*live=*/true, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
    p.array_started(2, 0, 30);
  }
  EXPECT_EQ(out.str().back(), '\n') << out.str();
  std::ostringstream finished;
  {
    Progress p(&finished, /*live=*/true, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
    p.array_started(2, 0, 30);
    p.finish();
  }
  const std::string text = finished.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;  // not twice
}

TEST(Progress, ClockFormat) {
  EXPECT_EQ(Progress::clock(0), "0:00");
  EXPECT_EQ(Progress::clock(65.4), "1:05");
  EXPECT_EQ(Progress::clock(3723), "1:02:03");
}

}  // namespace
}  // namespace hfta::core
