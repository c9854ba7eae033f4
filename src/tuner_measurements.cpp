#include "tuner_impl.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "hfta/core/throughput_probe.h"
#include "hfta/fusion/caching_host_allocator.h"

namespace hfta::core::tuning {

// Seconds an array should take on one worker: its model-steps at the rate the
// probe measured for its key and size. Keys it did not measure (fusion off, or
// one trial of the key per round) get the mean one-model rate of those it did
// (or 1: only the ratios between arrays matter).
double Tuner::estimated_seconds(const search::ArrayPlan& a) {
  const Config& c = config_of(a.trial_ids.front());
  const auto models = static_cast<std::int64_t>(a.trial_ids.size());
  const auto steps = static_cast<double>(settings_.steps_for(a.to_budget, c) - settings_.steps_for(a.from_budget, c));
  double rate = 0, single = 0;
  for (const auto& [key, rates] : kept_.throughput()) single += rate_at(rates, 1) / static_cast<double>(kept_.throughput().size());
  if (auto it = kept_.throughput().find(a.key); it != kept_.throughput().end()) rate = rate_at(it->second, models);
  if (rate <= 0) rate = single > 0 ? single : 1.0;
  return steps * static_cast<double>(models) / rate;
}

// What a test's sweep takes for measured rates (InjectedFaults::rates_untimed):
// B models B times as fast as one, at the sizes the probe would time.
static std::map<std::int64_t, double> untimed_rates(std::int64_t most) {
  std::map<std::int64_t, double> rates;
  for (std::int64_t b = 1; b < most; b *= 2) rates[b] = 1000.0 * static_cast<double>(b);
  rates[most] = 1000.0 * static_cast<double>(most);
  return rates;
}

// Before the first arrays of a fusion key, measures how fast arrays of 1, 2,
// 4, ... of its models train (throughput_probe.h), so that the sizer caps
// arrays where larger ones stop paying. Kept in the experiment directory: a
// resumed run packs as the interrupted one did.
void Tuner::probe_array_sizes(const std::vector<search::PackItem>& items) {
  if (!options_.fuse) return;
  std::map<std::string, std::vector<const search::PackItem*>> by_key;
  for (const auto& item : items) by_key[packer_.fusion_key(item.params)].push_back(&item);
  for (const auto& [key, members] : by_key) {
    if (members.size() < 2 || kept_.throughput().count(key)) continue;
    const Config& example = members.front()->params;
    // Up to the arrays this round can form; a curve still rising there leaves larger ones uncapped.
    const std::int64_t most = std::min<std::int64_t>(sizer_.capacity(key, example),
                                                     static_cast<std::int64_t>(members.size()));
    if (most < 2) continue;
    auto make_step = [&](std::int64_t b) -> ArrayStep {
      std::vector<trainers::SlotTrial> slots;
      for (std::int64_t i = 0; i < b; ++i) slots.push_back(settings_.slot_of(i, example, static_cast<std::uint64_t>(i)));
      auto o = settings_.array_options(example);
      o.record_losses = true;  // each timed step ends when the device has finished it
      std::shared_ptr<trainers::ArrayTrainer> trainer = make_trainer(key, build(b, example, device_of(0)), slots, o);
      return [trainer] { trainer->train(1); };
    };
    ProbeOptions probe;
    probe.fuse_gain = sweep_.fusion.min_gain;
    // The key's share of the sweep's training (the plan's, split as this round's trials are).
    if (options_.totals.work > 0) {
      probe.sized_steps = std::max<double>(1, static_cast<double>(settings_.raw_steps(
          options_.totals.work * static_cast<double>(members.size()) / static_cast<double>(items.size()), example)));
    }
    std::int64_t out_of_memory_at = 0;
    probe.out_of_memory = [&](std::int64_t b) {
      out_of_memory_at = b;
      sizer_.observe_out_of_memory(key, b);
    };
    const auto start = std::chrono::steady_clock::now();
    const auto measured = faults_.rates_untimed ? untimed_rates(most) : probe_throughput(make_step, most, probe);
    // The probe's arrays leave their blocks cached; arrays of other sizes
    // trained after them ran slower (PointNet sweep: 60.9-62.4 s against
    // 56.8-57.9 s with the cache emptied here), so they start from none.
    fusion::CachingHostAllocator::instance().empty_cache();
    if (measured.empty()) {  // each trial trains alone, and fails saying why (out_of_memory)
      progress_.message("array sizes not measured: one " + sweep_.task.model + " model ran out of memory on " +
                        device_key(device_of(0)));
      continue;
    }
    keep_throughput(key, measured);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string rates;
    for (const auto& [b, r] : kept_.throughput().at(key)) rates += " B=" + std::to_string(b) + " " + std::to_string(std::lround(r));
    std::ostringstream seconds;
    seconds << std::fixed << std::setprecision(1) << took;
    seconds << " s";
    // Sizes 1 and 2 always run; larger ones only within the share (worth
    // saying where it may have cut them: not a share of days).
    const double share = probe.max_share * probe.sized_steps / kept_.throughput().at(key).begin()->second;
    if (probe.sized_steps > 0 && share < 3600) {
      seconds << " (sizes above 2 only within " << std::defaultfloat << std::setprecision(2) << share << " s)";
    }
    if (out_of_memory_at > 0) seconds << " (an array of " << out_of_memory_at << " ran out of memory)";
    progress_.message("array sizes measured in " + seconds.str() + ", model-steps/s:" + rates +
                      "; arrays of at most " + std::to_string(sizer_.capacity(key, example)));
  }
}

// An array's trainer with the op strategies kept for its fusion key and size:
// measured when the first array of that size is built (the probe's, or a
// real one), then reused, so later arrays neither time them again nor differ.
std::unique_ptr<trainers::ArrayTrainer> Tuner::make_trainer(const std::string& key,
                                                     const std::shared_ptr<trainers::ArrayClassifier>& model,
                                                     const std::vector<trainers::SlotTrial>& slots,
                                                     trainers::ArrayTrainerOptions o, bool initialise) {
  if (const auto* kept = kept_.strategies(key, model->models())) o.strategies = *kept;
  const c10::Device device = model->parameters().front().device();
  o.prefetch = prefetch_on(device);
  auto trainer = std::make_unique<trainers::ArrayTrainer>(model, slots, o, data_on(device), initialise);
  if (o.strategies.empty() && !model->strategies().empty()) {
    check_directory();
    kept_.keep_strategies(key, model->models(), model->strategies());
  }
  return trainer;
}

void Tuner::keep_throughput(const std::string& key, const KeptMeasurements::Rates& rates) {
  check_directory();
  kept_.keep_throughput(key, rates);
  for (const auto& [b, r] : rates) sizer_.observe_throughput(key, b, r);
}

}  // namespace hfta::core::tuning
