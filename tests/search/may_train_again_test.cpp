// Scheduler::may_train_again: once it says a trial is done, no job ever names
// it again (the tuner then drops its optimizer state), for every scheduler.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <set>

#include "hfta/search/asha_scheduler.h"
#include "hfta/search/bracket_scheduler.h"
#include "hfta/search/median_stopping.h"
#include "hfta/search/pbt_scheduler.h"

namespace hfta::search {
namespace {

// Drives `s` to the end with a metric that mixes the trial and the budget (so
// rungs reorder trials), one trial in seven diverging at its second result.
// Returns how many trials it called done before the sweep finished.
std::size_t expect_done_trials_never_train_again(Scheduler& s, std::int64_t trials) {
  std::set<std::int64_t> done;
  std::map<std::int64_t, int> results;
  for (int guard = 0; !s.finished() && guard < 10000; ++guard) {
    for (const auto& job : s.next_jobs(std::numeric_limits<std::size_t>::max(), 1e9 + guard)) {
      for (const auto& t : job.trials) {
        EXPECT_FALSE(done.count(t.trial_id)) << "trial " << t.trial_id << " was done but trains to " << job.budget;
        const bool diverges = t.trial_id % 7 == 3 && ++results[t.trial_id] == 2;
        const double metric = static_cast<double>((t.trial_id * 37) % 11) + job.budget * 0.01 * static_cast<double>(t.trial_id % 3);
        s.report({t.trial_id, job.budget, metric, diverges ? TrialStatus::kDiverged : TrialStatus::kCompleted});
      }
    }
    for (std::int64_t id = 0; id < trials; ++id) {
      if (!s.may_train_again(id)) done.insert(id);
    }
  }
  EXPECT_TRUE(s.finished());
  for (std::int64_t id = 0; id < trials; ++id) EXPECT_FALSE(s.may_train_again(id)) << id;
  return done.size();
}

TEST(MayTrainAgain, DoneTrialsNeverTrainAgainUnderEveryScheduler) {
  {
    SCOPED_TRACE("hyperband, aligned");
    auto s = make_hyperband(81, 1, 3, Goal::kMaximize, true);
    EXPECT_GT(expect_done_trials_never_train_again(s, s.trial_count()), 100u);  // of 143, most before the end
  }
  {
    SCOPED_TRACE("successive halving in waves");
    BracketScheduler s({successive_halving_bracket(27, 27, 1, 3)}, Goal::kMinimize, 0, 3);
    EXPECT_GT(expect_done_trials_never_train_again(s, 27), 20u);
  }
  {
    SCOPED_TRACE("asha in waves");
    AshaScheduler s(40, 27, 1, 3, Goal::kMaximize, 0, 2);
    EXPECT_GT(expect_done_trials_never_train_again(s, 40), 25u);
  }
  {
    SCOPED_TRACE("median stopping in waves");
    MedianStoppingScheduler s(20, 6, 1, Goal::kMaximize, 2);
    EXPECT_GT(expect_done_trials_never_train_again(s, 20), 10u);
  }
  {
    SCOPED_TRACE("population based training");
    PbtScheduler s(8, 10, 1, Goal::kMaximize, 0.25, 5);
    // (Ids past the clones made are asked too: a clone not made yet may still train.)
    EXPECT_GT(expect_done_trials_never_train_again(s, 40), 15u);  // 8 + 2 a generation, replaced as they go
  }
}

TEST(MayTrainAgain, ARungsPassedOverAndStoppedTrialsAreDoneAtOnce) {
  // Successive halving, 9 trials to 1, 3 and 9: after the first rung, the
  // best three go on and the others are done; a trial that stopped inside the
  // rung is done as soon as it reports.
  BracketScheduler s({successive_halving_bracket(9, 9, 1, 3)}, Goal::kMaximize);
  const auto first = s.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
  ASSERT_EQ(first.at(0).trials.size(), 9u);
  s.report({0, 1, 0.99, TrialStatus::kStopped});
  EXPECT_FALSE(s.may_train_again(0));
  EXPECT_TRUE(s.may_train_again(1));
  for (std::int64_t id = 1; id < 9; ++id) s.report({id, 1, 0.1 * static_cast<double>(id)});
  for (std::int64_t id = 0; id < 9; ++id) EXPECT_EQ(s.may_train_again(id), id >= 6) << id;
}

TEST(MayTrainAgain, ATrialAtTheLastRungIsDoneOnceItReports) {
  // Random search in waves: one rung at the full budget; the first wave's
  // trials are done while the later waves train.
  BracketScheduler s({{0, {{6, 9.0}}}}, Goal::kMaximize, 0, 2);
  const auto first = s.next_jobs(std::numeric_limits<std::size_t>::max(), 0);
  ASSERT_EQ(first.at(0).trials.size(), 3u);
  for (std::int64_t id = 0; id < 3; ++id) s.report({id, 9, 0.5});
  for (std::int64_t id = 0; id < 6; ++id) EXPECT_EQ(s.may_train_again(id), id >= 3) << id;
}

}  // namespace
}  // namespace hfta::search
