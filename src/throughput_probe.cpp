#include "hfta/core/throughput_probe.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

#include "hfta/core/oom_retry.h"

namespace hfta::core {
namespace {

// The median step: a step the machine's other work interrupted (a shared or
// virtual machine's) would otherwise weigh on its size alone.
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return std::max(v[v.size() / 2], 1e-9);
}

// probe_throughput, without its handling of memory running out.
// Each size's rate goes into `rates`; `size` is the one being measured.
void probe_sizes(const std::function<ArrayStep(std::int64_t)>& make_step, std::int64_t most, const ProbeOptions& options,
                 std::map<std::int64_t, double>& rates, std::int64_t& size) {
  const auto now = options.now ? options.now : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  auto seconds = [&now](const ArrayStep& step) {
    const double before = now();
    step();
    return now() - before;
  };
  double best = 0, last_gain = 0, one = 0;
  int flat = 0;  // sizes in a row without a gain
  const double start = now();
  double last_cost = 0;  // seconds the last size took, building it included
  std::int64_t last_b = 1;
  const ArrayStep single = make_step(1);
  for (std::int64_t b = 1; b <= most; b = b == most ? most + 1 : std::min(2 * b, most)) {
    size = b;
    // A size costs about its size's share more than the last one did.
    const double limit = options.max_share * options.sized_steps / std::max(one, 1e-9);
    if (b > 2 && options.sized_steps > 0 &&
        now() - start + last_cost * static_cast<double>(b) / static_cast<double>(last_b) > limit) {
      break;
    }
    const double size_start = now();
    const ArrayStep step = b == 1 ? single : make_step(b);
    step();  // warm-up: first-touch allocations, op strategy tuning
    // Each larger size's steps alternate with one model's, and its rate is
    // taken against theirs: a machine that slows down while one size is timed
    // (measured here: one model read 16 and 21 steps/s in two runs) then slows
    // both alike, rather than making that size look slower or faster. Each
    // runs twice in a row and only its second step is timed: the first after
    // the other size finds the cache holding that size's tensors (one MLP
    // 784-128-128-10 step read 2.38 ms right after an array of 8's, 1.85 ms
    // after its own), which made every larger array look faster than it
    // trains (the quickstart's arrays of 2 to 8 read 1.24-1.68x one model
    // and trained at 1.0x).
    std::vector<double> mine, alone;
    double allowed = options.seconds_each;
    for (double start = now(); now() - start < allowed || mine.size() < options.min_steps;) {
      if (b > 1) step();
      mine.push_back(seconds(step));
      if (b > 1) {
        single();
        alone.push_back(seconds(single));
      }
      // Sizes 1 and 2 too are timed within the share, once a few steps say how
      // long training takes: the 17 trials of configs/tabular.yaml trained in
      // 0.7 s alone, and timing its six fusion keys for 0.2 s each made the
      // fused sweep twice as slow.
      if (b <= 2 && mine.size() == std::max<std::size_t>(options.min_steps, 1) && options.sized_steps > 0) {
        const double rate = b == 1 ? 1 / median(mine) : one;
        allowed = std::min(options.seconds_each, options.max_share * options.sized_steps / rate / 2);
      }
    }
    if (b == 1) one = 1 / median(mine);
    const double rate = b == 1 ? one : one * static_cast<double>(b) * median(alone) / median(mine);
    rates[b] = rate;
    best = std::max(best, rate);
    if (rate > last_gain * (1 + options.gain)) {
      last_gain = rate, flat = 0;
    } else {
      ++flat;
    }
    // A size without a gain ends the probe when none has gained yet: the models
    // keep the device busy alone, and each larger size would cost more to time.
    const bool gained = best > one * (1 + options.fuse_gain);
    if (rate < options.past_peak * best || flat >= 2 || (flat == 1 && !gained)) break;
    last_cost = now() - size_start, last_b = b;
  }
}

}  // namespace

std::map<std::int64_t, double> probe_throughput(const std::function<ArrayStep(std::int64_t)>& make_step,
                                                std::int64_t most, const ProbeOptions& options) {
  std::map<std::int64_t, double> rates;
  std::int64_t size = 1;
  try {
    probe_sizes(make_step, most, options, rates, size);
  } catch (const std::exception& e) {
    // A size past the memory is as far as arrays can grow (the sizer's
    // model may have guessed wrong): its steps and tensors are gone by now.
    // Above one model, the array of one timed beside it was in memory too.
    if (!is_out_of_memory(e)) throw;
    rates.erase(size);
    if (options.out_of_memory) options.out_of_memory(size > 1 ? size + 1 : size);
  }
  return rates;
}

}  // namespace hfta::core
