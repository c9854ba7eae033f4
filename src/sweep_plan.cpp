#include "hfta/core/sweep_plan.h"

#include <limits>
#include <map>
#include <sstream>

#include "hfta/core/search_setup.h"

namespace hfta::core {

SweepPlan make_plan(const SweepConfig& sweep, bool fuse, const std::string& device) {
  SweepPlan plan;
  plan.fused = fuse && sweep.fusion.enabled == FusionMode::kAuto;
  plan.device = device;
  auto scheduler = make_scheduler(sweep);
  const auto brackets = scheduler->plan();
  plan.total_budget = search::total_budget(brackets);
  plan.trained_budget = search::trained_budget(brackets);
  for (const auto& b : brackets) {
    PlannedBracket pb{b.s, {}};
    for (const auto& r : b.rungs) pb.rungs.push_back({r.n, r.r, std::nullopt});
    plan.brackets.push_back(std::move(pb));
  }

  // The first rungs' trials are known now: pack them as training would. A model-based
  // searcher proposes exactly what random search would until it has results.
  auto searcher = make_searcher(sweep);
  const auto packer = make_packer(sweep, fuse);
  for (const auto& job : scheduler->next_jobs(std::numeric_limits<std::size_t>::max(), 0)) {
    if (job.rung != 0) continue;
    std::vector<search::PackItem> items;
    for (const auto& t : job.trials) {
      items.push_back({t.trial_id, searcher->suggest(t.trial_id), t.from_budget, job.budget});
    }
    std::vector<PlannedArray> arrays;
    for (const auto& a : packer.pack(items, nullptr)) {
      arrays.push_back({a.key, static_cast<std::int64_t>(a.trial_ids.size())});
    }
    plan.brackets[job.bracket].rungs[0].arrays = std::move(arrays);
  }
  return plan;
}

nlohmann::json to_json(const SweepPlan& plan, const SweepConfig& sweep) {
  using nlohmann::json;
  json brackets = json::array();
  for (const auto& b : plan.brackets) {
    json rungs = json::array();
    for (const auto& r : b.rungs) {
      json rung = {{"n", r.n}, {"r", r.r}};
      if (r.arrays) {
        json arrays = json::array();
        for (const auto& a : *r.arrays) {
          // Memory is predicted once the memory model lands: null until then.
          arrays.push_back({{"key", a.key}, {"models", a.models}, {"predicted_bytes", nullptr}});
        }
        rung["arrays"] = arrays;
      } else {
        rung["arrays"] = nullptr;
      }
      rungs.push_back(rung);
    }
    brackets.push_back({{"s", b.s}, {"rungs", rungs}});
  }
  return {{"format", 1},
          {"name", sweep.name},
          {"method", to_string(sweep.search.method)},
          {"eta", sweep.search.eta},
          {"budget",
           {{"unit", to_string(sweep.budget.unit)},
            {"min", sweep.budget.min},
            {"max", sweep.budget.max}}},
          {"device", plan.device},
          {"fusion", plan.fused ? "auto" : "off"},
          {"max_array", sweep.fusion.max_array},
          {"brackets", brackets},
          {"total_budget", plan.total_budget},
          {"trained_budget", plan.trained_budget}};
}

std::string to_text(const SweepPlan& plan, const SweepConfig& sweep) {
  std::ostringstream out;
  const std::string unit = to_string(sweep.budget.unit);
  out << "plan for '" << sweep.name << "': " << to_string(sweep.search.method);
  if (sweep.search.method != SearchMethod::kRandom && sweep.search.method != SearchMethod::kGrid) {
    out << ", eta " << sweep.search.eta;
  }
  out << ", budget " << sweep.budget.min << " to " << sweep.budget.max << " " << unit << ", on "
      << plan.device << ", fusion " << (plan.fused ? "auto" : "off") << " (at most "
      << sweep.fusion.max_array << " models per array)\n";
  for (const auto& b : plan.brackets) {
    out << "bracket s=" << b.s << "\n";
    for (std::size_t i = 0; i < b.rungs.size(); ++i) {
      const auto& r = b.rungs[i];
      out << "  rung " << i << ": " << r.n << " trial" << (r.n == 1 ? "" : "s") << " to "
          << search::to_string(r.r) << " " << unit;
      if (r.arrays) {
        std::map<std::int64_t, int> by_size;
        for (const auto& a : *r.arrays) by_size[a.models]++;
        out << "; " << r.arrays->size() << " array" << (r.arrays->size() == 1 ? "" : "s")
            << " (";
        bool first = true;
        for (auto it = by_size.rbegin(); it != by_size.rend(); ++it) {
          out << (first ? "" : ", ") << it->second << " x B=" << it->first;
          first = false;
        }
        out << ")";
      }
      out << "\n";
    }
  }
  out << "total budget: " << search::to_string(plan.total_budget) << " " << unit
      << " (sum of n_i r_i); trained with checkpoint resume: "
      << search::to_string(plan.trained_budget) << " " << unit << "\n"
      << "memory per array: predicted once models are built (not yet available)\n";
  return out.str();
}

}  // namespace hfta::core
