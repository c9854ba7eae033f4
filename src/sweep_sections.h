// The loaders of a sweep file's sections, shared by sweep_loader.cpp and parameter_loader.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include "hfta/core/sweep_config.h"
#include "hfta/trainers/catalog.h"
#include "yaml_reader.h"

namespace hfta::core {

/// Reads `parameters`: each parameter's distribution, checked against the option
/// or hyperparameter it sets (`model` is nullptr when task.model was invalid),
/// its conditions, and what the search method needs. Sorted by name.
void load_parameters(YamlReader& r, const YAML::Node& node, const trainers::ModelSpec* model,
                     SweepConfig& sweep);

}  // namespace hfta::core
