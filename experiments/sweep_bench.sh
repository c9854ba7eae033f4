#!/usr/bin/env bash
# Runs the same sweep (same seeds, same trials) with --fusion auto and --fusion off,
# one after the other, and prints the wall-clock ratio and whether the best trial
# and its metric agree. Usage: experiments/sweep_bench.sh [SWEEP.yaml] (default: the quickstart).
set -euo pipefail
cd "$(dirname "$0")/.."
sweep=${1:-configs/quickstart.yaml}
hfta=${HFTA_BUILD_DIR:-build}/src/hfta-tune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seconds() {  # seconds of one run
  local start end
  start=$(date +%s.%N)
  "$hfta" run "$sweep" --fusion "$1" --out "$work/$1" > "$work/$1.log"
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

fused=$(seconds auto)
alone=$(seconds off)
python3 - "$work" "$fused" "$alone" "$sweep" <<'PY'
import json, sys
work, fused, alone, sweep = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
a = json.load(open(f"{work}/auto/results.json"))
b = json.load(open(f"{work}/off/results.json"))
ta = {t["id"]: t["metric"] for t in a["trials"]}
tb = {t["id"]: t["metric"] for t in b["trials"]}
print(f"sweep: {sweep} ({len(ta)} trials)")
print(f"fusion auto: {fused:.1f} s, fusion off: {alone:.1f} s, speedup off/auto: {alone / fused:.2f}x")
print(f"best trial: auto {a['best']['id']} ({a['best']['metric']:.4f}), off {b['best']['id']} ({b['best']['metric']:.4f})")
print(f"largest per-trial metric difference: {max(abs(ta[i] - tb[i]) for i in ta):.2e}")
PY
