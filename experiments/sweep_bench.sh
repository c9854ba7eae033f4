#!/usr/bin/env bash
# Runs the same sweep (same seeds, same trials) four ways: --fusion auto and
# --fusion off with one worker, then both with one worker per core, each twice in
# mirrored order (auto off off auto), so that the machine's drift and whichever
# runs first (5-13% slower here) weigh on both alike. Prints each mode's mean
# wall-clock time, the ratios (fusion's gain at equal workers, and the workers'
# gain) and whether the best trial and every trial's metric agree, and writes
# them as JSON to experiments/results/sweep-<name>-<device>.json (with the
# machine and commit); experiments/plot_sweeps.sh draws those files.
# Usage: experiments/sweep_bench.sh [SWEEP.yaml] (default: the quickstart).
#   SWEEP_MODES  the runs in order; a mode may repeat (default
#                "auto-1 off-1 off-1 auto-1 auto-N off-N off-N auto-N"; N: nproc)
#   OUT          where the JSON goes (default experiments/results)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
sweep=$(from_caller "${1:-}"); sweep=${sweep:-configs/quickstart.yaml}
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
workers=$(nproc)
modes=${SWEEP_MODES:-auto-1 off-1 off-1 auto-1 auto-N off-N off-N auto-N}

times=()
run=0
for mode in $modes; do  # mode: fusion-workers
  fusion=${mode%-*}
  n=${mode#*-}
  [ "$n" = N ] && n=$workers
  run=$((run + 1))
  start=$(date +%s.%N)
  "$hfta" run "$sweep" --fusion "$fusion" --workers "$n" --out "$work/$run-$mode" > "$work/$run-$mode.log"
  end=$(date +%s.%N)
  times+=("$run-$mode=$(echo "$end - $start" | bc)")
done

mkdir -p "$out"
python3 - "$work" "$sweep" "$workers" "$out" "${times[@]}" <<'PY'
import json, os, subprocess, sys, datetime
work, sweep, workers, out, *times = sys.argv[1:]
each = {}  # mode: seconds of each of its runs, in order
runs = {}  # mode: results.json of its last run (every run is compared below)
metrics = {}
repeat = {}  # mode: largest per-trial difference between its runs

def gap(a, b):
    # A failed or diverged trial has no metric: two runs agree where neither has one.
    if a is None or b is None:
        return 0.0 if a is None and b is None else float("inf")
    return abs(a - b)

def largest_gap(m, other):
    return max((gap(v, other.get(i)) for i, v in m.items()), default=0.0)
for t in times:
    run, secs = t.split("=")
    mode = run.split("-", 1)[1]
    each.setdefault(mode, []).append(float(secs))
    runs[mode] = json.load(open(f"{work}/{run}/results.json"))
    m = {t["id"]: t["metric"] for t in runs[mode]["trials"]}
    if mode in metrics:  # a repeat: how far it is from the mode's other run
        # (exactly 0 unless its two runs measured different op strategies
        # where those round differently)
        repeat[mode] = largest_gap(m, metrics[mode])
    metrics[mode] = m
seconds = {m: sum(s) / len(s) for m, s in each.items()}
first = next(iter(runs))
sh = lambda cmd: subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
name = os.path.splitext(os.path.basename(sweep))[0]
result = {
    "sweep": sweep, "trials": len(metrics[first]), "workers": int(workers),
    "modes": {m: {"seconds": round(seconds[m], 2), "runs": [round(x, 2) for x in each[m]],
                  "best": runs[m]["best"]["id"],
                  "best_metric": runs[m]["best"]["metric"],
                  "largest_metric_difference": largest_gap(metrics[m], metrics[first]),
                  "largest_repeat_difference": repeat.get(m, 0.0)}
              for m in seconds},
    "machine": {"cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'"),
                "cores": int(workers), "commit": sh("git rev-parse --short HEAD"),
                "libtorch": sh("dpkg-query -W -f '${Version}' libtorch1.13 2>/dev/null") or "unknown",
                "blas": sh("readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3"),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
}
ratios = {}
for n in ("1", "N"):
    if f"auto-{n}" in seconds and f"off-{n}" in seconds:
        ratios[f"off/auto, {n} worker(s)"] = seconds[f"off-{n}"] / seconds[f"auto-{n}"]
if "auto-1" in seconds and "auto-N" in seconds:
    ratios["workers: auto-1/auto-N"] = seconds["auto-1"] / seconds["auto-N"]
if "off-1" in seconds and "auto-N" in seconds:
    ratios["off-1/auto-N"] = seconds["off-1"] / seconds["auto-N"]
result["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
path = f"{out}/sweep-{name}-cpu.json"
# JSON has no infinity: a trial with a metric in one run and none in another is null.
for r in result["modes"].values():
    for k in ("largest_metric_difference", "largest_repeat_difference"):
        if r[k] == float("inf"):
            r[k] = None
json.dump(result, open(path, "w"), indent=1)
difference = lambda x: "a metric in one run only" if x is None else f"{x:.2e}"
print(f"sweep: {sweep} ({result['trials']} trials), N = {workers} workers")
for m, r in result["modes"].items():
    print(f"  {m:7s} {r['seconds']:8.1f} s (runs: {', '.join(f'{x:.1f}' for x in r['runs'])})  "
          f"best {r['best']} ({r['best_metric']:.4f})  "
          f"largest per-trial difference from {first}: {difference(r['largest_metric_difference'])}, "
          f"between its runs: {difference(r['largest_repeat_difference'])}")
for k, v in ratios.items():
    print(f"  {k}: {v:.2f}x")
print(f"wrote {path}")
PY
