#include "hfta/core/throughput_probe.h"

#include <algorithm>
#include <chrono>

namespace hfta::core {

std::map<std::int64_t, double> probe_throughput(const std::function<ArrayStep(std::int64_t)>& make_step,
                                                std::int64_t most, const ProbeOptions& options) {
  const auto now = options.now ? options.now : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  std::map<std::int64_t, double> rates;
  double best = 0, last_gain = 0;
  int flat = 0;  // sizes in a row without a gain
  for (std::int64_t b = 1; b <= most; b = b == most ? most + 1 : std::min(2 * b, most)) {
    const ArrayStep step = make_step(b);
    step();  // warm-up: first-touch allocations, op strategy tuning
    const double start = now();
    std::int64_t steps = 0;
    double elapsed = 0;
    do {
      step();
      ++steps;
      elapsed = now() - start;
    } while (elapsed < options.seconds_each);
    const double rate = static_cast<double>(b * steps) / std::max(elapsed, 1e-9);
    rates[b] = rate;
    best = std::max(best, rate);
    if (rate > last_gain * (1 + options.gain)) {
      last_gain = rate, flat = 0;
    } else {
      ++flat;
    }
    if (rate < options.past_peak * best || flat >= 2) break;
  }
  return rates;
}

}  // namespace hfta::core
