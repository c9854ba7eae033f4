// The packer decides what trains together: it groups a rung's trials by fusion
// key and cuts each group into arrays no larger than the device can hold.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hfta/search/search_space.h"

namespace hfta::search {

/// One trial to place: its configuration and the budgets it trains between.
struct PackItem {
  std::int64_t trial_id = 0;
  Config params;
  double from_budget = 0;
  double to_budget = 0;
};

/// Trials that train as one fused array of B = trial_ids.size() models.
struct ArrayPlan {
  std::string key;  ///< the fusion key every member shares
  double from_budget = 0;
  double to_budget = 0;
  std::vector<std::int64_t> trial_ids;
};

/// Groups trials into arrays. Two trials share an array only when everything that
/// changes a model's shape, kernels or input is equal (the task's base key and
/// every unfused parameter) and they train over the same budget interval, since
/// all models of an array see the same batches. Numbers that only enter the update
/// (learning rate, momentum, weight decay, dropout rate, schedule, seed) fuse.
class Packer {
 public:
  /// `base_key` names the task (model, dataset, batch size, fixed shape options);
  /// `unfused` are the parameters marked fuse: false; `fuse` false trains each trial alone.
  Packer(std::string base_key, std::set<std::string> unfused, std::int64_t max_array, bool fuse);

  /// The fusion key of a configuration: base key plus every unfused parameter's value.
  std::string fusion_key(const Config& params) const;

  /// The most models of one fusion key an array may hold on the device, given
  /// the key and the configuration of one of its trials (from the memory model).
  using Capacity = std::function<std::int64_t(const std::string& key, const Config& example)>;

  /// Arrays for `items`, each at most min(capacity, max_array) models (no capacity:
  /// max_array). Larger groups are cut into arrays whose sizes differ by at most one.
  std::vector<ArrayPlan> pack(const std::vector<PackItem>& items, const Capacity& capacity) const;

  std::int64_t max_array() const { return max_array_; }

 private:
  std::string base_key_;
  std::set<std::string> unfused_;
  std::int64_t max_array_;
  bool fuse_;
};

/// An array that ran out of memory, cut into two halves to retry (sizes differ by
/// at most one). Throws std::invalid_argument for an array of one model.
std::pair<ArrayPlan, ArrayPlan> split_in_two(const ArrayPlan& array);

/// Arrays that can run side by side: first-fit decreasing of each array's
/// predicted bytes into waves of at most `capacity_bytes`. An array larger than
/// the capacity gets a wave of its own. Returns indices into `bytes`.
std::vector<std::vector<std::size_t>> side_by_side(const std::vector<double>& bytes,
                                                   double capacity_bytes);

}  // namespace hfta::search
