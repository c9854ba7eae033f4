#!/usr/bin/env bash
# Does hfta-tune's parameter importance agree with Optuna's? For each sweep
# seed, runs a random search of 40 MLPs on Fashion-MNIST (every trial to the
# same budget, so both judge the same results), then gives the trials'
# parameters and val_accuracy to Optuna's FanovaImportanceEvaluator (Debian's
# python3-optuna and python3-sklearn, installed here if missing), over 20
# forest seeds. Log-uniform parameters go to Optuna as their logarithms
# (hfta-tune judges them in log space, Optuna 3.1 in linear space), and a
# diverged trial as the worst result, as hfta-tune counts it. Prints and
# writes experiments/results/importance-vs-optuna-cpu.md and .json: each
# parameter's share from hfta-tune, and Optuna's mean and standard deviation.
# Usage: experiments/importance_vs_optuna.sh   (SEEDS="1 2 3" by default; OUT as sweep_bench.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
hfta=${HFTA_BUILD_DIR:-build}/src/hfta-tune
out=${OUT:-experiments/results}
seeds=${SEEDS:-1 2 3}
py=/usr/bin/python3  # Debian's, which the packages install into
if ! "$py" -c 'import optuna, sklearn' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-optuna python3-sklearn > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for seed in $seeds; do
  cat > "$work/sweep-$seed.yaml" <<YAML
name: importance-check
seed: $seed
task: {model: mlp, dataset: fashion_mnist, batch_size: 128, options: {depth: 2, width: 128}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: epochs, max: 2}
search: {method: random, trials: 40}
parameters:
  optimizer: {value: adam}
  lr: {distribution: log_uniform, min: 0.0001, max: 0.1}
  beta1: {distribution: uniform, min: 0.5, max: 0.95}
  weight_decay: {distribution: log_uniform, min: 1.0e-6, max: 1.0e-2}
  dropout: {values: [0.0, 0.1, 0.3, 0.5]}
  activation: {values: [relu, tanh]}
YAML
  "$hfta" run "$work/sweep-$seed.yaml" --out "$work/run-$seed" > "$work/run-$seed.log"
done

mkdir -p "$out"
"$py" - "$work" "$out" $seeds <<'PY'
import json, math, statistics, sys, datetime, subprocess
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.importance import FanovaImportanceEvaluator
optuna.logging.set_verbosity(optuna.logging.WARNING)
work, out, *seeds = sys.argv[1:]
LOG = {"lr": (1e-4, 1e-1), "weight_decay": (1e-6, 1e-2)}
LINEAR = {"beta1": (0.5, 0.95)}
CATEGORICAL = {"dropout": [0.0, 0.1, 0.3, 0.5], "activation": ["relu", "tanh"]}
dists = {**{k: FloatDistribution(math.log(lo), math.log(hi)) for k, (lo, hi) in LOG.items()},
         **{k: FloatDistribution(lo, hi) for k, (lo, hi) in LINEAR.items()},
         **{k: CategoricalDistribution(v) for k, v in CATEGORICAL.items()}}
rows, record = [], {"date": datetime.date.today().isoformat(),
                    "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
                    "optuna": optuna.__version__, "seeds": {}}
for seed in seeds:
    results = json.load(open(f"{work}/run-{seed}/results.json"))
    ours = {p["name"]: p["importance"] for p in results["importance"]["params"]}
    finite = [t["metric"] for t in results["trials"] if t["status"] in ("completed", "stopped")]
    worst = min(finite)
    study = optuna.create_study(direction="maximize")
    for t in results["trials"]:
        if t["status"] == "failed":
            continue
        params = {k: (math.log(v) if k in LOG else v) for k, v in t["params"].items() if k in dists}
        value = t["metric"] if t["status"] != "diverged" else worst
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=value))
    theirs = {k: [] for k in dists}
    for forest_seed in range(20):
        imp = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=forest_seed))
        for k in dists:
            theirs[k].append(imp.get(k, 0.0))
    order_ours = sorted(ours, key=lambda k: -ours[k])
    mean = {k: statistics.mean(v) for k, v in theirs.items()}
    sd = {k: statistics.stdev(v) for k, v in theirs.items()}
    order_theirs = sorted(mean, key=lambda k: -mean[k])
    record["seeds"][seed] = {"trials": len(study.trials), "hfta_tune": ours, "optuna_mean": mean, "optuna_sd": sd,
                             "same_order": order_ours == order_theirs}
    for k in order_theirs:
        rows.append(f"| {seed} | {k} | {ours.get(k, 0):.3f} | {mean[k]:.3f} ± {sd[k]:.3f} | {abs(ours.get(k, 0) - mean[k]):.3f} |")
    rows.append(f"| {seed} | (order) | {', '.join(order_ours)} | {', '.join(order_theirs)} | {'same' if order_ours == order_theirs else 'differs'} |")
table = ["| sweep seed | parameter | hfta-tune | Optuna (20 forest seeds) | difference |", "|---|---|---|---|---|"] + rows
text = "\n".join(table) + "\n"
print(text)
open(f"{out}/importance-vs-optuna-cpu.md", "w").write(
    f"Parameter importance of 40-trial random searches (MLP on Fashion-MNIST, 2 epochs), hfta-tune against Optuna "
    f"{optuna.__version__}'s FanovaImportanceEvaluator on the same results ({record['date']}, commit {record['commit']}; "
    f"experiments/importance_vs_optuna.sh).\n\n" + text)
json.dump(record, open(f"{out}/importance-vs-optuna-cpu.json", "w"), indent=1)
PY
