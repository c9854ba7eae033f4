#include "hfta/core/data_notes.h"

#include <algorithm>
#include <utility>

#include "hfta/core/search_setup.h"
#include "hfta/core/suspect_settings.h"
#include "hfta/core/trial_settings.h"
#include "hfta/search/param_value.h"
#include "hfta/trainers/catalog.h"
#include "hfta/trainers/model_zoo.h"

namespace hfta::core {

namespace {

// A batch larger than the training set is the whole set, every step: an
// epoch is one step.
std::vector<std::string> batch_past_the_data(std::int64_t largest, std::int64_t train) {
  if (largest <= train) return {};
  return {"note: batch size " + std::to_string(largest) + " is larger than the " + std::to_string(train) +
          " training examples: each step trains on all of them, once"};
}

// Early stopping and plateau schedules count evaluation points (every
// task.eval_steps, by default each epoch), not rung ends between them: where
// budget.max leaves fewer points before its end than a patience needs, it
// can stop or slow no trial before budget.max (at the last point it saves
// nothing). Said at the largest batch size where so, naming it where trials
// may take others (a batch past the training set evaluates every step).
std::vector<std::string> idle_patience(const SweepConfig& sweep, const TrialSettings& settings, std::int64_t train) {
  std::vector<std::pair<std::string, std::int64_t>> patiences;  // what waits, for how many evaluations
  if (sweep.early_stopping.enabled && sweep.early_stopping.patience > 0) {
    patiences.emplace_back("early_stopping.patience", sweep.early_stopping.patience);
  }
  bool may_plateau = sweep.find_parameter("plateau_patience") != nullptr;
  for (const auto* schedule : sweep.parameter_branches("schedule")) {
    may_plateau |= std::any_of(schedule->values.begin(), schedule->values.end(),
                               [](const auto& v) { return search::to_string(v) == "plateau"; });
  }
  if (may_plateau) {
    double least = std::stod(trainers::find_training_hyperparameter("plateau_patience")->default_value);
    const auto plateaus = sweep.parameter_branches("plateau_patience");
    if (!plateaus.empty()) least = 1e18;
    for (const auto* plateau : plateaus) {
      if (!search::is_categorical(plateau->distribution)) least = std::min(least, plateau->min);
      for (const auto& v : plateau->values) least = std::min(least, search::as_double(v));
    }
    patiences.emplace_back("plateau_patience", static_cast<std::int64_t>(least));
  }
  std::vector<std::string> out;
  const auto sizes = batch_sizes(sweep);
  for (const auto& [name, patience] : patiences) {
    for (const std::int64_t b : sizes) {
      const std::int64_t every = sweep.task.eval_steps > 0 ? sweep.task.eval_steps : (train + b - 1) / b;
      const std::int64_t last = std::max<std::int64_t>(settings.raw_steps_at(static_cast<double>(sweep.budget.max), b), 1);
      const std::int64_t points = (last - 1) / every;  // before the last step, where stopping saves nothing
      if (points > patience) continue;
      out.push_back("note: " + name + " " + std::to_string(patience) + " waits for " + std::to_string(patience + 1) +
                    (patience + 1 == 1 ? " evaluation" : " evaluations") + ", and budget.max leaves " +
                    std::to_string(points) + " before its end (one every " + std::to_string(every) +
                    " steps at batch " + std::to_string(b) + "), so it acts on no trial" +
                    (sizes.size() > 1 ? " of that batch size" : "") +
                    " before budget.max: set task.eval_steps to evaluate more often");
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> data_notes(const SweepConfig& sweep, std::int64_t train_examples) {
  const auto sizes = batch_sizes(sweep);
  if (sizes.empty() || train_examples < 1) return {};
  const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const TrialSettings settings(sweep, train_examples);
  std::vector<std::string> out = batch_past_the_data(largest, train_examples);
  // At the largest batch, budget.max's fewest steps.
  for (auto& note : decay_notes(sweep, settings.raw_steps_at(static_cast<double>(sweep.budget.max), largest))) {
    out.push_back(std::move(note));
  }
  for (auto& note : idle_patience(sweep, settings, train_examples)) out.push_back(std::move(note));
  return out;
}

std::optional<std::int64_t> known_train_examples(const SweepConfig& sweep) {
  if (sweep.task.dataset == "csv") {
    return sweep.task.table.train_rows > 0 ? std::optional<std::int64_t>(sweep.task.table.train_rows) : std::nullopt;
  }
  return trainers::known_train_examples(sweep.task.model, sweep.task.validation_size);
}

std::vector<std::string> plan_notes(const SweepConfig& sweep) {
  std::vector<std::string> out = suspect_settings(sweep);
  if (const auto train = known_train_examples(sweep)) {
    for (auto& note : data_notes(sweep, *train)) out.push_back(std::move(note));
  }
  for (const auto& note : sweep.search.warm_notes) out.push_back(note);
  return out;
}

}  // namespace hfta::core
