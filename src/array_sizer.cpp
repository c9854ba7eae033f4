#include "hfta/core/array_sizer.h"

#include <algorithm>

#include "hfta/core/sweep_tables.h"
#include "hfta/trainers/footprint.h"

namespace hfta::core {

ArraySizer::ArraySizer(const SweepConfig& sweep, double available_bytes)
    : sweep_(sweep), budget_(available_bytes * sweep.fusion.memory_fraction) {}

void ArraySizer::reserve(double bytes) {
  budget_ = std::max(0.0, budget_ - bytes * sweep_.fusion.memory_fraction);
}

// The memory model the parameter and activation counts predict, before any
// measurement corrects it (nullopt: a model of unknown size).
std::optional<fusion::MemoryModel> ArraySizer::estimate(const search::Config& example) const {
  // A trial's options: the task's, overridden by its own parameters.
  // Numbers, and booleans as 1 or 0 (small_input, the PointNet transforms).
  std::map<std::string, double> numeric;
  std::map<std::string, std::string> texts;  // BERT's size
  auto add = [&numeric, &texts](const std::string& name, const search::ParamValue& value) {
    if (search::is_numeric(value)) numeric[name] = search::as_double(value);
    if (const bool* b = std::get_if<bool>(&value)) numeric[name] = *b ? 1 : 0;
    if (const std::string* t = std::get_if<std::string>(&value)) texts[name] = *t;
  };
  for (const auto& [name, value] : sweep_.task.options) add(name, value);
  for (const auto& [name, value] : example) add(name, value);
  add_table_shape(sweep_.task.table, numeric);  // a table's rows: as wide as its features
  const auto batch = static_cast<std::int64_t>(
      numeric.count("batch_size") ? numeric["batch_size"] : sweep_.task.batch_size);
  auto opt = example.find("optimizer");
  const std::string optimizer =
      opt != example.end() ? search::to_string(opt->second) : std::string("sgd");
  if (auto f = trainers::estimate_footprint(sweep_.task.model, numeric, texts)) {
    return fusion::MemoryModel(trainers::fixed_bytes(*f, batch), trainers::per_model_bytes(*f, batch, optimizer));
  }
  return std::nullopt;
}

fusion::MemoryModel* ArraySizer::model(const std::string& key, const search::Config& example) {
  auto it = models_.find(key);
  if (it == models_.end()) it = models_.emplace(key, estimate(example)).first;
  return it->second ? &*it->second : nullptr;
}

std::int64_t ArraySizer::capacity(const std::string& key, const search::Config& example) {
  std::int64_t cap = sweep_.fusion.max_array;
  if (auto* m = model(key, example)) cap = std::min(cap, m->max_models(budget_));
  auto t = throughput_.find(key);
  if (t != throughput_.end()) {
    if (auto saturated = t->second.saturation(0.05, sweep_.fusion.min_gain)) cap = std::min(cap, *saturated);
  }
  return std::max<std::int64_t>(cap, 1);
}

std::optional<double> ArraySizer::estimated_bytes(const search::Config& example, std::int64_t models) const {
  if (const auto m = estimate(example)) return m->bytes(models);
  return std::nullopt;
}

std::optional<double> ArraySizer::predicted_bytes(const std::string& key,
                                                  const search::Config& example,
                                                  std::int64_t models) {
  if (auto* m = model(key, example)) return m->bytes(models);
  return std::nullopt;
}

void ArraySizer::observe_peak(const std::string& key, std::int64_t models, double bytes) {
  auto& m = models_[key];
  if (m) {
    m->observe_peak(models, bytes);
  } else {
    // First measurement of a key without an estimate: assume no fixed part.
    m.emplace(0.0, bytes / static_cast<double>(models));
  }
}

void ArraySizer::observe_out_of_memory(const std::string& key, std::int64_t models) {
  auto& m = models_[key];
  if (!m) m.emplace(0.0, budget_ / static_cast<double>(models));
  m->observe_out_of_memory(models, budget_);
}

void ArraySizer::observe_throughput(const std::string& key, std::int64_t models,
                                    double models_per_second) {
  throughput_[key].record(models, models_per_second);
}

}  // namespace hfta::core
