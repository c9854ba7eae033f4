#include "hfta/core/sweep_results.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <utility>

#include "hfta/core/sweep_corpus.h"
#include "hfta/core/sweep_importance.h"
#include "hfta/core/sweep_json.h"
#include "hfta/core/trial_export.h"
#include "hfta/search/pareto.h"
#include "hfta/search/scheduler.h"
#include "hfta/trainers/catalog.h"

namespace hfta::core {
namespace {

nlohmann::json params_json(const search::Config& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : c) out[k] = to_json(v);
  return out;
}

// A model's test metrics, with what its kind reports besides.
nlohmann::json test_json(const SweepConfig& sweep, const TestMetrics& test) {
  const auto kind = trainers::task_kind(*trainers::find_model(sweep.task.model), sweep.task.loss);
  if (kind == trainers::TaskKind::kRegression) return {{"loss", test.loss}, {"rmse", test.rmse}, {"mae", test.mae}, {"r2", test.r2}};
  nlohmann::json out = {{"loss", test.loss}, {"accuracy", test.accuracy}};
  if (kind == trainers::TaskKind::kGan) {
    out["fid"] = test.fid;  // loss and accuracy: the discriminator's
  } else if (kind != trainers::TaskKind::kClassification) {
    out["perplexity"] = std::exp(test.loss);
  } else {
    out["f1"] = test.f1, out["balanced_accuracy"] = test.balanced_accuracy;
    if (sweep.names_metric("val_auc")) out["auc"] = test.auc;
    if (sweep.names_metric("val_average_precision")) out["average_precision"] = test.average_precision;
  }
  return out;
}

// Each objective's value by name: {"val_accuracy": 0.88, "params": 55050}.
nlohmann::json objectives_json(const SweepConfig& sweep, const TrialRecord& t) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < sweep.objectives.size() && i < t.objectives.size(); ++i) {
    const double v = t.objectives[i];
    if (sweep.objectives[i].name == "params" && std::isfinite(v)) {
      out["params"] = static_cast<std::int64_t>(v);  // a count
    } else {
      out[sweep.objectives[i].name] = v;
    }
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> pareto_front(const std::vector<TrialRecord>& trials, const SweepConfig& sweep) {
  if (sweep.objectives.empty()) return {};
  std::vector<std::int64_t> candidates;
  std::vector<std::vector<double>> points;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const TrialRecord& t = trials[i];
    const bool trained = t.status == "stopped" || t.budget >= static_cast<double>(sweep.budget.max);
    if (!may_be_best(t) || !trained || t.objectives.size() != sweep.objectives.size() ||
        !std::all_of(t.objectives.begin(), t.objectives.end(), [](double v) { return std::isfinite(v); })) {
      continue;
    }
    candidates.push_back(static_cast<std::int64_t>(i));
    points.push_back(t.objectives);
  }
  const auto front = search::pareto_fronts(points, sweep.goals().objectives);
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (front[k] == 0) out.push_back(candidates[k]);
  }
  std::stable_sort(out.begin(), out.end(), [&](std::int64_t a, std::int64_t b) {
    return ranks_before(trials[static_cast<std::size_t>(a)], trials[static_cast<std::size_t>(b)], sweep.metric.goal);
  });
  return out;
}

bool may_be_best(const TrialRecord& t) {
  return (t.status == "completed" || t.status == "stopped") && t.budget > 0 && !std::isnan(t.metric) &&
         t.violation == 0;
}

bool ranks_before(const TrialRecord& a, const TrialRecord& b, Goal goal) {
  return search::better(a.metric, b.metric, goal) || (a.metric == b.metric && a.budget > b.budget);
}

std::int64_t best_trial(const std::vector<TrialRecord>& trials, Goal goal) {
  const TrialRecord* best = nullptr;
  for (const TrialRecord& t : trials) {
    if (may_be_best(t) && (!best || ranks_before(t, *best, goal))) best = &t;
  }
  return best ? best - trials.data() : -1;
}

std::optional<TargetReached> reaching_target(const std::vector<TargetReached>& results, double target, Goal goal) {
  std::optional<TargetReached> best;
  for (const auto& r : results) {
    if (!(r.metric == target || search::better(r.metric, target, goal))) continue;
    const bool tie = best && r.metric == best->metric;
    if (!best || search::better(r.metric, best->metric, goal) ||
        (tie && std::make_pair(r.id, r.budget) < std::make_pair(best->id, best->budget))) {
      best = r;
    }
  }
  return best;
}

// Population based training's schedule of hyperparameters that gave a trial:
// its ancestors' and its own, oldest first, each with the budget it took over at.
static nlohmann::json lineage_json(const std::vector<TrialRecord>& trials, const TrialRecord& last) {
  std::map<std::int64_t, const TrialRecord*> by_id;
  for (const auto& t : trials) by_id[t.id] = &t;
  std::vector<nlohmann::json> chain;
  double from = last.parent ? last.parent->budget : 0;
  chain.push_back({{"id", last.id}, {"from_budget", from}, {"params", params_json(last.params)}});
  for (const TrialRecord* t = &last; t->parent && by_id.count(t->parent->trial) && chain.size() <= trials.size();) {
    t = by_id.at(t->parent->trial);
    from = t->parent ? t->parent->budget : 0;
    chain.push_back({{"id", t->id}, {"from_budget", from}, {"params", params_json(t->params)}});
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

nlohmann::json results_json(const SweepConfig& sweep, const SweepResult& result, const std::string& dir) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : result.trials) {
    // Files relative to the experiment directory (trial_store.h, trial_export.h).
    const std::string trial = "trials/" + std::to_string(t.id) + "/";
    // A trial has files once a rung of it finished (a trial that failed in its first has none).
    nlohmann::json files = nlohmann::json::object();
    if (t.budget > 0) {
      files = {{"weights", trial + kWeightsFile}, {"state_dict", trial + kStateDictFile}};
      struct stat info {};
      if (dir.empty() || ::stat((dir + "/" + trial + "checkpoint.pt").c_str(), &info) == 0) {
        files["checkpoint"] = trial + "checkpoint.pt";
      }
    }
    trials.push_back({{"id", t.id}, {"params", params_json(t.params)}, {"seed", t.seed}, {"status", t.status},
                      {"budget", t.budget}, {"metric", t.metric}, {"history", t.history}, {"files", files}});
    // Every metric where it ended (Ray Tune's last_result): its last evaluation.
    if (!t.history.empty()) trials.back()["final"] = t.history.back();
    if (t.status == "failed") trials.back()["error"] = t.error;
    if (t.status == "diverged" && !t.error.empty()) trials.back()["divergence"] = t.error;  // (why, where)
    if (!t.in_rung.empty()) trials.back()["in_rung"] = t.in_rung;
    if (t.parent) trials.back()["parent"] = {{"trial", t.parent->trial}, {"budget", t.parent->budget}};
    if (!sweep.objectives.empty() && t.objectives.size() == sweep.objectives.size()) {
      trials.back()["objectives"] = objectives_json(sweep, t);
    }
    // Its size, as Ray Tune users log num_params: what a params constraint or objective bounds.
    if (t.model_params > 0) trials.back()["model_params"] = t.model_params;
    // Where it ended: within every constraint or not (unknown without a result).
    if (!sweep.constraints.empty() && (t.status == "completed" || t.status == "stopped" || t.status == "diverged")) {
      trials.back()["feasible"] = t.violation == 0;
    }
  }
  nlohmann::json best = nullptr;
  if (result.best >= 0) {
    const auto& b = result.trials[static_cast<std::size_t>(result.best)];
    best = {{"id", b.id}, {"params", params_json(b.params)}, {"metric", b.metric}};
    if (sweep.search.method == SearchMethod::kPbt) best["lineage"] = lineage_json(result.trials, b);
    if (result.best_test) best["test"] = test_json(sweep, *result.best_test);
  }
  nlohmann::json out = {{"format", 1},
                        {"name", sweep.name},
                        {"finished", result.finished},
                        {"metric", {{"name", sweep.metric.name}, {"goal", to_string(sweep.metric.goal)}}},
                        {"trials", trials},
                        {"best", best}};
  if (sweep.metric.target) {
    out["metric"]["target"] = *sweep.metric.target;
  }
  if (sweep.task.dataset == "csv") {  // the table the trials trained on, and how to feed their models (sweep_tables.h)
    out["data"] = {{"train", "data/train.csv"}, {"table", "data/table.json"}};
    if (!sweep.task.table.test.empty()) out["data"]["test"] = "data/test.csv";
  }
  if (trains_on_corpus(sweep)) {  // the text the trials trained on, and their tokens' bytes (sweep_corpus.h)
    out["data"] = {{"corpus", "data/corpus.txt"}, {"vocab", "data/corpus.json"}};
  }
  if (!sweep.search.warm_start.empty()) {  // the earlier sweeps the searcher started from, and what it was told
    out["warm_start"] = {{"sources", sweep.search.warm_start}, {"results", "warm_start.json"}};
  }
  if (!sweep.constraints.empty()) out["constraints"] = to_json(sweep).at("constraints");
  if (!sweep.objectives.empty()) {
    out["objectives"] = nlohmann::json::array();
    for (const auto& o : sweep.objectives) out["objectives"].push_back({{"name", o.name}, {"goal", to_string(o.goal)}});
    out["pareto_front"] = nlohmann::json::array();
    for (std::int64_t i : result.pareto) {
      const TrialRecord& t = result.trials[static_cast<std::size_t>(i)];
      nlohmann::json entry = {{"id", t.id}, {"params", params_json(t.params)}, {"budget", t.budget},
                              {"objectives", objectives_json(sweep, t)}};
      if (const auto test = result.pareto_test.find(t.id); test != result.pareto_test.end()) {
        entry["test"] = test_json(sweep, test->second);
      }
      out["pareto_front"].push_back(entry);
    }
  }
  out["importance"] = importance_json(sweep, result.trials);
  if (sweep.metric.target && result.finished) {  // (so far: not known yet)
    const auto& reached = result.target_reached;
    out["target_reached"] = reached ? nlohmann::json{{"id", reached->id}, {"metric", reached->metric},
                                                     {"budget", reached->budget}}
                                    : nlohmann::json();
  }
  return out;
}

}  // namespace hfta::core
