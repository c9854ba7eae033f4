// The canonical JSON form of a sweep: every default filled in, keys sorted.
// JSON is YAML, so the text loads back with load_sweep_string to an equal sweep.
#pragma once

#include <nlohmann/json.hpp>

#include "hfta/core/sweep_config.h"

namespace hfta::core {

/// The sweep with every default resolved, as the experiment directory records it.
nlohmann::json to_json(const SweepConfig& sweep);

/// A ParamValue as the JSON scalar of the same type.
nlohmann::json to_json(const search::ParamValue& value);
/// The ParamValue of a JSON scalar (to_json's inverse); throws nlohmann::json's type_error on others.
search::ParamValue param_value_of(const nlohmann::json& j);

}  // namespace hfta::core
