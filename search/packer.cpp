#include "hfta/search/packer.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace hfta::search {

Packer::Packer(std::string base_key, std::set<std::string> unfused, std::int64_t max_array,
               bool fuse)
    : base_key_(std::move(base_key)), unfused_(std::move(unfused)), max_array_(max_array),
      fuse_(fuse) {
  if (max_array < 1) throw std::invalid_argument("max_array must be >= 1");
}

std::string Packer::fusion_key(const Config& params) const {
  std::string key = base_key_;
  for (const auto& name : unfused_) {
    auto it = params.find(name);
    // An absent conditional parameter is part of the shape too ("-").
    key += "|" + name + "=" + (it == params.end() ? "-" : type_name(it->second) + ":" + to_string(it->second));
  }
  return key;
}

std::vector<ArrayPlan> Packer::pack(const std::vector<PackItem>& items,
                                    const Capacity& capacity) const {
  // Group by (key, from, to); std::map keeps the output order deterministic.
  std::map<std::tuple<std::string, double, double>, std::vector<std::int64_t>> groups;
  std::map<std::string, const Config*> example;
  for (const auto& item : items) {
    const std::string key = fusion_key(item.params);
    groups[{key, item.from_budget, item.to_budget}].push_back(item.trial_id);
    example.emplace(key, &item.params);
  }
  std::vector<ArrayPlan> arrays;
  for (auto& [group, ids] : groups) {
    const auto& [key, from, to] = group;
    std::sort(ids.begin(), ids.end());
    std::int64_t limit =
        fuse_ ? std::min(max_array_, capacity ? capacity(key, *example.at(key)) : max_array_) : 1;
    limit = std::max<std::int64_t>(limit, 1);  // one model always gets its chance
    const auto n = static_cast<std::int64_t>(ids.size());
    const std::int64_t count = (n + limit - 1) / limit;
    std::size_t next = 0;
    for (std::int64_t a = 0; a < count; ++a) {
      // Balanced sizes: the first n % count arrays get one more model.
      const std::int64_t size = n / count + (a < n % count ? 1 : 0);
      ArrayPlan plan{key, from, to, {}};
      for (std::int64_t i = 0; i < size; ++i) plan.trial_ids.push_back(ids[next++]);
      arrays.push_back(std::move(plan));
    }
  }
  return arrays;
}

std::pair<ArrayPlan, ArrayPlan> split_in_two(const ArrayPlan& array) {
  if (array.trial_ids.size() < 2) {
    throw std::invalid_argument("an array of one model cannot be split");
  }
  ArrayPlan first = array, second = array;
  const std::size_t half = (array.trial_ids.size() + 1) / 2;
  first.trial_ids.assign(array.trial_ids.begin(), array.trial_ids.begin() + half);
  second.trial_ids.assign(array.trial_ids.begin() + half, array.trial_ids.end());
  return {first, second};
}

std::vector<std::vector<std::size_t>> side_by_side(const std::vector<double>& bytes,
                                                   double capacity_bytes) {
  std::vector<std::size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
  std::vector<std::vector<std::size_t>> waves;
  std::vector<double> used;
  for (std::size_t i : order) {
    std::size_t w = 0;
    while (w < waves.size() && used[w] + bytes[i] > capacity_bytes) ++w;
    if (w == waves.size()) {
      waves.emplace_back();
      used.push_back(0);
    }
    waves[w].push_back(i);
    used[w] += bytes[i];
  }
  return waves;
}

}  // namespace hfta::search
