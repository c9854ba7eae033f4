// Builds sweep YAML for tests: a valid base sweep whose sections can be replaced.
#pragma once

#include <map>
#include <string>

namespace hfta::test {

/// A valid sweep; each entry of `sections` ("task", "parameters", ...) replaces
/// that section's whole text (key line included); an empty text removes it.
inline std::string sweep_yaml(const std::map<std::string, std::string>& sections = {}) {
  const std::map<std::string, std::string> base = {
      {"name", "name: test-sweep\n"},
      {"seed", "seed: 3\n"},
      {"task", "task:\n  model: mlp\n  batch_size: 32\n"},
      {"metric", "metric:\n  name: val_accuracy\n  goal: maximize\n"},
      {"budget", "budget:\n  unit: epochs\n  min: 1\n  max: 9\n"},
      {"search", "search:\n  method: hyperband\n  eta: 3\n"},
      {"parameters",
       "parameters:\n  lr:\n    distribution: log_uniform\n    min: 0.001\n    max: 0.1\n"},
      {"early_stopping", ""},
      {"fusion", ""},
  };
  const char* order[] = {"name",       "seed",           "task",  "metric", "budget", "search",
                         "parameters", "early_stopping", "fusion"};
  std::string out;
  for (const char* key : order) {
    auto it = sections.find(key);
    out += it != sections.end() ? it->second : base.at(key);
  }
  for (const auto& [key, text] : sections) {
    if (!base.count(key)) out += text;  // extra top-level keys, for unknown-key tests
  }
  return out;
}

/// The 1-based line of the first occurrence of `needle` in `text`, or 0.
inline int line_of(const std::string& text, const std::string& needle) {
  const auto pos = text.find(needle);
  if (pos == std::string::npos) return 0;
  int line = 1;
  for (size_t i = 0; i < pos; ++i) line += text[i] == '\n';
  return line;
}

/// A small real sweep: Hyperband over an MLP on Fashion-MNIST, budgets in
/// steps (17 trials, rungs of 10, 30 and 90 steps; a few seconds).
inline const char* const kTinySweep = R"(name: tiny
seed: 1
task: {model: mlp, batch_size: 256, options: {depth: 1, width: 32}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 10, max: 90}
search: {method: hyperband, eta: 3}
parameters:
  lr: {distribution: log_uniform, min: 0.01, max: 0.5}
  momentum: {distribution: uniform, min: 0.0, max: 0.9}
)";

}  // namespace hfta::test
