#!/usr/bin/env bash
# The host memory and disk a sweep takes with --keep-checkpoints all and with
# live, run one after the other on the same sweep: peak resident memory, the
# experiment directory's size, wall-clock time, their ratios, and whether every
# trial's metrics and the best trial (its test evaluation included) agree.
# Prints a Markdown table for experiments/results/checkpoint-footprint-cpu.md.
# Usage: experiments/checkpoint_footprint.sh [SWEEP.yaml] (default: a Hyperband
# sweep of 17 trials of MLP 784-2048-2048-10 under SGD with momentum, whose
# checkpoints are large next to its training).
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep=$(from_caller "${1:-}")
if [ -z "$sweep" ]; then
  sweep=$work/big-mlp.yaml
  cat > "$sweep" <<'EOF'
name: big-mlp
task: {model: mlp, batch_size: 64, options: {depth: 2, width: 2048}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: steps, min: 5, max: 45}
search: {method: hyperband, eta: 3}
fusion: {max_array: 4}
parameters:
  lr: {distribution: log_uniform, min: 0.001, max: 0.1}
  momentum: {distribution: uniform, min: 0.5, max: 0.95}
EOF
fi

for keep in all live; do
  /usr/bin/time -f "%M %e" -o "$work/$keep.time" \
    "$hfta" run "$sweep" --out "$work/$keep" --workers 1 --keep-checkpoints "$keep" > "$work/$keep.log"
  du -sb "$work/$keep" | cut -f1 > "$work/$keep.disk"
done

python3 - "$work" "$sweep" <<'PY'
import json, subprocess, sys
work, sweep = sys.argv[1:]
row = {}
for keep in ("all", "live"):
    rss_kb, wall = open(f"{work}/{keep}.time").read().split()
    row[keep] = (int(rss_kb) / 2**20, int(open(f"{work}/{keep}.disk").read()) / 2**20, float(wall))
a = json.load(open(f"{work}/all/results.json"))
b = json.load(open(f"{work}/live/results.json"))
same = a["best"] == b["best"] and all(
    x["history"] == y["history"] and x["metric"] == y["metric"] and x["status"] == y["status"]
    for x, y in zip(a["trials"], b["trials"]))
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"sweep: {sweep}, {len(a['trials'])} trials, commit {commit}")
print("| --keep-checkpoints | peak resident (GiB) | directory (MiB) | wall (s) |")
print("|---|---|---|---|")
for keep in ("all", "live"):
    rss, disk, wall = row[keep]
    print(f"| {keep} | {rss:.2f} | {disk:.0f} | {wall:.1f} |")
print(f"live/all: memory {row['live'][0] / row['all'][0]:.2f}x, disk {row['live'][1] / row['all'][1]:.2f}x, "
      f"time {row['live'][2] / row['all'][2]:.2f}x; identical results and best trial: {'yes' if same else 'NO'}")
PY
