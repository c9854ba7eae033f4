#include "injected_faults.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hfta::core {
namespace {

// `text` as a number, or an error naming the variable (the tests' typo, not a trial's fault).
template <typename Parse>
auto parsed(const char* name, const std::string& text, Parse parse) {
  try {
    std::size_t end = 0;
    const auto value = parse(text, &end);
    if (end == text.size()) return value;
  } catch (const std::logic_error&) {
  }
  throw std::invalid_argument(std::string(name) + ": '" + text + "' is not a number");
}

std::int64_t integer(const char* name, const std::string& text) {
  return parsed(name, text, [](const std::string& t, std::size_t* end) { return std::stoll(t, end); });
}

// Comma-separated ids.
std::set<std::int64_t> ids(const char* name) {
  std::set<std::int64_t> out;
  if (const char* v = std::getenv(name)) {
    std::stringstream s(v);
    std::string id;
    while (std::getline(s, id, ',')) {
      if (!id.empty()) out.insert(integer(name, id));
    }
  }
  return out;
}

// Comma-separated trial@budget.
TrialBudgets trial_budgets(const char* name) {
  TrialBudgets out;
  if (const char* v = std::getenv(name)) {
    std::stringstream s(v);
    std::string item;
    while (std::getline(s, item, ',')) {
      if (item.empty()) continue;
      const auto at = item.find('@');
      if (at == std::string::npos) {
        throw std::invalid_argument(std::string(name) + ": '" + item + "' is not trial@budget");
      }
      const auto budget = [](const std::string& t, std::size_t* end) { return std::stod(t, end); };
      out.insert({integer(name, item.substr(0, at)), parsed(name, item.substr(at + 1), budget)});
    }
  }
  return out;
}

int count(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<int>(integer(name, v)) : 0;
}

}  // namespace

InjectedFaults InjectedFaults::from_environment() {
  InjectedFaults f;
  f.failing_trials = ids("HFTA_TUNE_FAULT_TRIALS");
  f.damaged_when_written = trial_budgets("HFTA_TUNE_DAMAGE_CHECKPOINTS");
  f.damaged_at_load = trial_budgets("HFTA_TUNE_DAMAGE_CHECKPOINTS_AT_LOAD");
  f.exit_after_checkpoints = count("HFTA_TUNE_EXIT_AFTER_CHECKPOINTS");
  f.interrupt_after_pieces = count("HFTA_TUNE_SIGINT_AFTER_PIECES");
  f.time_up_after_pieces = count("HFTA_TUNE_TIME_UP_AFTER_PIECES");
  f.time_up_at_start = count("HFTA_TUNE_TIME_UP_AT_START") > 0;
  f.oom_after_reports = count("HFTA_TUNE_OOM_AFTER_REPORTS");
  f.scheduler_clock_still = count("HFTA_TUNE_SCHEDULER_CLOCK_STILL") > 0;
  f.rates_untimed = count("HFTA_TUNE_RATES_UNTIMED") > 0;
  return f;
}

bool take_one(TrialBudgets& set, const std::pair<std::int64_t, double>& item) {
  const auto it = set.find(item);
  if (it == set.end()) return false;
  set.erase(it);
  return true;
}

}  // namespace hfta::core
