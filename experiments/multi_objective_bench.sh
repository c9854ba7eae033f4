#!/usr/bin/env bash
# Do Pareto-ranked promotions find better accuracy-for-size trade-offs? For
# each sweep seed, runs configs/multi_objective.yaml (Hyperband, two passes,
# promoting each rung's Pareto-best by val_accuracy and params) against the
# same sweep ranked by val_accuracy alone (its front found afterwards among
# the same finished trials), and against random search of 17 trials to
# budget.max (153 epochs against Hyperband's 156), alternating the order.
# Prints per seed each one's front size, the hypervolume its front dominates
# (of the box from accuracy 0.80 to 1 and from 270,000 parameters down to 0,
# as a fraction of it) and its wall-clock time. Writes the table to
# experiments/results/multi-objective-cpu.md and the numbers as JSON beside it.
# Usage: experiments/multi_objective_bench.sh   (SEEDS="1 2 3" by default; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
seeds=${SEEDS:-1 2 3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The variants, from configs/multi_objective.yaml.
base=configs/multi_objective.yaml
python3 - "$base" "$work" <<'PY'
import re, sys
base, work = sys.argv[1:]
text = open(base).read()
one = re.sub(r"metric:\n  - \{name: val_accuracy, goal: maximize\}\n  - .*\n",
             "metric: {name: val_accuracy, goal: maximize}\n", text)
assert one != text
rand = re.sub(r"search:\n(  .*\n)+", "search:\n  method: random\n  trials: 17\n", text)
assert rand != text
open(f"{work}/pareto.yaml", "w").write(text)
open(f"{work}/accuracy.yaml", "w").write(one)
open(f"{work}/random.yaml", "w").write(rand)
PY

runs=()
i=0
for seed in $seeds; do
  order=(pareto accuracy random)
  [ $((i % 2)) -eq 1 ] && order=(random accuracy pareto)
  i=$((i + 1))
  for variant in "${order[@]}"; do
    sed "s/^seed: .*/seed: $seed/" "$work/$variant.yaml" > "$work/$variant-$seed.yaml"
    start=$(date +%s.%N)
    "$hfta" run "$work/$variant-$seed.yaml" --out "$work/$variant-$seed" > "$work/$variant-$seed.log"
    end=$(date +%s.%N)
    runs+=("$variant-$seed=$(echo "$end - $start" | bc)")
  done
done

mkdir -p "$out"
python3 - "$work" "$out" "${runs[@]}" <<'PY'
import json, subprocess, sys, datetime, statistics
work, out, *runs = sys.argv[1:]
ACC0, SIZE0 = 0.80, 270000.0  # the hypervolume's reference point

def size(p):  # the plain MLP's parameters: 784 -> width x depth -> 10
    w, d = p["width"], p["depth"]
    return 784 * w + w + (d - 1) * (w * w + w) + 10 * w + 10

def front(points):  # (accuracy, size) pairs no other dominates
    return sorted({(a, s) for a, s in points
                   if not any(b >= a and t <= s and (b > a or t < s) for b, t in points)}, reverse=True)

def hypervolume(f):  # the area they dominate within the box, as a fraction of it
    # By size ascending: from each size to the next, the best accuracy at or below it.
    area, best = 0.0, ACC0
    pts = sorted(f, key=lambda x: x[1])
    for k, (a, s) in enumerate(pts):
        best = max(best, a)
        nxt = pts[k + 1][1] if k + 1 < len(pts) else SIZE0
        area += (best - ACC0) * (max(nxt, s) - s)
    return area / ((1 - ACC0) * SIZE0)

rows = {}
for r in runs:
    name, secs = r.split("=")
    variant, seed = name.rsplit("-", 1)
    res = json.load(open(f"{work}/{name}/results.json"))
    finished = [t for t in res["trials"] if t["status"] == "stopped" or
                (t["status"] == "completed" and t["budget"] >= 9)]
    f = front([(t["metric"], size(t["params"])) for t in finished if t["metric"] is not None])
    rows.setdefault(int(seed), {})[variant] = {"seconds": float(secs), "trials": len(res["trials"]),
                                               "finished": len(finished), "front": f,
                                               "hypervolume": hypervolume(f)}
    if variant == "pareto":  # the front the sweep reports is the one computed here
        reported = {(t["objectives"]["val_accuracy"], t["objectives"]["params"]) for t in res["pareto_front"]}
        assert reported == set(f), (name, reported, f)  # (equal trials are both on it: counted once here)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
names = {"pareto": "Hyperband, Pareto", "accuracy": "Hyperband, accuracy", "random": "random, 17 trials"}
lines = ["| seed | " + " | ".join(f"{n}: front, hypervolume, time" for n in names.values()) + " |",
         "|---|" + "---|" * len(names)]
for seed in sorted(rows):
    cells = [f"{len(rows[seed][v]['front'])}, {rows[seed][v]['hypervolume']:.4f}, {rows[seed][v]['seconds']:.1f} s"
             for v in names]
    lines.append(f"| {seed} | " + " | ".join(cells) + " |")
mean = lambda v, k: statistics.mean(rows[s][v][k] for s in rows)
lines.append("| mean | " + " | ".join(f"{statistics.mean(len(rows[s][v]['front']) for s in rows):.1f}, "
                                      f"{mean(v, 'hypervolume'):.4f}, {mean(v, 'seconds'):.1f} s" for v in names) + " |")
table = "\n".join(lines)
print(table)
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
with open(f"{out}/multi-objective-cpu.md", "w") as fh:
    fh.write(f"# Two objectives: Pareto-ranked Hyperband against ranking by accuracy, and random search\n\n"
             f"`experiments/multi_objective_bench.sh` at {commit}, {cpu}, {date}: configs/multi_objective.yaml "
             f"(val_accuracy and params), the same ranked by val_accuracy alone, and random search of 17 trials, "
             f"per sweep seed, default workers. Front: the non-dominated of the trials that finished training; "
             f"hypervolume: the share of the box accuracy [0.80, 1] x params [0, 270,000] it dominates (larger "
             f"is better).\n\n{table}\n")
json.dump({"machine": {"cpu": cpu, "commit": commit, "date": date}, "seeds": rows},
          open(f"{out}/multi-objective-cpu.json", "w"), indent=1)
print(f"wrote {out}/multi-objective-cpu.md")
PY
