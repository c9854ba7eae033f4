// The loaders of a sweep file's sections that sweep_loader.cpp calls from other files.
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

/// Reads search.points_to_evaluate once the parameters are read: each point a
/// mapping of parameters to values they could draw, set only where their
/// conditions hold, and no more points than the sweep starts trials.
void load_points(YamlReader& r, const YAML::Node& root, SweepConfig& sweep);

}  // namespace hfta::core
