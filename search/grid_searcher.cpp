#include <stdexcept>

#include "hfta/search/searcher.h"

namespace hfta::search {

GridSearcher::GridSearcher(const SearchSpace& space, std::int64_t repeats)
    : points_(space.grid()), repeats_(repeats) {
  if (repeats < 1) throw std::invalid_argument("grid search needs repeats >= 1");
}

Config GridSearcher::suggest(std::int64_t trial_id) {
  if (trial_id < 0 || trial_id >= trial_count()) {
    throw std::out_of_range("grid search has no trial " + std::to_string(trial_id));
  }
  return points_[static_cast<std::size_t>(trial_id) % points_.size()];
}

std::int64_t GridSearcher::trial_count() const {
  return static_cast<std::int64_t>(points_.size()) * repeats_;
}

}  // namespace hfta::search
