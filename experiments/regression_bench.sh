#!/usr/bin/env bash
# A regression sweep on a table, fused against --fusion off: scikit-learn's
# Friedman #1 problem (y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5
# + noise, with 5 more features that are noise; 8,000 rows drawn with
# random_state 0, Debian's python3-sklearn), written as a CSV, tuned by
# Hyperband with an MLP at batch 32 and task.loss mse: the small,
# overhead-bound models a table sweep trains on a CPU. Runs
# experiments/sweep_bench.sh on it (its modes, ratios and JSON:
# experiments/results/sweep-friedman-cpu.json).
# Usage: experiments/regression_bench.sh
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || { echo "regression_bench: apt-get install python3-sklearn" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work/friedman.csv" <<'PY'
import sys
from sklearn.datasets import make_friedman1
x, y = make_friedman1(n_samples=8000, n_features=10, noise=1.0, random_state=0)
with open(sys.argv[1], "w") as f:
    f.write(",".join(f"x{i + 1}" for i in range(10)) + ",y\n")
    for row, target in zip(x, y):
        f.write(",".join(repr(float(v)) for v in row) + "," + repr(float(target)) + "\n")
PY
cat > "$work/friedman.yaml" <<'YAML'
name: friedman
seed: 3
task:
  model: mlp
  dataset: csv
  data: {train: friedman.csv, label: y}
  loss: mse
  batch_size: 32
  options: {depth: 2, width: 64}
metric: {name: val_rmse, goal: minimize}
budget: {unit: epochs, min: 1, max: 9}
search: {method: hyperband, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-2}
  weight_decay: {distribution: log_uniform, min: 1.0e-6, max: 1.0e-3}
  dropout: {values: [0.0, 0.1]}
YAML
experiments/sweep_bench.sh "$work/friedman.yaml"
