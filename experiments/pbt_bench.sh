#!/usr/bin/env bash
# Does population based training find better models than Hyperband on the same
# space in about the same time? Runs configs/quickstart.yaml (Hyperband, 17
# trials) and configs/pbt.yaml (PBT, 8 members, 8 generations of an epoch; the
# same MLP, parameters and early stopping) for each of several sweep seeds,
# alternating which runs first, and prints per seed each method's best
# validation accuracy, its trial's test accuracy and its wall-clock time.
# Writes the table to experiments/results/pbt-vs-hyperband-cpu.md and the numbers
# as JSON beside it (with the machine and commit).
# Usage: experiments/pbt_bench.sh   (SEEDS="1 2 3 4" by default; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
seeds=${SEEDS:-1 2 3 4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

runs=()
i=0
for seed in $seeds; do
  order=(quickstart pbt)
  [ $((i % 2)) -eq 1 ] && order=(pbt quickstart)
  i=$((i + 1))
  for config in "${order[@]}"; do
    sed "s/^seed: .*/seed: $seed/" "configs/$config.yaml" > "$work/$config-$seed.yaml"
    start=$(date +%s.%N)
    "$hfta" run "$work/$config-$seed.yaml" --out "$work/$config-$seed" > "$work/$config-$seed.log"
    end=$(date +%s.%N)
    runs+=("$config-$seed=$(echo "$end - $start" | bc)")
  done
done

mkdir -p "$out"
python3 - "$work" "$out" "${runs[@]}" <<'PY'
import json, subprocess, sys, datetime, statistics
work, out, *runs = sys.argv[1:]
rows = {}
for r in runs:
    name, secs = r.split("=")
    config, seed = name.rsplit("-", 1)
    res = json.load(open(f"{work}/{name}/results.json"))
    best = res["best"]
    rows.setdefault(int(seed), {})[config] = {"seconds": float(secs), "trials": len(res["trials"]),
                                              "val": best["metric"], "test": best["test"]["accuracy"]}
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = ["| seed | Hyperband val | test | time | PBT val | test | time |", "|---|---|---|---|---|---|---|"]
for seed in sorted(rows):
    h, p = rows[seed]["quickstart"], rows[seed]["pbt"]
    lines.append(f"| {seed} | {h['val']:.4f} | {h['test']:.4f} | {h['seconds']:.1f} s | "
                 f"{p['val']:.4f} | {p['test']:.4f} | {p['seconds']:.1f} s |")
mean = lambda c, k: statistics.mean(rows[s][c][k] for s in rows)
lines.append(f"| mean | {mean('quickstart', 'val'):.4f} | {mean('quickstart', 'test'):.4f} | "
             f"{mean('quickstart', 'seconds'):.1f} s | {mean('pbt', 'val'):.4f} | {mean('pbt', 'test'):.4f} | "
             f"{mean('pbt', 'seconds'):.1f} s |")
table = "\n".join(lines)
print(table)
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
with open(f"{out}/pbt-vs-hyperband-cpu.md", "w") as f:
    f.write(f"# PBT against Hyperband on the quickstart's space\n\n`experiments/pbt_bench.sh` at {commit}, "
            f"{cpu}, {date}: configs/quickstart.yaml (Hyperband) and configs/pbt.yaml (PBT) per sweep seed, "
            f"default workers; best trial's validation and test accuracy, wall-clock time.\n\n{table}\n")
json.dump({"machine": {"cpu": cpu, "commit": commit, "date": date}, "seeds": rows},
          open(f"{out}/pbt-vs-hyperband-cpu.json", "w"), indent=1)
print(f"wrote {out}/pbt-vs-hyperband-cpu.md")
PY
