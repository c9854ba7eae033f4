#include "hfta/core/throughput_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace hfta::core {

std::map<std::int64_t, double> probe_throughput(const std::function<ArrayStep(std::int64_t)>& make_step,
                                                std::int64_t most, const ProbeOptions& options) {
  const auto now = options.now ? options.now : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  std::map<std::int64_t, double> rates;
  double best = 0, last_gain = 0, one = 0;
  int flat = 0;  // sizes in a row without a gain
  for (std::int64_t b = 1; b <= most; b = b == most ? most + 1 : std::min(2 * b, most)) {
    const ArrayStep step = make_step(b);
    step();  // warm-up: first-touch allocations, op strategy tuning
    // The median step: a step the machine's other work interrupted (a shared
    // or virtual machine's) would otherwise weigh on this size alone.
    std::vector<double> seconds;
    for (double start = now(), elapsed = 0; elapsed < options.seconds_each;) {
      const double before = now();
      step();
      const double after = now();
      seconds.push_back(after - before);
      elapsed = after - start;
    }
    std::nth_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2), seconds.end());
    const double rate = static_cast<double>(b) / std::max(seconds[seconds.size() / 2], 1e-9);
    rates[b] = rate;
    if (b == 1) one = rate;
    best = std::max(best, rate);
    if (rate > last_gain * (1 + options.gain)) {
      last_gain = rate, flat = 0;
    } else {
      ++flat;
    }
    // A size without a gain ends the probe when none has gained yet: the models
    // keep the device busy alone, and each larger size would cost more to time.
    const bool gained = best > one * (1 + options.gain);
    if (rate < options.past_peak * best || flat >= 2 || (flat == 1 && !gained)) break;
  }
  return rates;
}

}  // namespace hfta::core
