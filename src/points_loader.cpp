// search.points_to_evaluate: configurations a sweep tries first, each value
// checked against its parameter as the parameters are (they are read first).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <variant>

#include "hfta/core/did_you_mean.h"
#include "hfta/search/brackets.h"
#include "sweep_sections.h"

namespace hfta::core {
namespace {

std::string listed(const std::vector<search::ParamValue>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + search::to_string(v);
  return values.size() == 1 ? out : "one of {" + out + "}";
}

// Why `p`, which the point sets, would not exist in the point's trial: a
// condition on a parameter the point sets otherwise, leaves to be drawn, or
// that cannot exist beside the point's values. Empty when it exists. `fixed`
// holds the point's values and the constants that exist beside them.
std::string absent_because(const search::ParameterSpec& p, const search::Config& fixed, const SweepConfig& sweep) {
  for (const auto& c : p.when) {
    search::ParameterSpec one_condition;
    one_condition.when = {c};
    if (search::SearchSpace::active(one_condition, fixed)) continue;
    const std::string needs = p.name + " exists only when " + c.parameter + " is " + listed(c.values);
    if (fixed.count(c.parameter)) {
      return needs + ", and in this point " + c.parameter + " is " + search::to_string(fixed.at(c.parameter));
    }
    // Setting it would not help where its own conditions fail on the point's values.
    const search::ParameterSpec* q = sweep.find_parameter(c.parameter);
    const bool decided = q && std::all_of(q->when.begin(), q->when.end(),
                                          [&](const search::Condition& d) { return fixed.count(d.parameter) > 0; });
    if (q && !q->when.empty() && decided && !search::SearchSpace::active(*q, fixed)) {
      return needs + ", and " + c.parameter + " does not exist in this point (" + absent_because(*q, fixed, sweep) + ")";
    }
    return needs + ": set " + c.parameter + " in this point too";
  }
  return "";
}

// A branched parameter's value in a point, as the branch that holds there
// draws it; false, reported at `at` (the value), where none holds or it could not.
bool branch_value(YamlReader& r, const SweepConfig& sweep, const std::vector<const search::ParameterSpec*>& branches,
                  const search::Config& fixed, const YAML::Node& at, const std::string& path, search::ParamValue& value) {
  std::string reasons;
  std::set<std::string> undecided;  // what the point leaves to be drawn, that a branch's condition names
  bool only_undecided = true;
  for (const auto* b : branches) {
    const std::string why = absent_because(*b, fixed, sweep);
    if (!why.empty()) {
      reasons += (reasons.empty() ? "" : "; ") + parameter_path(*b).substr(std::string("parameters.").size()) + ": " + why;
      for (const auto& c : b->when) {
        if (!fixed.count(c.parameter)) undecided.insert(c.parameter);
      }
      only_undecided &= why.find("in this point too") != std::string::npos;
      continue;
    }
    std::string not_drawn;
    const auto drawn = search::as_drawn(*b, value, not_drawn);
    if (!drawn) {
      r.error(at, path, not_drawn + quoted_value_hint(at) + " (the branch " + parameter_path(*b) + " holds in this point)");
      return false;
    }
    value = *drawn;
    return true;
  }
  if (only_undecided && !undecided.empty()) {
    const std::vector<std::string> names(undecided.begin(), undecided.end());
    r.error(at, path,
            "which branch of " + branches.front()->name + " holds depends on " + join_alternatives(names) +
                ", which this point leaves to be drawn: set " + (names.size() == 1 ? "it" : "them") + " in this point too");
    return false;
  }
  r.error(at, path, "no branch of " + branches.front()->name + " holds in this point (" + reasons + ")");
  return false;
}

// A whole number written as a real (5.0, 1e2) for a parameter that takes
// integers: refused as everywhere else in the sweep, saying how to write it.
std::string whole_number_hint(const search::ParameterSpec& p, const search::ParamValue& value, const std::string& text) {
  const auto* real = std::get_if<double>(&value);
  if (!real || *real != std::floor(*real) || std::abs(*real) >= 9e15) return "";
  const bool integers =
      p.distribution == search::Distribution::kIntUniform || p.distribution == search::Distribution::kIntLogUniform ||
      (search::is_categorical(p.distribution) &&
       std::all_of(p.values.begin(), p.values.end(),
                   [](const search::ParamValue& v) { return std::holds_alternative<std::int64_t>(v); }));
  if (!integers) return "";
  return "expected an integer, got number " + text + write_as_integer(static_cast<std::int64_t>(*real));
}

}  // namespace

void load_points(YamlReader& r, const YAML::Node& root, SweepConfig& sweep) {
  // (A missing key is an invalid node, whose type yaml-cpp throws for: test it first.)
  const YAML::Node search = root.IsMap() ? root["search"] : YAML::Node();
  if (!search || !search.IsMap() || !search["points_to_evaluate"]) return;
  const std::string path = "search.points_to_evaluate";
  const auto node = r.child(search, "search", "points_to_evaluate", false);
  if (!node->IsSequence()) {
    r.error(*node, path,
            "expected a list of points, each a mapping from parameter names to values, got " + describe_node(*node));
    return;
  }
  // Parameters written in the file: one that failed to load is reported there, not again here.
  std::set<std::string> written;
  std::vector<std::string> names;
  const YAML::Node parameters = root["parameters"];
  if (!parameters || !parameters.IsMap()) return;  // no parameters to set: reported at the section
  for (const auto& entry : parameters) {
    if (entry.first.IsScalar()) written.insert(entry.first.Scalar());
  }
  for (const auto& p : sweep.parameters) {
    if (p.branch <= 0) names.push_back(p.name);  // a name's branches once
  }
  std::optional<search::SearchSpace> space;
  try {
    space.emplace(sweep.parameters);
  } catch (const std::invalid_argument&) {
    return;  // conditions that name no parameter, or a cycle: reported at the parameters
  }

  bool ok = true;
  std::vector<search::Config> points;
  for (size_t i = 0; i < node->size(); ++i) {
    const YAML::Node item = (*node)[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!item.IsMap() || item.size() == 0) {
      r.error(item, item_path,
              "expected a mapping from parameter names to values (lr: 0.01), got " +
                  (item.IsMap() ? std::string("an empty mapping") : describe_node(item)));
      ok = false;
      continue;
    }
    search::Config point;
    std::map<std::string, YAML::Node> keys, values_at;
    std::set<std::string> seen;
    for (const auto& entry : item) {
      if (!r.check_key(entry.first, item_path)) {
        ok = false;
        continue;
      }
      const std::string name = entry.first.Scalar();
      const std::string value_path = item_path + "." + name;
      if (!seen.insert(name).second) {
        r.error(entry.first, value_path, "duplicate key '" + name + "'");
        ok = false;
        continue;
      }
      const search::ParameterSpec* p = sweep.find_parameter(name);
      if (!p) {
        if (!written.count(name)) {
          r.error(entry.first, value_path,
                  "'" + name + "' is not a parameter of this sweep" + did_you_mean(name, names) +
                      "; a point sets parameters (" + join_alternatives(names) + ")");
        }
        ok = false;
        continue;
      }
      const auto* option = trainers::find_training_hyperparameter(name);
      const auto value = r.read_value(entry.second, value_path, option && option->fractions);
      if (!value) {
        ok = false;
        continue;
      }
      if (const std::string hint = whole_number_hint(*p, *value, entry.second.Scalar()); !hint.empty()) {
        r.error(entry.second, value_path, hint);
        ok = false;
        continue;
      }
      keys[name] = entry.first;
      values_at[name] = entry.second;
      if (p->branch >= 0) {  // which branch judges it depends on the point's other values: below
        point[name] = *value;
        continue;
      }
      std::string why;
      const auto drawn = search::as_drawn(*p, *value, why);
      if (!drawn) {
        why += quoted_value_hint(entry.second);
        // A misspelt listed word; not one that differs from a listed value only in type.
        std::vector<std::string> words;
        for (const auto& v : p->values) words.push_back(search::to_string(v));
        const auto* text = std::get_if<std::string>(&*value);
        if (text && std::find(words.begin(), words.end(), *text) == words.end()) why += did_you_mean(*text, words);
        r.error(entry.second, value_path, why);
        ok = false;
        continue;
      }
      point[name] = *drawn;
    }
    if (point.size() < item.size()) continue;  // a condition may name what failed: judged once it reads
    // The point's values and the constants that exist beside them, in
    // condition order (a constant with a condition that fails is absent).
    search::Config fixed;
    for (const auto& p : space->parameters()) {
      if (point.count(p.name)) {
        fixed[p.name] = point.at(p.name);
      } else if (p.distribution == search::Distribution::kConst && search::SearchSpace::active(p, fixed)) {
        fixed[p.name] = p.values.at(0);
      }
    }
    for (auto& [name, value] : point) {
      const auto branches = sweep.parameter_branches(name);
      if (branches.front()->branch < 0) {
        const std::string why = absent_because(*branches.front(), fixed, sweep);
        if (!why.empty()) {
          r.error(keys[name], item_path + "." + name, why);
          ok = false;
        }
        continue;
      }
      if (!branch_value(r, sweep, branches, fixed, values_at[name], item_path + "." + name, value)) ok = false;
    }
    points.push_back(std::move(point));
  }
  if (!ok || !r.ok()) return;  // the trial count needs a valid budget and search
  const auto& s = sweep.search;
  // (Hyperband's count saturates rather than overflow: past a million, check_trial_count refuses it.)
  const std::int64_t one_pass =
      s.method == SearchMethod::kHyperband
          ? search::started_trials(search::hyperband_brackets(sweep.budget.max, sweep.budget.min, s.eta))
          : 0;
  const std::int64_t trials =
      s.method == SearchMethod::kHyperband
          ? std::min(one_pass, std::numeric_limits<std::int64_t>::max() / s.iterations) * s.iterations
          : s.method == SearchMethod::kPbt ? s.population : s.trials;
  if (static_cast<std::int64_t>(points.size()) > trials) {
    const bool hyperband = s.method == SearchMethod::kHyperband;
    const bool pbt = s.method == SearchMethod::kPbt;
    r.error((*node)[static_cast<size_t>(trials)], path + "[" + std::to_string(trials) + "]",
            std::to_string(points.size()) + " points, but the sweep starts " + std::to_string(trials) +
                (trials == 1 ? " trial" : " trials") +
                (hyperband ? " (Hyperband's brackets)" : pbt ? " (search.population)" : " (search.trials)") +
                " and each point is one: remove points, or " +
                (hyperband ? "raise budget.max or search.iterations" : pbt ? "raise search.population" : "raise search.trials"));
    return;
  }
  sweep.search.points = std::move(points);
}

}  // namespace hfta::core
