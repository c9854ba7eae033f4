#include "hfta/core/suspect_settings.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "hfta/search/param_value.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {
namespace {

// The smallest and largest value a numeric parameter can take, or nullopt.
std::optional<std::pair<double, double>> numeric_range(const search::ParameterSpec& p) {
  if (p.values.empty()) return std::make_pair(p.min, p.max);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& v : p.values) {
    if (!search::is_numeric(v)) return std::nullopt;
    lo = std::min(lo, search::as_double(v));
    hi = std::max(hi, search::as_double(v));
  }
  return std::make_pair(lo, hi);
}

// The range of a training hyperparameter: its parameter's, else its default's.
std::optional<std::pair<double, double>> range_of(const SweepConfig& sweep, const std::string& name) {
  if (const auto* p = sweep.find_parameter(name)) return numeric_range(*p);
  const double d = std::stod(trainers::find_training_hyperparameter(name)->default_value);
  return std::make_pair(d, d);
}

}  // namespace

std::vector<std::string> suspect_settings(const SweepConfig& sweep) {
  std::vector<std::string> out;
  // Accuracy is better higher; losses, perplexity and FID lower. (A GAN's
  // g_loss and d_loss are each other's opponents: either goal may be meant.)
  const std::string& metric = sweep.metric.name;
  const bool higher_is_better = metric == "val_accuracy";
  const bool lower_is_better =
      metric == "val_loss" || metric == "train_loss" || metric == "val_perplexity" || metric == "val_fid";
  if ((higher_is_better && sweep.metric.goal == Goal::kMinimize) ||
      (lower_is_better && sweep.metric.goal == Goal::kMaximize)) {
    out.push_back("note: " + sweep.metric.name + " is better " + (higher_is_better ? "higher" : "lower") +
                  ", and metric.goal " + to_string(sweep.metric.goal) + " makes the best trial the worst model " +
                  "(did you mean goal: " + (higher_is_better ? "maximize" : "minimize") + "?)");
  }
  // Accuracy in steps of 1/N: on a handful of examples most trials tie, and
  // the best is whichever the tie-break names.
  constexpr std::int64_t kFewest = 100;
  if (sweep.task.validation_size > 0 && sweep.task.validation_size < kFewest) {
    out.push_back("note: task.validation_size " + std::to_string(sweep.task.validation_size) +
                  ": every validation metric is measured on that many examples, so trials tie often (at least " +
                  std::to_string(kFewest) + " tell them apart)");
  }
  // eta_min is a cosine schedule's floor; above lr it is the ceiling the rate climbs to.
  if (sweep.find_parameter("eta_min")) {
    const auto eta_min = range_of(sweep, "eta_min");
    const auto lr = range_of(sweep, "lr");
    if (eta_min && lr && eta_min->second > lr->first) {
      out.push_back("note: parameters.eta_min reaches " + search::to_string(eta_min->second) + ", above the smallest lr " +
                    search::to_string(lr->first) + ": a cosine schedule then raises such a trial's learning rate "
                    "to eta_min instead of lowering it");
    }
  }
  return out;
}

}  // namespace hfta::core
