// hfta-tune validate and plan: what a sweep file holds and how it will train, training nothing.
#include "verbs.h"

#include "hfta/core/sweep_json.h"
#include "hfta/core/sweep_plan.h"
#include "hfta/core/data_notes.h"
#include "hfta/core/sweep_summary.h"
#include "hfta/fusion/device_list.h"

namespace hfta::core::verbs {

int validate(const Args& a, std::ostream& out, std::ostream& err) {
  auto sweep = load_given(a.sweep, err);
  if (!sweep) return kExitUsage;
  if (a.json) {
    out << to_json(*sweep).dump(2) << "\n";
  } else {
    out << a.sweep << ": valid sweep '" << sweep->name << "'\n" << summarize(*sweep);
    // Valid, but not what was meant, most likely: a goal against its metric, ... (plan's notes on the sweep).
    for (const auto& note : plan_notes(*sweep)) out << note << "\n";
  }
  return kExitOk;
}

int plan(const Args& a, std::ostream& out, std::ostream& err) {
  auto sweep = load_given(a.sweep, err);
  if (!sweep) return kExitUsage;
  if (a.seed >= 0) sweep->seed = static_cast<std::uint64_t>(a.seed);
  std::vector<c10::Device> devices;
  try {
    devices = devices_of(a);
  } catch (const std::invalid_argument& e) {
    err << "hfta-tune plan: --device: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!precision_fits(*sweep, a.sweep, devices, "plan", err)) return kExitUsage;
  const int workers = workers_for(a, devices);
  const SweepPlan p = make_plan(*sweep, a.fusion == "auto", fusion::to_string(devices),
                                memory_per_worker(devices, workers), workers_sharing(devices, workers));
  if (a.json) {
    out << to_json(p, *sweep).dump(2) << "\n";
  } else {
    if (sweep->task.dataset == "csv") out << "table " << describe_table(sweep->task.table, sweep->task.validation_size) << "\n";
    out << to_text(p, *sweep) << workers_note(workers, devices);
  }
  return kExitOk;
}

}  // namespace hfta::core::verbs
