#!/usr/bin/env bash
# What flips and crops of the training images do to a CNN on Fashion-MNIST:
# one grid sweep over lr x flip x crop (LeNet-style CNN at twice its channels,
# batch 64, SGD with momentum 0.9, 12 epochs), each trial's validation
# accuracy at its best epoch and at its last, and the gap between its training
# and validation loss (what augmentation narrows). The grid's augmentations
# train in separate arrays (flip and crop are unfused parameters), each array
# its two learning rates fused; the wall time of each array's steps is in the
# run's log. Writes augmentation-cpu.md into $OUT (default experiments/results).
# Usage: experiments/augmentation_bench.sh [EPOCHS]
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
epochs=${1:-12}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/augmentation.yaml" <<YAML
name: augmentation
seed: 11
task: {model: cnn, batch_size: 64, options: {width: 2}}
metric: {name: val_accuracy, goal: maximize}
budget: {unit: epochs, min: $epochs, max: $epochs}
search: {method: grid}
parameters:
  lr: {distribution: grid, values: [0.02, 0.05]}
  momentum: {value: 0.9}
  flip: {distribution: grid, values: [false, true]}
  crop: {distribution: grid, values: [0, 2]}
YAML
start=$(date +%s)
"$hfta" run "$work/augmentation.yaml" --out "$work/run" > "$work/log.txt"
seconds=$(( $(date +%s) - start ))
mkdir -p "$(results_dir)"
out=$(results_dir)/augmentation-cpu.md
/usr/bin/python3 - "$work/run/results.json" "$epochs" "$seconds" "$(lscpu | sed -n 's/^Model name: *//p')" \
    "$(git rev-parse --short HEAD)" > "$out" <<'PY'
import json, sys
results, epochs, seconds, cpu, commit = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
print(f"# Flips and crops of Fashion-MNIST images, CNN (width 2), {epochs} epochs\n")
print(f"`experiments/augmentation_bench.sh` at {commit}, {cpu}, 2 cores; the grid sweep took {seconds} s in all.\n")
print("| lr | flip | crop | best val accuracy (epoch) | last val accuracy | last train loss | last val loss |")
print("|---|---|---|---|---|---|---|")
rows = []
for t in results["trials"]:
    p, h = t["params"], t["history"]
    best = max(h, key=lambda e: e["val_accuracy"])
    per_epoch = h[0]["step"]
    rows.append((p["lr"], p["flip"], p["crop"], best["val_accuracy"], best["step"] // per_epoch, h[-1]["val_accuracy"],
                 h[-1]["train_loss"], h[-1]["val_loss"]))
for lr, flip, crop, best, at, last, train, val in sorted(rows):
    print(f"| {lr} | {str(flip).lower()} | {crop} | {best:.4f} ({at}) | {last:.4f} | {train:.4f} | {val:.4f} |")
b = results["best"]
print(f"\nBest trial: {b['id']} {json.dumps(b['params'])}, validation {b['metric']:.4f}, "
      f"test accuracy {b['test']['accuracy']:.4f}.")
PY
cat "$out"
