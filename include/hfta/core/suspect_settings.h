// Settings that are valid but likely not what the user meant: plan (and so
// run) prints them as notes, and trains as told.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// "note: ..." lines (without the newline) for: a loss maximized or an
/// accuracy minimized (the best trial would be the worst model); a cosine
/// schedule whose eta_min may exceed lr (its learning rate then climbs); a
/// validation set too small to tell trials apart; a grid that a method other
/// than grid draws from; a budget.min that plays no part; Adam's lr left at
/// this format's default.
std::vector<std::string> suspect_settings(const SweepConfig& sweep);

/// A note where a step or exponential schedule leaves even the trial that
/// decays least (the largest gamma and step_size) under a thousandth of its lr
/// by budget.max, which that trial reaches in `fewest_steps` training steps:
/// their lengths count steps, where PyTorch's tutorials step them per epoch.
std::vector<std::string> decay_notes(const SweepConfig& sweep, std::int64_t fewest_steps);

}  // namespace hfta::core
