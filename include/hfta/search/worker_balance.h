// Arrays for several workers side by side. One large array can hold a round's
// only long rung while the other workers idle: a round takes as long as its
// busiest worker. Cutting that array in two trains its halves at once, and on
// a CPU, where arrays gain little over a few models, that beats fusing them.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "hfta/search/packer.h"

namespace hfta::search {

/// An array's estimated cost on one worker, in any unit of time (the tuner
/// gives seconds estimated from the probe's rates; only ratios matter here).
using ArrayCost = std::function<double(const ArrayPlan&)>;

/// A round's arrays after balancing, and the order to hand them to workers in.
struct WorkerPlan {
  std::vector<ArrayPlan> arrays;  ///< the packer's order; a cut array's halves in its place
  std::vector<std::size_t> start_order;  ///< indices into arrays, longest first
};

/// The makespan of `costs` on `workers` workers that each take the next array
/// as they finish, in the given order.
double makespan(const std::vector<double>& costs, const std::vector<std::size_t>& order, std::size_t workers);

/// Cuts the array that ends last in two (split_in_two) while that shortens the
/// round's estimated makespan on `workers` workers, then orders the arrays
/// longest first (so no long array starts last). One worker: arrays unchanged,
/// in their order.
WorkerPlan balance_for_workers(std::vector<ArrayPlan> arrays, std::size_t workers, const ArrayCost& cost);

}  // namespace hfta::search
