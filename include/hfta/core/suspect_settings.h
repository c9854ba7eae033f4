// Settings that are valid but likely not what the user meant: plan (and so
// run) prints them as notes, and trains as told.
#pragma once

#include <string>
#include <vector>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// "note: ..." lines (without the newline) for: a loss maximized or an
/// accuracy minimized (the best trial would be the worst model); a cosine
/// schedule whose eta_min may exceed lr (its learning rate then climbs); a
/// validation set too small to tell trials apart.
std::vector<std::string> suspect_settings(const SweepConfig& sweep);

}  // namespace hfta::core
