#include "hfta/core/kept_measurements.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "hfta/core/experiment_dir.h"

namespace hfta::core {

double rate_at(const std::map<std::int64_t, double>& rates, std::int64_t models) {
  if (rates.empty()) return 0;
  const auto above = rates.lower_bound(models);
  if (above == rates.end()) return rates.rbegin()->second;
  if (above->first == models || above == rates.begin()) return above->second;
  const auto below = std::prev(above);
  const double t = static_cast<double>(models - below->first) / static_cast<double>(above->first - below->first);
  return below->second + t * (above->second - below->second);
}

KeptMeasurements::KeptMeasurements(std::string dir, std::function<void(const std::string&)> report)
    : dir_(std::move(dir)), report_(std::move(report)) {}

// Hands each entry of a kept JSON object to `use`; false when there is none or
// it is damaged (reported: it is measured again, since only speed depends on it).
template <typename Use>
bool KeptMeasurements::read(const std::string& path, Use use) {
  std::ifstream in = open_regular(path);
  if (!in) return false;
  try {
    const nlohmann::json saved = nlohmann::json::parse(in);  // items() must not outlive it
    for (const auto& [key, value] : saved.items()) use(key, value);
    return true;
  } catch (const std::exception& e) {
    report_(path + ": " + e.what() + "; measuring again");
    return false;
  }
}

void KeptMeasurements::load() {
  if (dir_.empty()) return;
  std::map<std::string, std::vector<fusion::Strategy>> strategies;
  if (read(dir_ + "/strategies.json", [&](const std::string& shape, const nlohmann::json& names) {
        for (const auto& n : names) strategies[shape].push_back(fusion::strategy_from_string(n.get<std::string>()));
      })) {
    strategies_ = strategies;
  }
  std::map<std::string, Rates> throughput;
  if (read(dir_ + "/throughput.json", [&](const std::string& key, const nlohmann::json& rates) {
        for (const auto& [b, rate] : rates.items()) throughput[key][std::stoll(b)] = rate.get<double>();
      })) {
    throughput_ = throughput;
  }
}

namespace {

std::string shape_of(const std::string& key, std::int64_t models) { return key + " B=" + std::to_string(models); }

}  // namespace

const std::vector<fusion::Strategy>* KeptMeasurements::strategies(const std::string& key, std::int64_t models) const {
  auto it = strategies_.find(shape_of(key, models));
  return it == strategies_.end() ? nullptr : &it->second;
}

void KeptMeasurements::keep_strategies(const std::string& key, std::int64_t models,
                                       const std::vector<fusion::Strategy>& chosen) {
  const std::string shape = shape_of(key, models);
  strategies_[shape] = chosen;
  write_strategies();
}

void KeptMeasurements::keep_throughput(const std::string& key, const Rates& rates) {
  throughput_[key] = rates;
  write_throughput();
}

void KeptMeasurements::write_strategies() const {
  if (dir_.empty()) return;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [shape, chosen] : strategies_) {
    for (auto st : chosen) out[shape].push_back(fusion::to_string(st));
  }
  write_atomically(dir_ + "/strategies.json", out.dump(2) + "\n");
}

void KeptMeasurements::write_throughput() const {
  if (dir_.empty()) return;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, rates] : throughput_) {
    for (const auto& [b, r] : rates) out[key][std::to_string(b)] = r;
  }
  write_atomically(dir_ + "/throughput.json", out.dump(2) + "\n");
}

}  // namespace hfta::core
