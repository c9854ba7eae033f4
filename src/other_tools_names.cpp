#include "hfta/core/other_tools_names.h"

#include <algorithm>

#include "hfta/core/did_you_mean.h"

namespace hfta::core {
namespace {

struct OtherName {
  NameKind kind;
  const char* where;  ///< section, key, or "" for parameters
  std::vector<const char*> names;
  const char* hint;                  ///< said as " (<hint>)"
  std::vector<const char*> meant{};  ///< parameters: the names here it may mean, the first a candidate said
  const char* beside = "";           ///< parameters: meant only where this is a candidate too
};

const std::vector<OtherName>& table() {
  static const std::vector<OtherName> all = {
      // Ray Tune's schedulers and tune.run / Tuner arguments; Optuna's study; W&B's sweep keys.
      {NameKind::kKey, "search", {"min_t"}, "Ray Tune's min_t is budget.min here"},
      {NameKind::kKey, "search", {"min_samples_required", "n_startup_trials", "n_min_trials"},
       "the others a trial must be compared with before the stopping rule stops it are search.min_samples here"},
      {NameKind::kKey, "search", {"n_warmup_steps"},
       "the budget before which the stopping rule stops no trial is search.grace_period here"},
      {NameKind::kKey, "search", {"max_t"}, "Ray Tune's max_t is budget.max here"},
      {NameKind::kKey, "search", {"reduction_factor"}, "Ray Tune's reduction_factor is search.eta here"},
      {NameKind::kKey, "search", {"num_samples", "n_trials"},
       "Ray Tune's num_samples and Optuna's n_trials are search.trials here (Hyperband's come from budget and eta, times search.iterations)"},
      {NameKind::kKey, "search", {"n_iterations", "hyperband_iterations", "max_iterations"},
       "Hyperband's passes over its brackets are search.iterations here (hpbandster's n_iterations counts "
       "single brackets)"},
      {NameKind::kKey, "search", {"time_attr"}, "Ray Tune's time_attr is budget.unit here"},
      {NameKind::kKey, "search", {"mode", "direction"}, "the goal is metric.goal here (maximize or minimize)"},
      {NameKind::kKey, "search", {"metric"}, "the metric is a section of its own here: metric: {name, goal}"},
      {NameKind::kKey, "search", {"sampler", "search_alg"}, "the sampler is search.searcher here (random, qmc, tpe, cmaes or gp)"},
      {NameKind::kKey, "search", {"pruner", "scheduler"},
       "pruning is search.method here (sha, asha or hyperband), or stopping: median or percentile with method random"},
      {NameKind::kKey, "search", {"timeout", "time_budget_s", "time_limit"},
       "a time limit is given to run and resume here: --time-limit"},
      {NameKind::kKey, "search", {"max_concurrent_trials", "max_concurrent", "n_jobs"},
       "trials train together in arrays sized to the device's memory here (fusion.max_array caps them); "
       "--workers sets how many arrays train at once"},
      {NameKind::kKey, "", {"timeout", "time_limit", "time_budget_s"},
       "a time limit is given to run and resume here: --time-limit"},
      {NameKind::kKey, "", {"method"}, "the method goes under search here: search: {method: ...}"},
      {NameKind::kKey, "", {"early_terminate"},
       "W&B's early_terminate (hyperband) is search.method: hyperband here, with budget.min and search.eta"},
      {NameKind::kKey, "", {"program", "command", "entity", "project"},
       "hfta-tune trains the model of its task section itself: W&B's program, command, entity and project have no "
       "counterpart"},
      {NameKind::kKey, "metric", {"mode", "direction"}, "the goal is metric.goal here (maximize or minimize)"},
      {NameKind::kKey, "", {"mode", "direction"}, "the goal is metric.goal here: metric: {name, goal: maximize or minimize}"},
      {NameKind::kKey, "", {"directions"},
       "Optuna's directions are a list of objectives here: metric: [{name, goal}, ...]"},
      {NameKind::kKey, "", {"scheduler", "pruner"},
       "pruning is search.method here (sha, asha or hyperband), or stopping: median or percentile with method random"},
      {NameKind::kKey, "", {"sampler", "search_alg", "searcher"},
       "the sampler is search.searcher here (random, qmc, tpe, cmaes or gp)"},
      {NameKind::kKey, "", {"num_samples", "n_trials", "trials"}, "the trial count is search.trials here"},
      // A parameter's keys (Optuna's suggest_* arguments, Ray Tune's grid_search).
      {NameKind::kKey, "parameter", {"grid_search"},
       "Ray Tune's grid_search is distribution: grid with values: [...] here: every value, crossed with the other "
       "grid parameters, under any method"},
      {NameKind::kKey, "parameter", {"choices"}, "Optuna's choices are values: [...] here"},
      {NameKind::kKey, "parameter", {"low", "lower"}, "the range's low end is min here"},
      {NameKind::kKey, "parameter", {"high", "upper"}, "the range's high end is max here"},
      {NameKind::kKey, "parameter", {"step"}, "Optuna's step is q here, with distribution: quantized"},
      {NameKind::kKey, "parameter", {"log"},
       "a log scale is distribution: log_uniform (or int_log_uniform) here; quantized takes log: true"},
      {NameKind::kKey, "parameter", {"type"}, "a parameter's kind is its distribution here (uniform, log_uniform, "
                                              "int_uniform, quantized, choice, ...), or values: [...] alone"},
      {NameKind::kKey, "", {"stop"}, "a metric value that ends the sweep is metric.target here"},
      {NameKind::kKey, "budget", {"grace_period", "min_t", "min_iter", "min_resource"},
       "the least budget is budget.min here"},
      {NameKind::kKey, "budget", {"max_t", "max_iter", "max_resource"}, "the largest budget is budget.max here"},
      // Values.
      {NameKind::kValue, "method", {"tpe", "optuna"},
       "TPE is search.searcher: tpe here, beside method random, sha, asha or hyperband"},
      {NameKind::kValue, "method", {"bayes", "bayesopt", "bayesian", "gp", "gaussian_process"},
       "Bayesian optimisation with a Gaussian process (W&B's bayes, Ray Tune's BayesOptSearch) is search.searcher: gp "
       "here, beside method random, sha, asha or hyperband; TPE is searcher: tpe"},
      {NameKind::kValue, "searcher", {"bayes", "bayesopt", "bayesian", "bo", "gaussian_process", "gpsampler", "botorch", "skopt"},
       "Bayesian optimisation with a Gaussian process is searcher: gp here"},
      {NameKind::kValue, "method", {"bohb"}, "BOHB is method hyperband with searcher: tpe here"},
      {NameKind::kValue, "method", {"qmc", "sobol", "halton", "quasi_random", "quasirandom"},
       "quasi-random search is search.searcher: qmc here, beside method random, sha, asha or hyperband"},
      {NameKind::kValue, "searcher", {"sobol", "halton", "quasi_random", "quasirandom", "qmc_sampler"},
       "quasi-random sampling is searcher: qmc here (a scrambled Halton sequence)"},
      {NameKind::kValue, "method", {"cmaes", "cma", "cma-es", "cma_es"},
       "CMA-ES is search.searcher: cmaes here, beside method random, sha or asha"},
      {NameKind::kValue, "searcher", {"cma", "cma-es", "cma_es", "cmaessampler", "cma_es_sampler"},
       "CMA-ES is searcher: cmaes here"},
      {NameKind::kValue, "method", {"median", "median_stopping"},
       "median stopping is method random with stopping: median here"},
      {NameKind::kValue, "method", {"successive_halving"}, "successive halving is sha here (asha: asynchronous)"},
      {NameKind::kValue, "goal", {"max", "maximise"}, "write maximize"},
      {NameKind::kValue, "goal", {"min", "minimise"}, "write minimize"},
      {NameKind::kValue, "distribution", {"q_uniform", "quniform", "q_uniform_values", "tune.quniform"},
       "W&B's q_uniform is quantized here (min, max, q)"},
      {NameKind::kValue, "distribution", {"qrandint", "tune.qrandint"},
       "integers in steps of q are quantized here (min, max, q: whole numbers give integers)"},
      {NameKind::kValue, "distribution", {"tune.uniform", "suggest_uniform", "suggest_float", "float"},
       "a range is uniform here, or log_uniform on a log scale (Optuna's log=True)"},
      {NameKind::kValue, "distribution", {"tune.loguniform", "loguniform", "suggest_loguniform", "reciprocal"},
       "a log range is log_uniform here"},
      {NameKind::kValue, "distribution", {"tune.randint", "suggest_int", "integer"},
       "an integer range is int_uniform here, or int_log_uniform on a log scale"},
      {NameKind::kValue, "distribution", {"tune.lograndint"}, "an integer log range is int_log_uniform here"},
      {NameKind::kValue, "distribution", {"tune.choice", "suggest_categorical"},
       "a categorical is values: [...] here (distribution: choice)"},
      {NameKind::kValue, "distribution", {"tune.grid_search", "grid_search"},
       "Ray Tune's grid_search is distribution: grid with values: [...] here"},
      {NameKind::kValue, "stopping", {"asha", "sha", "hyperband", "successive_halving", "hyperbandpruner",
                                      "successivehalvingpruner"},
       "successive halving, ASHA and Hyperband are search.method here (sha, asha, hyperband); search.stopping is "
       "median or percentile, with method random"},
      {NameKind::kValue, "distribution", {"q_log_uniform", "q_log_uniform_values", "qloguniform", "qlograndint"},
       "a quantized log range is quantized with log: true here"},
      {NameKind::kValue, "distribution", {"categorical"},
       "a categorical is distribution: choice here, or values: [...] alone"},
      {NameKind::kValue, "distribution", {"constant"}, "a constant is distribution: const here, or value: x alone"},
      {NameKind::kValue, "distribution", {"log_uniform_values"},
       "W&B's log_uniform_values is log_uniform here (min and max are the values themselves)"},
      {NameKind::kValue, "distribution", {"randint", "int"}, "an integer range is int_uniform here"},
      {NameKind::kValue, "distribution", {"lograndint"}, "an integer log range is int_log_uniform here"},
      {NameKind::kValue, "distribution", {"normal", "q_normal", "log_normal", "q_log_normal", "randn", "qrandn"},
       "normal distributions are not offered: use uniform, or log_uniform for a positive range"},
      // Parameters: Hugging Face's, Lightning's and the tutorials' names.
      {NameKind::kParameter, "", {"learning_rate", "learningrate", "lr_rate", "base_lr"}, "", {"lr"}},
      {NameKind::kParameter, "", {"wd", "l2", "l2_reg", "weight_decay_rate"}, "", {"weight_decay"}},
      // (An MLP's width is its hidden size; a CNN's or ResNet's is a channel count.)
      {NameKind::kParameter, "", {"hidden_size", "hidden_dim", "hidden_units", "units", "num_units", "n_units"}, "",
       {"width"}, "depth"},
      {NameKind::kParameter, "", {"hidden_size", "hidden_dim", "d_hidden"}, "", {"d_model"}},
      {NameKind::kParameter, "", {"num_layers", "n_layers", "num_hidden_layers", "layers", "depth"}, "",
       {"depth", "layers"}},
      {NameKind::kParameter, "", {"dropout_rate", "dropout_prob", "drop_rate", "hidden_dropout_prob", "p"}, "",
       {"dropout"}},
      {NameKind::kParameter, "", {"warmup_steps", "num_warmup_steps", "warmup_iters"}, "", {"warmup"}},
      {NameKind::kParameter, "", {"max_grad_norm", "clip_grad_norm", "gradient_clip_val", "clip_norm", "grad_norm"},
       "", {"grad_clip"}},
      {NameKind::kParameter, "", {"batch", "bs", "train_batch_size", "per_device_train_batch_size"}, "",
       {"batch_size"}},
      {NameKind::kParameter, "", {"optim", "opt", "optimizer_name", "optimizer_type"}, "", {"optimizer"}},
      {NameKind::kParameter, "", {"lr_scheduler", "scheduler", "lr_schedule", "lr_scheduler_type"}, "", {"schedule"}},
      {NameKind::kParameter, "", {"beta_1", "adam_beta1"}, "", {"beta1"}},
      {NameKind::kParameter, "", {"beta_2", "adam_beta2"}, "", {"beta2"}},
      {NameKind::kParameter, "", {"epsilon", "adam_epsilon"}, "", {"eps"}},
      {NameKind::kParameter, "", {"num_heads", "n_heads", "nhead", "num_attention_heads"}, "", {"heads"}},
      {NameKind::kParameter, "", {"dim_feedforward", "ffn_dim", "intermediate_size", "d_ff"}, "", {"ff"}},
      {NameKind::kParameter, "", {"betas"}, "Adam's betas are two parameters here: beta1 and beta2"},
      {NameKind::kParameter, "", {"epochs", "num_epochs", "max_epochs", "n_epochs", "num_train_epochs", "steps",
                                  "max_steps"},
       "how long a trial trains is the budget here (budget.unit and budget.max), not a parameter"},
      {NameKind::kParameter, "", {"seed", "random_seed"},
       "each trial's seed follows from the sweep's top-level seed and the trial's id here, not a parameter"},
  };
  return all;
}

}  // namespace

std::string other_tools_name(NameKind kind, const std::string& where, const std::string& name,
                             const std::vector<std::string>& candidates) {
  const std::string word = lowercase(name);
  for (const OtherName& o : table()) {
    // (A parameter's keys are read at parameters.<name>, or deeper in a branch.)
    const bool in_a_parameter = kind == NameKind::kKey && where.rfind("parameters.", 0) == 0;
    if (o.kind != kind || (kind != NameKind::kParameter && (in_a_parameter ? "parameter" : where) != o.where)) continue;
    if (std::none_of(o.names.begin(), o.names.end(), [&](const char* n) { return word == n; })) continue;
    if (o.meant.empty()) return std::string(" (") + o.hint + ")";
    const auto candidate = [&](const std::string& n) {
      return std::find(candidates.begin(), candidates.end(), n) != candidates.end();
    };
    if (*o.beside && !candidate(o.beside)) continue;
    for (const char* meant : o.meant) {
      if (meant != word && candidate(meant)) return " (" + name + " is called " + std::string(meant) + " here)";
    }
  }
  return "";
}

}  // namespace hfta::core
