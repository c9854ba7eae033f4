#!/usr/bin/env bash
# Runs the same sweep (same seeds, same trials) with --fusion auto, --fusion off,
# each with one worker, and --fusion auto with one worker per core, one after the other,
# and prints the wall-clock ratios and whether the best trial and the per-trial
# metrics agree. Usage: experiments/sweep_bench.sh [SWEEP.yaml] (default: the quickstart).
set -euo pipefail
cd "$(dirname "$0")/.."
sweep=${1:-configs/quickstart.yaml}
hfta=${HFTA_BUILD_DIR:-build}/src/hfta-tune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

workers=$(nproc)

seconds() {  # seconds of one run: name, then run's options
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  "$hfta" run "$sweep" "$@" --out "$work/$name" > "$work/$name.log"
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

fused=$(seconds auto --fusion auto --workers 1)
alone=$(seconds off --fusion off --workers 1)
parallel=$(seconds workers --fusion auto --workers "$workers")
python3 - "$work" "$fused" "$alone" "$parallel" "$workers" "$sweep" <<'PY'
import json, sys
work, fused, alone, parallel, workers, sweep = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5], sys.argv[6]
runs = {name: json.load(open(f"{work}/{name}/results.json")) for name in ("auto", "off", "workers")}
metrics = {name: {t["id"]: t["metric"] for t in r["trials"]} for name, r in runs.items()}
a = metrics["auto"]
print(f"sweep: {sweep} ({len(a)} trials)")
print(f"fusion auto: {fused:.1f} s, fusion off: {alone:.1f} s, speedup off/auto: {alone / fused:.2f}x")
print(f"fusion auto, {workers} workers: {parallel:.1f} s, speedup off/workers: {alone / parallel:.2f}x, "
      f"auto/workers: {fused / parallel:.2f}x")
print("best trial: " + ", ".join(f"{n} {r['best']['id']} ({r['best']['metric']:.4f})" for n, r in runs.items()))
for name in ("off", "workers"):
    print(f"largest per-trial metric difference, auto against {name}: "
          f"{max(abs(a[i] - metrics[name][i]) for i in a):.2e}")
PY
