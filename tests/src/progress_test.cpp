// The progress display: plain lines into pipes, one redrawn line on terminals.
#include <gtest/gtest.h>

#include <sstream>

#include "hfta/core/progress.h"

namespace hfta::core {
namespace {

TEST(Progress, PlainModePrintsOneLinePerArrayWithCountsBestAndEta) {
  std::ostringstream out;
  Progress p(&out, /*live=*/false, {100, 4}, "val_accuracy", search::Goal::kMaximize, "steps");
  p.replayed(10, 0.5);  // from an earlier run: counts, but no time to estimate from
  p.array_started(3, 0, 30);
  p.advanced(90);
  EXPECT_EQ(out.str(), "");  // nothing until the array finishes
  p.result(0.7);
  p.result(0.6);
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
  p.result(0.4);
  p.result(0.3);
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

TEST(Progress, ClockFormat) {
  EXPECT_EQ(Progress::clock(0), "0:00");
  EXPECT_EQ(Progress::clock(65.4), "1:05");
  EXPECT_EQ(Progress::clock(3723), "1:02:03");
}

}  // namespace
}  // namespace hfta::core
