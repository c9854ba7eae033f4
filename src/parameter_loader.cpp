// Loads the `parameters` section: distributions, their fields, the option each
// parameter sets, conditions, and what the search method needs of them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "hfta/core/did_you_mean.h"
#include "hfta/core/other_tools_names.h"
#include "hfta/search/search_space.h"
#include "option_values.h"
#include "sweep_sections.h"

namespace hfta::core {
namespace {

// `text` as a YAML flow scalar: plain where it reads back as itself, else
// double-quoted ("0.5: x" would read as a mapping).
std::string yaml_scalar(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_of(":#{}[],&*!|>'\"%@`\\") == std::string::npos &&
                     text.front() != ' ' && text.back() != ' ' && text.front() != '?';
  if (plain) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return quoted + "\"";
}

using search::Distribution;
using search::ParameterSpec;
using search::ParamValue;
using trainers::OptionSpec;
using trainers::OptionType;

// The fields each distribution takes, besides distribution, fuse and when.
std::vector<std::string> fields_of(Distribution d) {
  switch (d) {
    case Distribution::kUniform:
    case Distribution::kLogUniform:
    case Distribution::kIntUniform:
    case Distribution::kIntLogUniform: return {"min", "max"};
    case Distribution::kQuantized: return {"min", "max", "q", "log"};
    case Distribution::kChoice: return {"values", "probabilities"};
    case Distribution::kGrid: return {"values"};
    case Distribution::kConst: return {"value"};
  }
  return {};
}

bool is_integer_distribution(Distribution d) {
  return d == Distribution::kIntUniform || d == Distribution::kIntLogUniform;
}

bool is_whole(double v) { return std::floor(v) == v; }

constexpr std::int64_t kMaxExactInt = std::int64_t(1) << 53;

// Where a parameter's values go: a model option or a training hyperparameter.
const OptionSpec* find_target(const std::string& name, const trainers::ModelSpec* model) {
  if (model) {
    if (const OptionSpec* o = model->find_option(name)) return o;
  }
  return trainers::find_training_hyperparameter(name);
}

std::vector<std::string> target_names(const trainers::ModelSpec* model) {
  std::vector<std::string> names;
  if (model) names = model->option_names();
  for (const auto& h : trainers::training_hyperparameters()) names.push_back(h.name);
  return names;
}

class ParameterReader {
 public:
  ParameterReader(YamlReader& r, const trainers::ModelSpec* model) : r_(r), model_(model) {}

  // `key`: the parameter's name in the file; `branch`: the index of `node` in
  // its list of branches (-1: no list).
  std::optional<ParameterSpec> read(const std::string& name, const YAML::Node& key,
                                    const YAML::Node& node, int branch = -1) {
    ParameterSpec spec;
    spec.name = name;
    spec.branch = branch;
    const std::string path = parameter_path(spec);
    const OptionSpec* target = find_target(name, model_);
    if (!target && model_ && branch <= 0) {  // said once for all branches
      std::string hint = other_tools_name(NameKind::kParameter, "", name, target_names(model_));
      if (hint.empty()) hint = per_value_name_hint(name);
      if (hint.empty()) hint = did_you_mean(name, target_names(model_));
      std::vector<std::string> hyperparameters;
      for (const auto& h : trainers::training_hyperparameters()) hyperparameters.push_back(h.name);
      r_.error(key, "parameters." + name,
               "unknown parameter '" + name + "'" + hint + "; a parameter sets an option of model " + model_->name +
                   " (" + join_alternatives(model_->option_names()) + ") or a training hyperparameter (" +
                   join_alternatives(hyperparameters) + ")");
    }
    if (!node.IsMap()) {
      // `optimizer: adam`, as W&B's and Hydra's sweeps fix a value.
      const std::string fixed =
          node.IsScalar() ? "; a fixed value is written " + name + ": {value: " + yaml_scalar(node.Scalar()) + "}" : "";
      r_.error(node, path,
               "expected a mapping with a distribution and its fields, got " + describe_node(node) + fixed);
      return std::nullopt;
    }
    if (!read_distribution(path, node, spec)) return std::nullopt;

    std::vector<std::string> allowed = fields_of(spec.distribution);
    allowed.insert(allowed.end(), {"distribution", "fuse", "when"});
    r_.check_mapping(node, path, allowed,
                     std::string(" (the fields of ") +
                         search::distribution_name(spec.distribution) + ")");

    fraction_list_ = target && target->fractions;  // milestones: [0.5, 0.75] is one value
    bool ok = read_fields(path, node, spec);
    if (auto fuse = r_.child(node, path, "fuse", false)) {
      if (auto v = r_.read_bool(*fuse, path + ".fuse")) {
        spec.fuse = *v;
      } else {
        ok = false;  // reported; what fuse was meant to be is not known, so nothing else is said of it
      }
    }
    if (auto when = r_.child(node, path, "when", false)) read_when(path + ".when", *when, spec);
    if (branch >= 0 && !r_.child(node, path, "when", false)) {
      r_.error(node, path,
               "a branch of '" + name + "' needs a when: the condition under which it gives " + name +
                   " its values (when: {optimizer: sgd}); without conditions, write one mapping, not a list");
      ok = false;
    } else if (branch >= 0 && spec.when.empty()) {
      ok = false;  // its when was refused, and said so
    } else if (branch >= 0 && spec.distribution == Distribution::kGrid) {
      r_.error(node, path,
               "a grid cannot have branches (its cycle counts each grid once): give it one list of values "
               "with one when, or make the branches choices");
      ok = false;
    }
    const YAML::Node& at = branch >= 0 ? node : key;  // a branch's problems point at the branch
    if (ok && target) ok = check_against_target(path, at, node, *target, spec);
    if (!ok) return std::nullopt;
    positions_[path] = at.Mark();
    return spec;
  }

  // `sgd_lr` or `lr_adam`, as Optuna code names one setting per optimizer:
  // here that is one parameter with branches. Empty where the name is not so.
  std::string per_value_name_hint(const std::string& name) const {
    for (const auto& setting : {"optimizer", "schedule"}) {
      for (const auto& value : trainers::find_training_hyperparameter(setting)->allowed) {
        for (const std::string& rest : {name.rfind(value + "_", 0) == 0 ? name.substr(value.size() + 1) : "",
                                        name.size() > value.size() + 1 &&
                                                name.compare(name.size() - value.size() - 1, std::string::npos, "_" + value) == 0
                                            ? name.substr(0, name.size() - value.size() - 1)
                                            : ""}) {
          if (rest.empty() || !find_target(rest, model_)) continue;
          return " (a " + rest + " for " + setting + " " + value + " is a branch of " + rest + ": " + rest +
                 ": [{..., when: {" + setting + ": " + value + "}}, ...])";
        }
      }
    }
    return "";
  }

  // Conditions name other parameters: checked once every parameter is read.
  void check_conditions(std::vector<ParameterSpec>& params, const std::set<std::string>& declared) {
    std::map<std::string, std::vector<ParameterSpec*>> by_name;
    for (auto& p : params) by_name[p.name].push_back(&p);
    for (auto& p : params) {
      const std::size_t said = r_.diagnostics().size();
      for (auto& c : p.when) {
        const std::string path = parameter_path(p) + ".when." + c.parameter;
        const YAML::Mark mark = when_marks_[parameter_path(p) + "/" + c.parameter];
        auto it = by_name.find(c.parameter);
        if (c.parameter == p.name) {
          r_.error_at(mark, path, "a parameter cannot depend on itself");
        } else if (it == by_name.end()) {
          // A parameter that is declared but invalid was reported already.
          if (declared.count(c.parameter)) continue;
          const std::vector<std::string> names(declared.begin(), declared.end());
          // A setting (optimizer) is no parameter until the sweep makes it one.
          const OptionSpec* setting = find_target(c.parameter, model_);
          const std::string why =
              !setting               ? did_you_mean(c.parameter, names)
              : setting->shapes_data ? " (" + c.parameter + " is set under task.options, the same in every trial: drop "
                                       "the condition)"
                                     : " (" + c.parameter + " is not tuned, so it has one value in every trial: a "
                                       "condition needs it among the parameters, taking the values the condition "
                                       "names; or drop the condition)";
          r_.error_at(mark, path, "no parameter '" + c.parameter + "'" + why);
        } else if (it->second.front()->branch >= 0) {
          // Its values would depend on which branch holds: conditions name parameters with one set.
          r_.error_at(mark, path,
                      "'" + c.parameter + "' has branches; a condition needs a choice, grid or const parameter "
                      "written as one mapping");
        } else if (!search::is_categorical(it->second.front()->distribution)) {
          r_.error_at(mark, path,
                      "'" + c.parameter + "' is " +
                          search::distribution_name(it->second.front()->distribution) +
                          "; a condition needs a choice, grid or const parameter");
        } else {
          for (auto& v : c.values) {
            const auto& options = it->second.front()->values;
            auto match = std::find_if(options.begin(), options.end(),
                                      [&](const ParamValue& o) { return same_value(o, v); });
            if (match == options.end()) {
              std::vector<std::string> texts;
              for (const auto& o : options) texts.push_back(search::to_string(o));
              // `depth: '2'` against values [1, 2]: the string, not the number.
              const auto* text = std::get_if<std::string>(&v);
              const bool quoted = text && std::find(texts.begin(), texts.end(), *text) != texts.end();
              // `when: {milestones: [0.3, 0.6]}` lists two numbers, not one list.
              const OptionSpec* named = find_target(c.parameter, model_);
              const std::string hint = named && named->fractions && search::is_numeric(v)
                                           ? " (a list of " + c.parameter + " is one value: write when: {" + c.parameter +
                                                 ": [[0.3, 0.6]]}, a list of such lists for several)"
                                           : did_you_mean(search::to_string(v), texts);
              r_.error_at(mark, path,
                          "'" + c.parameter + "' never takes the value " +
                              (quoted ? "'" + *text + "' (a quoted string: write " + *text + " without quotes)"
                                      : search::to_string(v) + hint) +
                              "; it takes " + join_alternatives(texts));
            } else {
              v = *match;  // same type as the parameter's own values
            }
          }
        }
      }
      if (r_.diagnostics().size() > said) refused_when_.insert(parameter_path(p));
    }
    check_cycles(params, by_name);
    check_branches_exclusive(params);
  }

  // Two branches that may hold in one trial would give it two values: each
  // pair needs a condition on one parameter with no value in common.
  void check_branches_exclusive(const std::vector<ParameterSpec>& params) {
    std::set<std::string> names;
    for (const auto& p : params) names.insert(p.name);
    // A condition on no parameter (or its own) was refused at it: the cause, not this.
    const auto judged = [&](const ParameterSpec& p) {
      return std::all_of(p.when.begin(), p.when.end(), [&](const search::Condition& c) {
        return c.parameter != p.name && names.count(c.parameter) > 0;
      });
    };
    for (std::size_t j = 0; j < params.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        const ParameterSpec &a = params[i], &b = params[j];
        if (a.name != b.name || a.branch < 0 || a.when.empty() || b.when.empty() || !judged(a) || !judged(b)) continue;
        if (a.fuse != b.fuse) {  // the packer keeps a name's trials apart or not, whichever branch gave the value
          r_.error_at(positions_[parameter_path(b)], parameter_path(b) + ".fuse",
                      std::string("this branch ") + (b.fuse ? "fuses (fuse true, written or by default)" : "has fuse: false") +
                          " and " + parameter_path(a) + (a.fuse ? " fuses" : " has fuse: false") + "; fuse applies to " +
                          b.name + " in every trial, so give every branch the same fuse");
          return;
        }
        const bool apart = std::any_of(a.when.begin(), a.when.end(), [&](const search::Condition& ca) {
          return std::any_of(b.when.begin(), b.when.end(), [&](const search::Condition& cb) {
            return ca.parameter == cb.parameter &&
                   std::none_of(ca.values.begin(), ca.values.end(), [&](const ParamValue& v) {
                     return std::any_of(cb.values.begin(), cb.values.end(),
                                        [&](const ParamValue& w) { return same_value(v, w); });
                   });
          });
        });
        if (apart) continue;
        r_.error_at(when_marks_[parameter_path(b) + "/" + b.when.front().parameter], parameter_path(b) + ".when",
                    "its condition may hold in the same trial as " + parameter_path(a) +
                        "'s, which would give " + b.name + " two values: give both a condition on one parameter "
                        "with no value in common, as when: {optimizer: sgd} and when: {optimizer: [adam, adamw]}");
        return;
      }
    }
  }

  // A training hyperparameter that only some optimizers or schedules read
  // must meet one of them in some trial: else it is sampled, recorded, and
  // changes nothing, and a user reads meaning into noise.
  void check_read(const std::vector<ParameterSpec>& params, const std::set<std::string>& declared) {
    const std::map<std::string, ParameterSpec> merged = merge_branches(params);
    std::map<std::string, const ParameterSpec*> by_name;
    for (const auto& [name, p] : merged) by_name[name] = &p;
    for (const auto& p : params) {
      const OptionSpec* target = find_target(p.name, model_);
      if (!target || target->read_with.empty()) continue;
      // A condition on no parameter was reported at it: the cause, not this.
      if (std::any_of(p.when.begin(), p.when.end(), [&](const search::Condition& c) { return !by_name.count(c.parameter); })) {
        continue;
      }
      const OptionSpec* other = trainers::find_training_hyperparameter(target->read_with);
      // The values read_with takes in the trials that sample p.
      std::set<std::string> takes;
      std::string how;
      auto it = by_name.find(target->read_with);
      // Declared but invalid: reported already, and its default is not what the user meant.
      if (it == by_name.end() && declared.count(target->read_with)) continue;
      if (it == by_name.end() || !it->second->when.empty()) takes.insert(other->default_value);
      if (it == by_name.end()) {
        how = target->read_with + " is " + other->default_value + " in every trial (its default)";
      } else {
        const auto own = std::find_if(p.when.begin(), p.when.end(),
                                       [&](const search::Condition& c) { return c.parameter == target->read_with; });
        // A condition on a value the parameter never takes was reported at it: the cause, not this.
        const auto& values = it->second->values;
        const auto never_taken = [&](const ParamValue& v) {
          return std::none_of(values.begin(), values.end(), [&](const ParamValue& o) { return same_value(o, v); });
        };
        if (own != p.when.end() && std::any_of(own->values.begin(), own->values.end(), never_taken)) continue;
        for (const auto& v : own != p.when.end() ? own->values : it->second->values) takes.insert(search::to_string(v));
        std::vector<std::string> listed(takes.begin(), takes.end());
        how = target->read_with + " takes only " + join_alternatives(listed) +
              (own != p.when.end() ? " where " + p.name + " is sampled" : "");
      }
      const auto& readers = target->read_with_values;
      if (std::any_of(readers.begin(), readers.end(), [&](const std::string& v) { return takes.count(v) > 0; })) continue;
      // one_cycle runs from its own peak rate: the lr a user tunes there is max_lr.
      const bool one_cycle_lr = p.name == "lr" && takes.count("one_cycle") > 0;
      r_.error_at(positions_[parameter_path(p)], parameter_path(p),
                  "'" + p.name + "' is read only with " + target->read_with + " " + join_alternatives(readers) +
                      ", but " + how + ": it would be set in every trial that samples it and change nothing; give " + target->read_with +
                      " one of those values, or remove '" + p.name + "'" +
                      (one_cycle_lr ? " (one_cycle's learning rate is max_lr: tune that)" : ""));
    }
  }

  // Each name's specs as one: a branched name takes every value any branch
  // lists, and may be absent (a condition kept) unless its branches cover every trial.
  static std::map<std::string, ParameterSpec> merge_branches(const std::vector<ParameterSpec>& params) {
    std::map<std::string, ParameterSpec> merged;
    std::map<std::string, std::vector<const ParameterSpec*>> branches;
    for (const auto& p : params) {
      branches[p.name].push_back(&p);
      auto [it, fresh] = merged.emplace(p.name, p);
      if (fresh) continue;
      for (const auto& v : p.values) {
        auto& values = it->second.values;
        if (std::none_of(values.begin(), values.end(), [&](const ParamValue& o) { return same_value(o, v); })) {
          values.push_back(v);
        }
      }
    }
    for (auto& [name, spec] : merged) {
      if (search::always_present(branches[name], params)) spec.when.clear();
    }
    return merged;
  }

  // PyTorch's SGD refuses Nesterov momentum without momentum or with
  // dampening ("Nesterov momentum requires a momentum and zero dampening"):
  // a trial that may pair them would train what PyTorch would not. Continuous
  // ranges count as never exactly 0 (a draw of 0 has no chance); a parameter
  // absent from a trial (its `when`) has its default there (both 0).
  void check_nesterov(const std::vector<ParameterSpec>& params, const std::set<std::string>& declared) {
    std::map<std::string, std::vector<const ParameterSpec*>> by_name;  // a name's branches
    for (const auto& p : params) by_name[p.name].push_back(&p);
    for (auto it = by_name.begin(); it != by_name.end();) it = judged(it->second).empty() ? by_name.erase(it) : std::next(it);
    if (!by_name.count("nesterov")) return;
    for (const char* name : {"momentum", "dampening"}) {
      if (declared.count(name) && !by_name.count(name)) return;  // invalid: reported already
    }
    for (const ParameterSpec* n : by_name.at("nesterov")) {
      if (!check_nesterov_branch(*n, by_name, params)) return;
    }
  }

  // check_nesterov for one spec of nesterov; false once it has reported.
  bool check_nesterov_branch(const ParameterSpec& n, const std::map<std::string, std::vector<const ParameterSpec*>>& by_name,
                             const std::vector<ParameterSpec>& params) {
    const search::ParamValue yes = true;
    auto holds = [](const std::vector<search::ParamValue>& values, const search::ParamValue& v) {
      return std::any_of(values.begin(), values.end(), [&](const search::ParamValue& x) { return x == v; });
    };
    if (!holds(n.values, yes)) return true;
    // Where nesterov is true, nesterov's own condition on X holds.
    auto nesterov_limits = [&](const std::string& x) -> const std::vector<search::ParamValue>* {
      for (const auto& c : n.when) {
        if (c.parameter == x) return &c.values;
      }
      return nullptr;
    };
    // Whether p's conditions hold in every trial where nesterov is true
    // (each implied by nesterov = true or by nesterov's own conditions).
    auto present_with_nesterov = [&](const ParameterSpec& p) {
      if (nesterov_limits(p.name)) return true;  // nesterov's own condition on p: p is there wherever nesterov is
      return std::all_of(p.when.begin(), p.when.end(), [&](const search::Condition& c) {
        if (c.parameter == "nesterov") return holds(c.values, yes);
        const auto* limits = nesterov_limits(c.parameter);
        return limits && std::all_of(limits->begin(), limits->end(), [&](const auto& v) { return holds(c.values, v); });
      });
    };
    // Whether p may be present in some trial where nesterov is true.
    auto may_meet_nesterov = [&](const ParameterSpec& p) {
      return std::all_of(p.when.begin(), p.when.end(), [&](const search::Condition& c) {
        if (c.parameter == "nesterov") return holds(c.values, yes);
        const auto* limits = nesterov_limits(c.parameter);
        return !limits || std::any_of(limits->begin(), limits->end(), [&](const auto& v) { return holds(c.values, v); });
      });
    };
    // Whether `name`, where nesterov is true, may take a value that `bad` holds
    // for: its default, 0, where none of its branches is sure to be there, or a
    // value of a branch that may be.
    auto may_be = [&](const std::string& name, const std::function<bool(double)>& bad) {
      const auto found = by_name.find(name);
      const std::vector<const ParameterSpec*> specs = found == by_name.end() ? std::vector<const ParameterSpec*>{}
                                                                               : found->second;
      // (Branches on one parameter that cover its values where nesterov is true count too.)
      const auto* limits = specs.empty() || specs.front()->when.empty() ? nullptr
                                                                       : nesterov_limits(specs.front()->when.front().parameter);
      const bool always = std::any_of(specs.begin(), specs.end(), [&](const ParameterSpec* p) { return present_with_nesterov(*p); }) ||
                          search::always_present(specs, params, limits);
      if (!always && bad(0)) return true;
      for (const ParameterSpec* p : specs) {
        if (!present_with_nesterov(*p) && !may_meet_nesterov(*p)) continue;
        const auto* listed = nesterov_limits(name);
        if (!listed && search::is_categorical(p->distribution)) listed = &p->values;
        if (listed) {
          if (std::any_of(listed->begin(), listed->end(),
                          [&](const search::ParamValue& v) { return search::is_numeric(v) && bad(search::as_double(v)); })) {
            return true;
          }
          continue;
        }
        if (p->distribution == search::Distribution::kQuantized) {  // min + k q: 0 when -min/q is a whole k
          const double k = -p->min / p->q;
          if (bad(0) && k >= 0 && std::abs(k - std::round(k)) < 1e-9 && p->min + std::round(k) * p->q <= p->max) return true;
        }
        if (bad((p->min + p->max) / 2)) return true;  // a range: almost every draw is inside it, as its middle is
      }
      return false;
    };
    std::string why, fix;
    if (may_be("momentum", [](double m) { return m <= 0; })) {
      why = by_name.count("momentum") ? "momentum may be 0" : "momentum is 0 in every trial (its default)";
      // (A condition names a listed parameter without branches: else, what decides the branches.)
      const auto momentum = by_name.find("momentum");
      const ParameterSpec* m = momentum == by_name.end() ? nullptr : momentum->second.front();
      fix = m && m->branch >= 0 ? "give momentum values above 0 in every branch that may meet nesterov, or give nesterov a "
                                  "condition on what decides momentum's branches"
            : m && !search::is_categorical(m->distribution)
                ? "give momentum a range above 0"
                : "give momentum values above 0, or sample nesterov only with them (when: {momentum: [...]})";
    } else if (may_be("dampening", [](double d) { return d != 0; })) {
      why = "dampening may be other than 0";
      fix = "leave dampening at 0 where nesterov may be true (when: {nesterov: [false]})";
    }
    if (why.empty()) return true;
    r_.error_at(positions_[parameter_path(n)], parameter_path(n),
                "nesterov may be true where " + why + ": SGD's Nesterov momentum needs a momentum above 0 and no "
                "dampening (PyTorch refuses it); " + fix);
    return false;
  }

  // Attention splits d_model evenly across its heads (task.options alone are
  // checked as they load): no trial may pair a d_model with heads that do
  // not divide it. Conditions are followed: on each other, and on the
  // unconditional listed parameters either names (every combination of
  // theirs); one on any other parameter may hold or not. Where a parameter's
  // condition leaves it out, a trial has its task value.
  void check_heads(const SweepConfig& sweep, const std::set<std::string>& declared) {
    const auto d_task = sweep.task.options.find("d_model"), h_task = sweep.task.options.find("heads");
    if (d_task == sweep.task.options.end() || h_task == sweep.task.options.end() ||
        !search::is_numeric(d_task->second) || !search::is_numeric(h_task->second)) {
      return;
    }
    const auto ds = judged(sweep.parameter_branches("d_model")), hs = judged(sweep.parameter_branches("heads"));
    if ((ds.empty() && hs.empty()) || (declared.count("d_model") && ds.empty()) || (declared.count("heads") && hs.empty())) {
      return;
    }
    std::vector<const ParameterSpec*> both = ds;
    both.insert(both.end(), hs.begin(), hs.end());
    for (const auto& fixed : third_values(sweep, both)) {
      for (const ParameterSpec* d : holding(ds, fixed)) {
        for (const ParameterSpec* h : holding(hs, fixed)) {
          if (!check_heads_at(d, h, fixed, d_task->second, h_task->second)) return;
        }
      }
    }
  }

  // The specs of a name that may give its value where `fixed` holds: its one
  // spec; the branch whose conditions `fixed` decides and meets; else those it
  // leaves undecided, and null (absent: its task value) where none may hold.
  static std::vector<const ParameterSpec*> holding(const std::vector<const ParameterSpec*>& specs,
                                                   const search::Config& fixed) {
    if (specs.empty()) return {nullptr};
    if (specs.front()->branch < 0) return specs;
    std::vector<const ParameterSpec*> out;
    for (const ParameterSpec* b : specs) {
      const bool decided = std::all_of(b->when.begin(), b->when.end(),
                                       [&](const search::Condition& c) { return fixed.count(c.parameter) > 0; });
      if (!decided) {
        out.push_back(b);
      } else if (search::SearchSpace::active(*b, fixed)) {
        return {b};
      }
    }
    out.push_back(nullptr);
    return out;
  }

  // check_heads for one spec (or none) of each where `fixed` holds; false once it has reported.
  bool check_heads_at(const ParameterSpec* d, const ParameterSpec* h, const search::Config& fixed,
                      const ParamValue& d_task, const ParamValue& h_task) {
    if (!d && !h) return true;
    for (const auto& dv : states(d)) {
      for (const auto& hv : states(h)) {
        if (!may_be(d, dv.has_value(), "heads", hv, fixed) || !may_be(h, hv.has_value(), "d_model", dv, fixed)) {
          continue;
        }
        const auto dm = dv ? *dv : std::llround(search::as_double(d_task));
        const auto hs = hv ? *hv : std::llround(search::as_double(h_task));
        if (hs <= 0 || dm % hs == 0) continue;
        const std::string path = parameter_path(h ? *h : *d);
        r_.error_at(positions_[path], path,
                    std::to_string(hs) + " heads do not divide d_model " + std::to_string(dm) +
                        " evenly, and a trial may take both (attention splits d_model across its heads): list "
                        "only values that divide, or sample heads only with the d_model values they divide " +
                        (d && d->branch >= 0 ? std::string("(d_model has branches: a condition on what decides them)")
                                             : std::string("(when: {d_model: [...]})")));
        return false;
      }
    }
    return true;
  }

  // Every combination of the values of the unconditional listed parameters
  // that `specs`' conditions name (up to 4096; beyond, none is fixed).
  static std::vector<search::Config> third_values(const SweepConfig& sweep,
                                                  const std::vector<const ParameterSpec*>& specs) {
    std::vector<search::Config> out(1);
    for (const auto* spec : specs) {
      for (const auto& c : spec ? spec->when : std::vector<search::Condition>{}) {
        const ParameterSpec* t = sweep.find_parameter(c.parameter);
        if (!t || !t->when.empty() || !search::is_categorical(t->distribution) || out.front().count(t->name) ||
            std::any_of(specs.begin(), specs.end(), [&](const ParameterSpec* s) { return s == t; })) {
          continue;
        }
        if (out.size() * t->values.size() > 4096) return {search::Config{}};
        std::vector<search::Config> more;
        for (const auto& config : out) {
          for (const auto& v : t->values) {
            more.push_back(config);
            more.back()[t->name] = v;
          }
        }
        out = std::move(more);
      }
    }
    return out;
  }

  // A whole-number parameter's states in a trial: absent (nullopt: its task
  // value), where its `when` may leave it out, and each value it may take
  // (the first 65536 of a range).
  static std::vector<std::optional<long long>> states(const ParameterSpec* p) {
    std::vector<std::optional<long long>> out;
    if (!p || !p->when.empty()) out.emplace_back();
    if (!p) return out;
    if (search::is_categorical(p->distribution)) {
      for (const auto& v : p->values) {
        if (search::is_numeric(v)) out.emplace_back(std::llround(search::as_double(v)));
      }
      return out;
    }
    const double step = p->distribution == Distribution::kQuantized ? p->q : 1.0;
    if (step <= 0 || (p->distribution != Distribution::kQuantized && p->distribution != Distribution::kIntUniform &&
                      p->distribution != Distribution::kIntLogUniform)) {
      return out;
    }
    const double first = p->distribution == Distribution::kQuantized ? p->min : std::ceil(p->min);
    for (double x = first; x <= p->max + 1e-9 && out.size() < 65536; x += step) out.emplace_back(std::llround(x));
    return out;
  }

  // Whether p may be present (or absent) in a trial where `other` is in
  // `state` (nullopt: absent) and the parameters in `fixed` hold their values
  // there. A condition on any other parameter may hold or not.
  static bool may_be(const ParameterSpec* p, bool present, const std::string& other,
                     const std::optional<long long>& state, const search::Config& fixed) {
    if (!p) return !present;
    bool unknown = false;
    for (const auto& c : p->when) {
      bool holds = false;
      if (c.parameter == other) {
        holds = state && std::any_of(c.values.begin(), c.values.end(), [&](const ParamValue& v) {
                  return search::is_numeric(v) && std::llround(search::as_double(v)) == *state;
                });
      } else if (const auto it = fixed.find(c.parameter); it != fixed.end()) {
        holds = std::any_of(c.values.begin(), c.values.end(), [&](const ParamValue& v) { return v == it->second; });
      } else {
        unknown = true;
        continue;
      }
      if (!holds) return !present;  // a condition that fails leaves it out
    }
    return unknown || present;
  }

  // A warm-up's length in steps or as a share of the budget: a trial that may
  // have both would leave one of them changing nothing.
  void check_one_warmup(const SweepConfig& sweep) {
    const auto stepss = judged(sweep.parameter_branches("warmup")), ratios = judged(sweep.parameter_branches("warmup_ratio"));
    if (stepss.empty() || ratios.empty()) return;
    std::vector<const ParameterSpec*> both = stepss;
    both.insert(both.end(), ratios.begin(), ratios.end());
    for (const auto& fixed : third_values(sweep, both)) {
      for (const ParameterSpec* steps : holding(stepss, fixed)) {
        for (const ParameterSpec* ratio : holding(ratios, fixed)) {
          if (!steps || !ratio || !may_be(steps, true, "", std::nullopt, fixed) ||
              !may_be(ratio, true, "", std::nullopt, fixed)) {
            continue;
          }
          r_.error_at(positions_[parameter_path(*ratio)], parameter_path(*ratio),
                      "a warm-up is given in steps (warmup) or as a fraction of budget.max (warmup_ratio), and a trial "
                      "may have both: keep one of them, or give them conditions no trial meets together");
          return;
        }
      }
    }
  }

  void check_method(const SweepConfig& sweep) {
    if (sweep.search.method != SearchMethod::kGrid) return;
    for (const auto& p : sweep.parameters) {
      if (!p.probabilities.empty()) {
        r_.error_at(probability_marks_[parameter_path(p)], parameter_path(p) + ".probabilities",
                    "grid search trains every value of a choice, so its probabilities play no part: remove them, "
                    "or use another search.method");
      }
      if (!search::is_categorical(p.distribution)) {
        r_.error_at(positions_[parameter_path(p)], parameter_path(p),
                    "grid search takes only listed values (grid, choice or const), and '" + p.name + "' is " +
                        search::distribution_name(p.distribution) +
                        ": list the values it should take (values: [...]), or use another search.method");
      }
    }
  }

 private:
  bool read_distribution(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    if (auto d = r_.child(node, path, "distribution", false)) {
      auto i = r_.read_enum(*d, path + ".distribution", search::distribution_names());
      if (!i) return false;
      spec.distribution = *search::distribution_from_name(search::distribution_names()[*i]);
      return true;
    }
    // W&B's shorthand: `values: [...]` is a choice, `value: x` a constant.
    if (r_.child(node, path, "values", false)) {
      spec.distribution = Distribution::kChoice;
    } else if (r_.child(node, path, "value", false)) {
      spec.distribution = Distribution::kConst;
    } else {
      // A misspelling of one of the three is what is wrong, and says where.
      const std::vector<std::string> kinds = {"distribution", "values", "value"};
      bool misspelt = false;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) continue;
        const std::string key = entry.first.Scalar();
        if (const std::string meant = closest_match(key, kinds); !meant.empty()) {
          r_.error(entry.first, path + "." + key, "unknown key '" + key + "' (did you mean '" + meant + "'?)");
          misspelt = true;
        } else if (const std::string other = other_tools_name(NameKind::kKey, path, key); !other.empty()) {
          r_.error(entry.first, path + "." + key, "unknown key '" + key + "'" + other);  // (grid_search: [...])
          misspelt = true;
        }
      }
      if (!misspelt) {
        r_.error(node, path + ".distribution",
                 "missing 'distribution' (one of " + join_alternatives(search::distribution_names()) +
                     "), or 'values' for a choice, or 'value' for a constant");
      }
      return false;
    }
    return true;
  }

  bool read_fields(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    switch (spec.distribution) {
      case Distribution::kChoice:
      case Distribution::kGrid: return read_values(path, node, spec);
      case Distribution::kConst: {
        auto v = r_.child(node, path, "value", true);
        if (!v) return false;
        auto value = r_.read_value(*v, path + ".value", fraction_list_);
        if (!value) return false;
        spec.values = {*value};
        return true;
      }
      default: return read_range(path, node, spec);
    }
  }

  bool read_values(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    auto values = r_.child(node, path, "values", true);
    if (!values) return false;
    const std::string values_path = path + ".values";
    if (!values->IsSequence()) {
      r_.error(*values, values_path, "expected a list of values, got " + describe_node(*values));
      return false;
    }
    if (values->size() == 0) {
      r_.error(*values, values_path,
               std::string("a ") + search::distribution_name(spec.distribution) +
                   " needs at least one value, got an empty list");
      return false;
    }
    bool ok = true;
    std::map<std::string, std::size_t> listed_at;  // each value (value_key) and its index in the file
    for (size_t i = 0; i < values->size(); ++i) {
      const YAML::Node item = (*values)[i];
      const std::string item_path = values_path + "[" + std::to_string(i) + "]";
      auto v = r_.read_value(item, item_path, fraction_list_);
      if (!v) {
        ok = false;
        continue;
      }
      // Once per repeat, naming the first listing (thrice is two problems, not three).
      const auto [first, is_new] = listed_at.emplace(value_key(*v), i);
      if (!is_new) {
        r_.error(item, item_path,
                 "the value " + search::to_string(*v) + " is listed twice (as values[" + std::to_string(first->second) + "])");
        ok = false;
        continue;
      }
      spec.values.push_back(*v);
    }
    if (spec.distribution == Distribution::kChoice && ok) ok = read_probabilities(path, node, spec);
    return ok;
  }

  // W&B's categorical probabilities: one per value, each above 0, summing to 1.
  bool read_probabilities(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    auto list = r_.child(node, path, "probabilities", false);
    if (!list) return true;
    const std::string list_path = path + ".probabilities";
    if (!list->IsSequence() || list->size() != spec.values.size()) {
      r_.error(*list, list_path,
               "expected a list of " + std::to_string(spec.values.size()) + " numbers, one for each of values, got " +
                   (list->IsSequence() ? std::to_string(list->size()) + " items" : describe_node(*list)));
      return false;
    }
    bool ok = true;
    double sum = 0;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string item_path = list_path + "[" + std::to_string(i) + "]";
      const auto p = r_.read_number((*list)[i], item_path);
      if (p && !(*p > 0 && *p <= 1)) {
        r_.error((*list)[i], item_path,
                 "expected a probability in (0, 1], got " + search::to_string(*p) +
                     (*p == 0 ? " (a value never drawn: remove it from values)" : ""));
      }
      ok &= p && *p > 0 && *p <= 1;
      if (ok) spec.probabilities.push_back(*p), sum += *p;
    }
    if (ok && std::abs(sum - 1) > 1e-6) {
      r_.error(*list, list_path, "the probabilities sum to " + search::to_string(sum) + ", not 1");
      ok = false;
    }
    if (ok) probability_marks_[parameter_path(spec)] = list->Mark();
    if (!ok) spec.probabilities.clear();
    return ok;
  }

  bool read_range(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    const bool integer = is_integer_distribution(spec.distribution);
    auto read_bound = [&](const char* key, double& out) -> bool {
      auto n = r_.child(node, path, key, true);
      if (!n) return false;
      const std::string p = path + "." + key;
      if (integer) {
        auto v = r_.read_int(*n, p);
        // Bounds are kept as doubles: beyond 2^53 they would silently change.
        if (v && (*v > kMaxExactInt || *v < -kMaxExactInt)) {
          r_.error(*n, p, "expected an integer of at most 2^53 (9007199254740992) in magnitude, got " + describe_node(*n));
          return false;
        }
        if (v) out = static_cast<double>(*v);
        return v.has_value();
      }
      auto v = r_.read_number(*n, p);
      if (v) out = *v;
      return v.has_value();
    };
    bool ok = read_bound("min", spec.min) & read_bound("max", spec.max);
    if (spec.distribution == Distribution::kQuantized) {
      ok &= read_bound("q", spec.q);
      if (auto l = r_.child(node, path, "log", false)) {
        auto v = r_.read_bool(*l, path + ".log");
        ok &= v.has_value();
        if (v) spec.log = *v;
      }
      if (ok && spec.q <= 0) {
        r_.error(*r_.child(node, path, "q", false), path + ".q",
                 "expected a step q > 0, got " + search::to_string(spec.q));
        ok = false;
      }
    }
    if (!ok) return false;
    const YAML::Node min_node = *r_.child(node, path, "min", false);
    const char* dname = search::distribution_name(spec.distribution);
    if (spec.min > spec.max) {
      r_.error(min_node, path + ".min",
               "min (" + search::to_string(spec.min) + ") is greater than max (" +
                   search::to_string(spec.max) + ")");
      return false;
    }
    // As quantize() counts steps (search_space.cpp): 0.1 to 0.3 by 0.2 is two values.
    if (spec.distribution == Distribution::kQuantized && spec.min < spec.max &&
        search::quantized_steps(spec) < 1) {
      r_.error(*r_.child(node, path, "q", false), path + ".q",
               "the step q (" + search::to_string(spec.q) + ") is larger than the range max - min (" +
                   search::to_string(spec.max - spec.min) + "): only min could be drawn");
      return false;
    }
    const bool log = spec.distribution == Distribution::kLogUniform ||
                     spec.distribution == Distribution::kIntLogUniform || spec.log;
    if (log && spec.min <= 0) {
      r_.error(min_node, path + ".min",
               std::string(spec.log ? "a log-spaced quantized" : dname) +
                   " distribution samples in log space, so min must be > 0, got " +
                   search::to_string(spec.min));
      return false;
    }
    return true;
  }

  void read_when(const std::string& path, const YAML::Node& node, ParameterSpec& spec) {
    if (!node.IsMap() || node.size() == 0) {
      r_.error(node, path,
               "expected a mapping from parameter names to the values they must take, e.g. "
               "when: {optimizer: [sgd]}");
      return;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!r_.check_key(entry.first, path)) continue;
      const std::string other = entry.first.Scalar();
      const std::string p = path + "." + other;
      if (!seen.insert(other).second) {
        r_.error(entry.first, p, "duplicate key '" + other + "'");
        continue;
      }
      search::Condition c;
      c.parameter = other;
      const OptionSpec* named = find_target(other, model_);
      const bool fraction_list = named && named->fractions;  // when: {milestones: [[0.5, 0.75]]}
      auto add = [&](const YAML::Node& item) {
        auto v = r_.read_value(item, p, fraction_list);
        if (!v) return;
        for (const auto& earlier : c.values) {
          if (same_value(earlier, *v)) {
            r_.error(item, p, "the value " + search::to_string(*v) + " is listed twice");
            return;
          }
        }
        c.values.push_back(*v);
      };
      if (entry.second.IsSequence()) {
        if (entry.second.size() == 0) r_.error(entry.second, p, "expected at least one value");
        for (const auto& item : entry.second) add(item);
      } else {
        add(entry.second);
      }
      when_marks_[parameter_path(spec) + "/" + other] = entry.first.Mark();
      spec.when.push_back(std::move(c));
    }
    // By name, as the canonical form writes them: file order must not matter.
    std::sort(spec.when.begin(), spec.when.end(),
              [](const auto& a, const auto& b) { return a.parameter < b.parameter; });
  }

  // The values a parameter can take must suit the option it sets.
  // Problems with the whole parameter point at its name (`key`).
  bool check_against_target(const std::string& path, const YAML::Node& key,
                            const YAML::Node& node, const OptionSpec& target,
                            ParameterSpec& spec) {
    if (target.shapes_data) {
      r_.error(key, path, "it shapes the dataset every trial of the sweep shares; set it under task.options, not as a "
                          "parameter");
      return false;
    }
    const std::string owner = model_ && model_->find_option(target.name)
                                  ? "option '" + target.name + "' of model " + model_->name
                                  : "training hyperparameter '" + target.name + "'";
    if (search::is_categorical(spec.distribution)) {
      bool ok = true;
      for (size_t i = 0; i < spec.values.size(); ++i) {
        std::string why;
        auto fitted = fit_option_value(target, spec.values[i], &why);
        if (fitted) {
          spec.values[i] = *fitted;
          continue;
        }
        const std::string field = spec.distribution == Distribution::kConst
                                      ? ".value"
                                      : ".values[" + std::to_string(i) + "]";
        const YAML::Node at = *r_.child(node, path, spec.distribution == Distribution::kConst
                                                        ? "value"
                                                        : "values",
                                        false);
        r_.error(spec.distribution == Distribution::kConst ? at : at[i], path + field, why);
        ok = false;
      }
      if (!ok) return false;
    } else {
      if (target.type == OptionType::kBool || target.type == OptionType::kString) {
        r_.error(key, path,
                 std::string(search::distribution_name(spec.distribution)) +
                     " samples numbers, but " + owner + " is a " +
                     (target.fractions ? std::string("list of fractions") : option_type_name(target.type)) +
                     ": use choice or grid");
        return false;
      }
      if (target.type == OptionType::kInt) {
        const bool integral = is_integer_distribution(spec.distribution) ||
                              (spec.distribution == Distribution::kQuantized &&
                               is_whole(spec.min) && is_whole(spec.q));
        if (!integral) {
          r_.error(key, path,
                   owner + " is an integer: use int_uniform, int_log_uniform, or quantized "
                           "with whole min and q, not " +
                       search::distribution_name(spec.distribution));
          return false;
        }
      }
      if (!target.in_range(spec.min) || !target.in_range(spec.max)) {
        r_.error(key, path,
                 "the range [" + search::to_string(spec.min) + ", " +
                     search::to_string(spec.max) + "] leaves the valid values of " + owner +
                     " (" + target.range_text() + ")");
        return false;
      }
    }
    // (A condition makes even one value differ between trials: present or at its default.)
    const bool many = !spec.when.empty() ||
                      (search::is_categorical(spec.distribution) ? spec.values.size() > 1 : spec.min < spec.max);
    if (target.structural && spec.fuse && many) {
      // Left out, it is what it must be; written true, it is a misunderstanding worth naming.
      if (auto fuse = r_.child(node, path, "fuse", false)) {
        r_.error(*fuse, path + ".fuse",
                 owner + " changes the model's shape, kernels or input, so trials with "
                         "different values cannot share an array: write 'fuse: false', or leave fuse out");
        return false;
      }
      spec.fuse = false;
    }
    return true;
  }

  void check_cycles(const std::vector<ParameterSpec>& params,
                    const std::map<std::string, std::vector<ParameterSpec*>>& by_name) {
    std::map<std::string, int> state;  // 0 new, 1 on the path, 2 done
    std::function<bool(const std::string&)> visit = [&](const std::string& name) {
      int& s = state[name];
      if (s == 1) return true;
      if (s == 2) return false;
      s = 1;
      auto it = by_name.find(name);
      if (it != by_name.end()) {
        for (const ParameterSpec* branch : it->second) {
          for (const auto& c : branch->when) {
            if (c.parameter != name && by_name.count(c.parameter) && visit(c.parameter)) return true;
          }
        }
      }
      s = 2;
      return false;
    };
    for (const auto& p : params) {
      state.clear();
      if (visit(p.name)) {
        r_.error_at(positions_[parameter_path(p)], parameter_path(p) + ".when",
                    "conditions form a cycle through '" + p.name + "'");
        return;
      }
    }
  }

  YamlReader& r_;
  bool fraction_list_ = false;  ///< the parameter being read is a list of fractions (milestones: YamlReader::read_value)
  const trainers::ModelSpec* model_;
  std::map<std::string, YAML::Mark> positions_;
  std::map<std::string, YAML::Mark> probability_marks_;  ///< where each choice's probabilities are written
  std::map<std::string, YAML::Mark> when_marks_;
  /// Parameters whose conditions were refused: the checks that pair settings
  /// leave out their names (what they would say follows from the refusal).
  std::set<std::string> refused_when_;

  // A name's specs, or none where a condition of one of them was refused.
  std::vector<const ParameterSpec*> judged(const std::vector<const ParameterSpec*>& specs) const {
    const bool refused = std::any_of(specs.begin(), specs.end(),
                                     [&](const ParameterSpec* p) { return refused_when_.count(parameter_path(*p)) > 0; });
    return refused ? std::vector<const ParameterSpec*>{} : specs;
  }
};

}  // namespace

void load_parameters(YamlReader& r, const YAML::Node& node, const trainers::ModelSpec* model,
                     SweepConfig& sweep) {
  if (!node.IsMap()) {
    r.error(node, "parameters",
            "expected a mapping from parameter names to distributions, got " + describe_node(node));
    return;
  }
  if (node.size() == 0) {
    r.error(node, "parameters", "no parameters: a sweep needs at least one parameter to tune");
    return;
  }
  ParameterReader reader(r, model);
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!r.check_key(entry.first, "parameters")) continue;
    const std::string name = entry.first.Scalar();
    if (!seen.insert(name).second) {
      r.error(entry.first, "parameters." + name, "duplicate parameter '" + name + "'");
      continue;
    }
    if (name == "label_smoothing" && trainers::is_regression_loss(sweep.task.loss)) {
      r.error(entry.first, "parameters." + name,
              "label_smoothing smooths cross-entropy's classes; task.loss " + sweep.task.loss +
                  " learns a number, and no trial would read it");
      continue;
    }
    if (name == "class_weight" && model &&
        trainers::task_kind(*model, sweep.task.loss) != trainers::TaskKind::kClassification) {
      r.error(entry.first, "parameters." + name,
              "class_weight weighs a classifier's classes; " +
                  (trainers::is_regression_loss(sweep.task.loss) ? "task.loss " + sweep.task.loss + " learns a number"
                   : model->kind == trainers::TaskKind::kGan        ? model->name + " generates images"
                                                                    : model->name + " predicts tokens") +
                  ", and no trial would read it");
      continue;
    }
    const YAML::Node& value = entry.second;
    if (!value.IsSequence()) {
      if (auto spec = reader.read(name, entry.first, value)) sweep.parameters.push_back(std::move(*spec));
      continue;
    }
    // A list: one branch per condition (lr per optimizer), each a mapping.
    std::size_t first_other = 0;  // the first item that is no mapping
    while (first_other < value.size() && value[first_other].IsMap()) ++first_other;
    if (value.size() == 0 || first_other < value.size()) {
      const bool empty = value.size() == 0;
      r.error(empty ? value : value[first_other], "parameters." + name + (empty ? "" : "[" + std::to_string(first_other) + "]"),
              "expected a mapping with a distribution and its fields, or a list of such mappings with a when each "
              "(branches: lr per optimizer), got " +
                  (empty ? std::string("an empty list") : describe_node(value[first_other]) + " in a list") +
                  "; to choose among values, write values: [...]");
      continue;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (auto spec = reader.read(name, entry.first, value[i], static_cast<int>(i))) sweep.parameters.push_back(std::move(*spec));
    }
  }
  // By name, a name's branches in their order.
  std::stable_sort(sweep.parameters.begin(), sweep.parameters.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
  reader.check_conditions(sweep.parameters, seen);
  reader.check_read(sweep.parameters, seen);
  reader.check_nesterov(sweep.parameters, seen);
  reader.check_one_warmup(sweep);
  reader.check_heads(sweep, seen);
  reader.check_method(sweep);
}

}  // namespace hfta::core
