#!/usr/bin/env bash
# A sweep on a table of your own, fused against --fusion off: the 1,797
# handwritten digits of UCI's "Optical Recognition of Handwritten Digits"
# (8x8 images as 64 numeric columns, 10 classes; the copy Debian's
# python3-sklearn ships, written here as a CSV with a header), tuned by
# Hyperband with an MLP at batch 32: the small, overhead-bound models a table
# sweep trains on a CPU. Runs experiments/sweep_bench.sh on it (its modes,
# ratios and JSON: experiments/results/sweep-digits-cpu.json).
# Usage: experiments/tabular_bench.sh
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
[ -f "$digits" ] || { echo "tabular_bench: $digits is missing: apt-get install python3-sklearn" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "$(seq -f 'p%g' 0 63 | paste -sd,),digit"
  zcat "$digits"
} > "$work/digits.csv"
cat > "$work/digits.yaml" <<'YAML'
name: digits
seed: 3
task:
  model: mlp
  dataset: csv
  data: {train: digits.csv, label: digit}
  batch_size: 32
  options: {depth: 2, width: 64}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: epochs, min: 1, max: 27}
search: {method: hyperband, eta: 3}
parameters:
  optimizer: {value: adam}
  lr: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-2}
  weight_decay: {distribution: log_uniform, min: 1.0e-6, max: 1.0e-3}
  dropout: {values: [0.0, 0.1, 0.3]}
YAML
experiments/sweep_bench.sh "$work/digits.yaml"
