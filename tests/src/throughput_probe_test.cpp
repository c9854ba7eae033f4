// The array-size probe measures 1, 2, 4, ... models against a clock and stops
// past the peak; here the clock is simulated, so the test times nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <new>
#include <stdexcept>
#include <vector>

#include "hfta/core/kept_measurements.h"
#include "hfta/core/throughput_probe.h"

namespace hfta::core {
namespace {

// A step of an array of B costs `cost(B)` simulated seconds; records what was built.
struct Simulated {
  double clock = 0;
  std::vector<std::int64_t> built;
  std::map<std::int64_t, double> probe(double (*cost)(std::int64_t), std::int64_t most, ProbeOptions o = {}) {
    o.now = [this] { return clock; };
    o.seconds_each = 1.0;
    return probe_throughput(
        [this, cost](std::int64_t b) -> ArrayStep {
          built.push_back(b);
          return [this, cost, b] { clock += cost(b); };
        },
        most, o);
  }
};

TEST(ThroughputProbe, OverheadBoundModelsAreMeasuredUpToTheLargestArray) {
  Simulated s;  // a fixed 10 ms of overhead per step and 1 ms of arithmetic per model
  const auto rates = s.probe([](std::int64_t b) { return 0.010 + 0.001 * static_cast<double>(b); }, 12);
  EXPECT_EQ(s.built, (std::vector<std::int64_t>{1, 2, 4, 8, 12}));
  EXPECT_NEAR(rates.at(1), 1 / 0.011, 1e-6);
  EXPECT_NEAR(rates.at(12), 12 / 0.022, 1e-6);
}

TEST(ThroughputProbe, StopsOnceLargerArraysFallBehind) {
  Simulated s;  // each model costs more in a larger array (its working set leaves the cache)
  const auto rates = s.probe([](std::int64_t b) { return 0.1 * static_cast<double>(b) * (1 + 0.1 * static_cast<double>(b - 1)); }, 64);
  EXPECT_EQ(s.built, (std::vector<std::int64_t>{1, 2}));  // 2 is below 95% of 1's rate
  EXPECT_GT(rates.at(1), rates.at(2));
  // Every size ran a warm-up step, then timed steps for at least a simulated second.
  EXPECT_GE(s.clock, 2.0);
}

TEST(ThroughputProbe, StopsOnAPlateau) {
  Simulated s;  // arithmetic-bound: every model costs the same, alone or fused
  const auto rates = s.probe([](std::int64_t b) { return 0.1 * static_cast<double>(b); }, 64);
  EXPECT_EQ(s.built, (std::vector<std::int64_t>{1, 2}));  // no gain from the first size on
  EXPECT_NEAR(rates.at(2), rates.at(1), 1e-9);

  Simulated later;  // 1 -> 2 gains 33%, then two sizes in a row under 5%
  later.probe([](std::int64_t b) { return b == 1 ? 0.1 : 0.075 * static_cast<double>(b) * (b >= 4 ? 0.99 : 1.0); }, 64);
  EXPECT_EQ(later.built, (std::vector<std::int64_t>{1, 2, 4, 8}));
}

TEST(ThroughputProbe, ASmallGainEndsAtTheFirstPlateauUnlessItPaysForFusing) {
  // PointNet's readings: two models gain 7% over one, four no more.
  auto pointnet = [](std::int64_t b) { return b == 1 ? 0.1 : 0.0935 * static_cast<double>(b); };
  Simulated fuses_at_5;  // 7% is a gain at the default 5%: one plateau more
  fuses_at_5.probe(pointnet, 64);
  EXPECT_EQ(fuses_at_5.built, (std::vector<std::int64_t>{1, 2, 4, 8}));
  Simulated fuses_at_10;
  ProbeOptions o;
  o.fuse_gain = 0.1;  // a sweep's fusion.min_gain: 7% would never fuse
  fuses_at_10.probe(pointnet, 64, o);
  EXPECT_EQ(fuses_at_10.built, (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(ThroughputProbe, CostsAtMostItsShareOfTheTrainingItSizes) {
  // Each model 10% cheaper in every larger array: the probe would go to 64.
  auto rising = [](std::int64_t b) { return 0.1 * static_cast<double>(b) * std::pow(0.9, std::log2(static_cast<double>(b))); };
  Simulated unlimited;
  unlimited.probe(rising, 64);
  EXPECT_EQ(unlimited.built, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64}));
  // 600 model-steps of 0.1 s: 60 s alone, of which 10% is 6 s. Sizes 1 and 2
  // take about 2 and 3 s (a second of timed steps each, their warm-ups, and
  // size 2's steps of one model beside its own); size 4 would take about 6 s more.
  Simulated limited;
  ProbeOptions o;
  o.sized_steps = 600;
  const auto rates = limited.probe(rising, 64, o);
  EXPECT_EQ(limited.built, (std::vector<std::int64_t>{1, 2}));
  EXPECT_LE(limited.clock, 6.0);
  EXPECT_EQ(rates.size(), 2u);
  // Sizes 1 and 2 are measured however small the training: fusing is decided on them.
  // But each for its least steps alone, where the share is less: a warm-up
  // and 3 steps of one model (0.1 s each), then a warm-up of 2 (0.18 s) and 3
  // rounds of 2's two steps and one's two (0.56 s), not a second of each.
  Simulated tiny;
  o.sized_steps = 1;
  EXPECT_EQ(tiny.probe(rising, 64, o).size(), 2u);
  EXPECT_NEAR(tiny.clock, 0.1 + 3 * 0.1 + 0.18 + 3 * 0.56, 1e-9);
  Simulated ample;  // ten times the training: sizes up to 32 fit in its 60 s
  o.sized_steps = 6000;
  ample.probe(rising, 64, o);
  EXPECT_EQ(ample.built, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32}));
  EXPECT_LE(ample.clock, 60.0);
}

TEST(ThroughputProbe, IgnoresStepsThatOtherWorkInterrupted) {
  Simulated s;  // every fifth step is held up 50 ms, as a shared machine does
  int calls = 0;
  static int* counter = nullptr;
  counter = &calls;
  const auto rates = s.probe([](std::int64_t b) { return 0.010 * static_cast<double>(b) + (++*counter % 5 == 0 ? 0.05 : 0.0); }, 2);
  EXPECT_NEAR(rates.at(1), 1 / 0.010, 1e-6);
  EXPECT_NEAR(rates.at(2), 2 / 0.020, 1e-6);
}

TEST(ThroughputProbe, AMachineThatSlowsDownWhileASizeIsTimedSlowsItsReferenceToo) {
  Simulated s;  // two models gain 25% over one; from 1.5 s on, every step takes 1.5 times as long
  static double* clock = nullptr;
  clock = &s.clock;
  const auto rates = s.probe([](std::int64_t b) { return (b == 1 ? 0.1 : 0.08 * static_cast<double>(b)) * (*clock >= 1.5 ? 1.5 : 1.0); }, 2);
  // Timed one after the other, two models would read 2 / 0.24 = 8.3 steps/s
  // against one model's 10: a loss, and arrays of one.
  EXPECT_NEAR(rates.at(1), 10, 1e-6);
  EXPECT_NEAR(rates.at(2), 12.5, 1e-6);
  EXPECT_EQ(s.built, (std::vector<std::int64_t>{1, 2}));
}

TEST(ThroughputProbe, TimesOnlyStepsThatFollowTheirOwnSize) {
  // Every model costs the same, alone or fused, but one model's step right
  // after an array's takes 30% longer: its tensors, which stay in the cache
  // from one of its steps to the next, were pushed out (an array's do not fit
  // anyway). Timed as they come, arrays of two would seem to gain 30%.
  static std::int64_t last = 0;
  last = 0;
  Simulated s;
  const auto rates = s.probe([](std::int64_t b) {
    const double cold = b == 1 && last > 1 ? 0.03 : 0.0;
    last = b;
    return 0.1 * static_cast<double>(b) + cold;
  }, 64);
  EXPECT_NEAR(rates.at(2), rates.at(1), 1e-9);
  EXPECT_EQ(s.built, (std::vector<std::int64_t>{1, 2}));  // no gain: arrays of one
}

TEST(ThroughputProbe, TimesEachSizeForAtLeastItsLeastSteps) {
  Simulated s;  // steps longer than the seconds each size is given
  std::int64_t steps = 0;
  static std::int64_t* count = nullptr;
  count = &steps;
  s.probe([](std::int64_t) { return ++*count, 5.0; }, 1);
  EXPECT_EQ(steps, 1 + 3);  // a warm-up, then three timed
}

// The sizer's memory model can guess wrong: an array that runs out of memory
// (built, or in a step) ends the probe with the sizes before it, and says which.
TEST(ThroughputProbe, AnArrayThatRunsOutOfMemoryEndsItWithTheSizesBefore) {
  for (const bool when_built : {true, false}) {
    double clock = 0;
    std::vector<std::int64_t> told;
    ProbeOptions o;
    o.now = [&clock] { return clock; };
    o.seconds_each = 1.0;
    o.out_of_memory = [&told](std::int64_t b) { told.push_back(b); };
    const auto rates = probe_throughput(
        [&](std::int64_t b) -> ArrayStep {
          if (b >= 4 && when_built) throw std::bad_alloc();
          return [&clock, b] {
            if (b >= 4) throw std::bad_alloc();
            clock += 0.010 + 0.001 * static_cast<double>(b);
          };
        },
        16, o);
    EXPECT_EQ(rates.size(), 2u) << when_built;
    EXPECT_TRUE(rates.count(1) && rates.count(2)) << when_built;
    EXPECT_EQ(told, std::vector<std::int64_t>{5}) << when_built;  // and the array of one beside it
  }
  // One model that does not fit: nothing measured.
  std::vector<std::int64_t> told;
  ProbeOptions o;
  o.out_of_memory = [&told](std::int64_t b) { told.push_back(b); };
  EXPECT_TRUE(probe_throughput([](std::int64_t) -> ArrayStep { throw std::bad_alloc(); }, 8, o).empty());
  EXPECT_EQ(told, std::vector<std::int64_t>{1});
  // Anything else is not the probe's to swallow.
  EXPECT_THROW(probe_throughput([](std::int64_t) -> ArrayStep { throw std::runtime_error("shape"); }, 8),
               std::runtime_error);
}

// What the probe measured at some sizes estimates the rest (for worker balancing).
TEST(RateAt, LinearBetweenMeasuredSizesAndFlatBeyond) {
  const std::map<std::int64_t, double> rates = {{1, 100}, {2, 160}, {4, 200}};
  EXPECT_DOUBLE_EQ(rate_at(rates, 2), 160);
  EXPECT_DOUBLE_EQ(rate_at(rates, 3), 180);
  EXPECT_DOUBLE_EQ(rate_at(rates, 16), 200);
  EXPECT_DOUBLE_EQ(rate_at({{2, 50}}, 1), 50);
  EXPECT_DOUBLE_EQ(rate_at({}, 3), 0);
}

}  // namespace
}  // namespace hfta::core
