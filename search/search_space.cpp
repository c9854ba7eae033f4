#include "hfta/search/search_space.h"

#include "hfta/search/halton.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

namespace hfta::search {
namespace {


// Dependencies first; among parameters free to go next, the smallest name.
// A name's branches go together, in their order.
std::vector<ParameterSpec> condition_order(std::vector<ParameterSpec> parameters) {
  std::map<std::string, std::vector<const ParameterSpec*>> by_name;
  for (const auto& p : parameters) by_name[p.name].push_back(&p);
  for (auto& [name, branches] : by_name) {
    std::stable_sort(branches.begin(), branches.end(),
                     [](const ParameterSpec* a, const ParameterSpec* b) { return a->branch < b->branch; });
  }
  for (const auto& p : parameters) {
    for (const auto& c : p.when) {
      if (!by_name.count(c.parameter) || c.parameter == p.name) {
        throw std::invalid_argument("parameter '" + p.name + "' depends on unknown parameter '" +
                                    c.parameter + "'");
      }
    }
  }
  std::vector<ParameterSpec> ordered;
  std::set<std::string> placed;
  while (ordered.size() < parameters.size()) {
    const std::vector<const ParameterSpec*>* next = nullptr;
    for (const auto& [name, branches] : by_name) {
      if (placed.count(name)) continue;
      const bool ready = std::all_of(branches.begin(), branches.end(), [&](const ParameterSpec* p) {
        return std::all_of(p->when.begin(), p->when.end(),
                           [&](const Condition& c) { return placed.count(c.parameter) > 0; });
      });
      if (ready) {
        next = &branches;
        break;
      }
    }
    if (!next) throw std::invalid_argument("parameter conditions form a cycle");
    placed.insert(next->front()->name);
    for (const ParameterSpec* p : *next) ordered.push_back(*p);
  }
  return ordered;
}

bool is_whole(double v) { return std::floor(v) == v; }

}  // namespace

std::uint64_t trial_seed(std::uint64_t sweep_seed, std::int64_t trial_id) {
  return Rng(sweep_seed, static_cast<std::uint64_t>(trial_id), hash_string("trial-seed"))
             .next_u64() >> 1;  // 63 bits: fits torch::manual_seed and signed JSON integers
}

SearchSpace::SearchSpace(std::vector<ParameterSpec> parameters, Sampling sampling)
    : parameters_(condition_order(std::move(parameters))), sampling_(sampling) {
  for (const auto& p : parameters_) {
    // A grid is counted once in the cycle: one spec per name.
    if (p.distribution == Distribution::kGrid && p.branch >= 0) {
      throw std::invalid_argument("grid parameter '" + p.name + "' has branches");
    }
    // A name's branches share one coordinate (only one holds in a trial).
    if (p.distribution != Distribution::kConst && p.distribution != Distribution::kGrid) {
      quasi_dimension_.emplace(p.name, quasi_dimension_.size());
    }
  }
  // Strides from the last grid parameter (1) back, as grid() nests them; past
  // 2^62 trials no sweep reaches, a stride stays there (its value is the first).
  constexpr std::int64_t kFar = std::int64_t{1} << 62;
  for (auto p = parameters_.rbegin(); p != parameters_.rend(); ++p) {
    if (p->distribution != Distribution::kGrid) continue;
    grid_stride_[p->name] = grid_combinations_;
    const auto n = static_cast<std::int64_t>(p->values.size());
    grid_combinations_ = grid_combinations_ > kFar / n ? kFar : grid_combinations_ * n;
  }
  enumerate_grid_combinations();
}

// A grid that exists only for some values of another grid (step_size when
// schedule is step) leaves combinations out of the cross product, as grid()
// does: the cycle then goes through the rows of a table of them, value
// indices in parameter order (-1: not in that combination). Conditions on
// parameters that are not grids do not count (those are the trial's to meet).
// Beyond a million combinations the strides stand, every grid counted.
void SearchSpace::enumerate_grid_combinations() {
  std::vector<const ParameterSpec*> grids;
  for (const auto& p : parameters_) {
    if (p.distribution == Distribution::kGrid) grids.push_back(&p);
  }
  auto position = [&](const std::string& name) {
    for (std::size_t i = 0; i < grids.size(); ++i) {
      if (grids[i]->name == name) return static_cast<std::ptrdiff_t>(i);
    }
    return std::ptrdiff_t{-1};
  };
  const bool nested = std::any_of(grids.begin(), grids.end(), [&](const ParameterSpec* g) {
    return std::any_of(g->when.begin(), g->when.end(), [&](const Condition& c) { return position(c.parameter) >= 0; });
  });
  if (!nested || grid_combinations_ > (std::int64_t{1} << 20)) return;
  const std::size_t k = grids.size();
  auto table = std::make_shared<std::vector<std::int32_t>>();
  std::vector<std::int32_t> row(k, -1);
  std::function<void(std::size_t)> expand = [&](std::size_t i) {
    if (i == k) {
      table->insert(table->end(), row.begin(), row.end());
      return;
    }
    const bool on = std::all_of(grids[i]->when.begin(), grids[i]->when.end(), [&](const Condition& c) {
      const auto j = position(c.parameter);
      if (j < 0) return true;
      const auto at = row[static_cast<std::size_t>(j)];
      return at >= 0 && std::any_of(c.values.begin(), c.values.end(), [&](const ParamValue& v) {
               return same(v, grids[static_cast<std::size_t>(j)]->values[static_cast<std::size_t>(at)]);
             });
    });
    if (!on) return expand(i + 1);
    for (std::size_t v = 0; v < grids[i]->values.size(); ++v) {
      row[i] = static_cast<std::int32_t>(v);
      expand(i + 1);
    }
    row[i] = -1;
  };
  expand(0);
  for (std::size_t i = 0; i < k; ++i) grid_position_[grids[i]->name] = i;
  grid_combinations_ = static_cast<std::int64_t>(table->size() / k);
  grid_table_ = std::move(table);
}

bool SearchSpace::active(const ParameterSpec& parameter, const Config& chosen) {
  for (const auto& c : parameter.when) {
    auto it = chosen.find(c.parameter);
    if (it == chosen.end()) return false;
    const bool match = std::any_of(c.values.begin(), c.values.end(),
                                   [&](const ParamValue& v) { return same(v, it->second); });
    if (!match) return false;
  }
  return true;
}

double quantized_steps(const ParameterSpec& p) { return std::floor((p.max - p.min) / p.q + 1e-9); }

ParamValue quantize(double x, const ParameterSpec& p) {
  const double k = std::clamp(std::round((x - p.min) / p.q), 0.0, quantized_steps(p));
  const double v = p.min + k * p.q;
  if (is_whole(p.min) && is_whole(p.q)) return static_cast<std::int64_t>(std::llround(v));
  // As the decimal it stands for (0.3, not 0.30000000000000004).
  char text[32];
  std::snprintf(text, sizeof(text), "%.12g", v);
  return std::strtod(text, nullptr);
}

// The first number is u; integer ranges and plain choices draw again, without
// bias (as they always have: a sweep's trials must not change).
ParamValue SearchSpace::draw(const ParameterSpec& p, Rng& rng) {
  const double u = rng.uniform();
  switch (p.distribution) {
    case Distribution::kIntUniform: {
      const auto span = static_cast<std::uint64_t>(p.max - p.min) + 1;
      return static_cast<std::int64_t>(p.min) + static_cast<std::int64_t>(rng.below(span));
    }
    case Distribution::kChoice:
      if (!p.probabilities.empty()) return draw_at(p, u);
      return p.values[rng.below(p.values.size())];
    case Distribution::kGrid: return p.values[rng.below(p.values.size())];  // (sample() cycles grids)
    default: return draw_at(p, u);
  }
}

ParamValue SearchSpace::draw_at(const ParameterSpec& p, double u) {
  // The index of u's equal part of [0, 1) among n.
  auto part = [u](std::uint64_t n) { return std::min(static_cast<std::uint64_t>(u * static_cast<double>(n)), n - 1); };
  switch (p.distribution) {
    case Distribution::kUniform: return p.min + u * (p.max - p.min);
    case Distribution::kLogUniform:
      return std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)));
    case Distribution::kIntUniform:
      return static_cast<std::int64_t>(p.min) +
             static_cast<std::int64_t>(part(static_cast<std::uint64_t>(p.max - p.min) + 1));
    case Distribution::kIntLogUniform: {
      // Uniform in log space over [min, max + 1), floored: each integer gets the
      // log-width of its unit interval, as Ray Tune's lograndint (Optuna's
      // log int rounds over [min - 1/2, max + 1/2]: 1 of 1..8 is 39%, here 32%).
      const double lo = std::log(p.min), hi = std::log(p.max + 1.0);
      const auto v = static_cast<std::int64_t>(std::floor(std::exp(lo + u * (hi - lo))));
      return std::clamp<std::int64_t>(v, static_cast<std::int64_t>(p.min),
                                      static_cast<std::int64_t>(p.max));
    }
    case Distribution::kQuantized: {
      // Linear: uniform over half a step either side of the grid's ends, so
      // that every grid point gets the same share (Optuna's stepped floats; a
      // max off the grid, as 0.9 by 0.25 from 0, ends it at 0.75 as Optuna
      // does, where [min - q/2, max + q/2] gave 0.75 a third more). Log: as
      // Ray Tune's qloguniform, log-uniform over [min, max], then rounded.
      const double x = p.log ? std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)))
                             : p.min - p.q / 2 + u * (quantized_steps(p) + 1) * p.q;
      return quantize(x, p);
    }
    case Distribution::kChoice:
      if (!p.probabilities.empty()) {  // W&B's categorical probabilities
        double left = u;
        for (std::size_t i = 0; i + 1 < p.values.size(); ++i) {
          if (left < p.probabilities[i]) return p.values[i];
          left -= p.probabilities[i];
        }
        return p.values.back();
      }
      return p.values[part(p.values.size())];
    case Distribution::kGrid: return p.values[part(p.values.size())];
    case Distribution::kConst: return p.values.at(0);
  }
  throw std::logic_error("unknown distribution");
}

Config SearchSpace::sample(std::uint64_t sweep_seed, std::int64_t trial_id) const {
  return sample(sweep_seed, trial_id, {});
}

Config SearchSpace::sample(std::uint64_t sweep_seed, std::int64_t trial_id, const Config& fixed) const {
  Config config;
  for (const auto& p : parameters_) {
    if (!active(p, config)) continue;
    if (auto it = fixed.find(p.name); it != fixed.end()) {
      config[p.name] = it->second;
      continue;
    }
    if (p.distribution == Distribution::kGrid) {
      config[p.name] = cycled(p, trial_id);
      continue;
    }
    if (sampling_ == Sampling::kQuasi && quasi_dimension_.count(p.name)) {
      const auto index = static_cast<std::uint64_t>(std::max<std::int64_t>(trial_id, 0));
      config[p.name] = draw_at(p, scrambled_halton(sweep_seed, index, quasi_dimension_.at(p.name)));
      continue;
    }
    Rng rng(sweep_seed, static_cast<std::uint64_t>(trial_id), hash_string(p.name));
    config[p.name] = draw(p, rng);
  }
  return config;
}

ParamValue SearchSpace::cycled(const ParameterSpec& p, std::int64_t trial_id) const {
  const std::int64_t t = std::max<std::int64_t>(trial_id, 0);
  if (grid_table_) {
    const std::size_t row = static_cast<std::size_t>(t % grid_combinations_);
    const auto at = (*grid_table_)[row * grid_position_.size() + grid_position_.at(p.name)];
    if (at >= 0) return p.values.at(static_cast<std::size_t>(at));
    // (Not in this combination, but in the trial: a point set the grid it depends on.)
  }
  const auto n = static_cast<std::int64_t>(p.values.size());
  return p.values.at(static_cast<std::size_t>((t / grid_stride_.at(p.name)) % n));
}

namespace {

// A value as a message shows it: strings quoted, so that 'true' and true differ.
std::string shown(const ParamValue& v) {
  return std::holds_alternative<std::string>(v) ? "'" + to_string(v) + "'" : to_string(v);
}

}  // namespace

std::optional<ParamValue> as_drawn(const ParameterSpec& p, const ParamValue& value, std::string& why) {
  const std::string given = "got the " + type_name(value) + " " + shown(value);
  if (is_categorical(p.distribution)) {
    for (const auto& v : p.values) {
      if (same(v, value)) return v;
    }
    std::string listed;
    for (const auto& v : p.values) listed += (listed.empty() ? "" : ", ") + shown(v);
    why = (p.distribution == Distribution::kConst ? "expected the parameter's constant " + listed
                                                  : "expected one of {" + listed + "}") +
          ", " + given;
    return std::nullopt;
  }
  if (!is_numeric(value)) {
    why = "expected a number, " + given;
    return std::nullopt;
  }
  const double x = as_double(value);
  const bool integer = p.distribution == Distribution::kIntUniform ||
                       p.distribution == Distribution::kIntLogUniform;
  if (integer && !is_whole(x)) {
    why = "expected an integer, got " + to_string(value);
    return std::nullopt;
  }
  if (x < p.min || x > p.max) {
    why = "expected a value in [" + to_string(p.min) + ", " + to_string(p.max) + "], got " + to_string(value);
    return std::nullopt;
  }
  if (integer) return static_cast<std::int64_t>(x);
  if (p.distribution == Distribution::kQuantized) {
    // Off the grid by more than rounding, in steps of q (whatever q's scale).
    const double k = (x - p.min) / p.q;
    if (std::abs(k - std::round(k)) > 1e-6) {
      why = "expected min + k*q (" + to_string(p.min) + " + k*" + to_string(p.q) + "), got " + to_string(value) +
            "; the nearest is " + to_string(quantize(x, p));
      return std::nullopt;
    }
    return quantize(x, p);
  }
  return x;
}

std::vector<Config> SearchSpace::grid() const {
  std::vector<Config> out;
  std::function<void(size_t, Config&)> expand = [&](size_t i, Config& partial) {
    if (i == parameters_.size()) {
      out.push_back(partial);
      return;
    }
    const ParameterSpec& p = parameters_[i];
    if (!active(p, partial)) {
      expand(i + 1, partial);
      return;
    }
    if (!is_categorical(p.distribution)) {
      throw std::invalid_argument("grid search: parameter '" + p.name + "' has no finite set of values");
    }
    for (const auto& v : p.values) {
      partial[p.name] = v;
      expand(i + 1, partial);
    }
    partial.erase(p.name);
  };
  Config partial;
  expand(0, partial);
  return out;
}

}  // namespace hfta::search
