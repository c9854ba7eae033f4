#!/usr/bin/env bash
# Does search.warm_start pay: a second sweep whose TPE starts from a first
# sweep's results, against the same second sweep started cold. For each seed:
# a first sweep (successive halving on the quickstart's MLP and space, 27
# trials, budgets 1 to 9 epochs, random search, sweep seed S), then the second
# (the same with searcher: tpe, sweep seed S + 100: other trials) cold and
# warm-started from the first, alternating which runs first. Prints per seed:
# each second sweep's best validation accuracy and its trial's test accuracy,
# the mean first-rung accuracy of its first wave (cold TPE draws it at random;
# warm, it proposes it from the first sweep's results) and of all its trials,
# and its wall-clock time. Writes experiments/results/warm-start-cpu.md (keeping
# what is written by hand under "## Notes") and the numbers as JSON beside it.
# SECOND=9 gives the second sweep 9 trials (all in TPE's first wave: cold, random
# search's draws) and writes warm-start-9-cpu.md.
# Usage: experiments/warm_start_bench.sh   (SEEDS="1 2 3 4", SECOND=27 by default; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
seeds=${SEEDS:-1 2 3 4}
second_trials=${SECOND:-27}
name=warm-start$([[ $second_trials == 27 ]] || echo "-$second_trials")-cpu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The quickstart as successive halving (its task, parameters and early stopping).
sweep() {  # trials searcher seed [warm start directory]
  python3 - "$@" <<'PY'
import re, sys
trials, searcher, seed, *warm = sys.argv[1:]
text = open("configs/quickstart.yaml").read()
extra = f"  warm_start: {warm[0]}\n" if warm else ""
text = re.sub(r"search:\n  method: hyperband\n  eta: 3\n",
              f"search:\n  method: sha\n  eta: 3\n  trials: {trials}\n  searcher: {searcher}\n{extra}", text)
text = re.sub(r"seed: 42", f"seed: {seed}", text)
text = text.replace("name: quickstart-mlp", f"name: sha-{searcher}-{seed}")
assert "method: sha" in text
print(text, end="")
PY
}

timed() {  # name yaml: runs it into $work/name, and prints name=seconds
  local start end
  start=$(date +%s.%N)
  "$hfta" run "$2" --out "$work/$1" > "$work/$1.log"
  end=$(date +%s.%N)
  echo "$1=$(echo "$end - $start" | bc)"
}

runs=()
i=0
for seed in $seeds; do
  sweep 27 random "$seed" > "$work/first-$seed.yaml"
  "$hfta" run "$work/first-$seed.yaml" --out "$work/first-$seed" > "$work/first-$seed.log"
  second=$((seed + 100))
  sweep "$second_trials" tpe "$second" > "$work/cold-$seed.yaml"
  sweep "$second_trials" tpe "$second" "$work/first-$seed" > "$work/warm-$seed.yaml"
  if (( i % 2 == 0 )); then order=(cold warm); else order=(warm cold); fi
  i=$((i + 1))
  for kind in "${order[@]}"; do runs+=("$(timed "$kind-$seed" "$work/$kind-$seed.yaml")"); done
done

mkdir -p "$out"
python3 - "$work" "$out" "$name" "$second_trials" "${runs[@]}" <<'PY'
import datetime, json, os, subprocess, sys
work, out, name, second_trials, *runs = sys.argv[1:]
second_trials = int(second_trials)
seconds = {r.split("=")[0]: float(r.split("=")[1]) for r in runs}
seeds = sorted({int(k.split("-")[1]) for k in seconds})

sys.path.insert(0, "experiments")
from sweep_stats import first_rung

waves_line = next((l.strip() for l in open(f"{work}/cold-{seeds[0]}.log") if "waves of" in l), "")
first_wave = int(waves_line.split("waves of ")[1].split(",")[0]) if waves_line else second_trials
rows, table = [], []
for seed in seeds:
    row = {"seed": seed}
    kept = json.load(open(f"{work}/warm-{seed}/warm_start.json"))
    row["warm_results"] = len(kept["results"])
    for kind in ("cold", "warm"):
        d = f"{work}/{kind}-{seed}"
        r = json.load(open(f"{d}/results.json"))
        row[kind] = {"best_id": r["best"]["id"], "val_accuracy": r["best"]["metric"],
                     "test_accuracy": r["best"]["test"]["accuracy"], "seconds": seconds[f"{kind}-{seed}"],
                     "first_wave_first_rung": first_rung(d, range(first_wave)),
                     "all_first_rung": first_rung(d, range(second_trials))}
    row["first"] = json.load(open(f"{work}/first-{seed}/results.json"))["best"]["metric"]
    rows.append(row)
    c, w = row["cold"], row["warm"]
    table.append(f"| {seed} | {row['first']:.4f} | {row['warm_results']} | "
                 f"{c['val_accuracy']:.4f} / {c['test_accuracy']:.4f} | {w['val_accuracy']:.4f} / {w['test_accuracy']:.4f} | "
                 f"{c['first_wave_first_rung']:.4f} | {w['first_wave_first_rung']:.4f} | "
                 f"{c['all_first_rung']:.4f} | {w['all_first_rung']:.4f} | "
                 f"{c['seconds']:.1f} | {w['seconds']:.1f} | {w['seconds'] / c['seconds']:.2f} |")
n = len(rows)
mean = lambda f: sum(f(r) for r in rows) / n
summary = [
    f"Warm better than cold: best validation accuracy {sum(r['warm']['val_accuracy'] > r['cold']['val_accuracy'] for r in rows)} of {n} seeds "
    f"(mean difference {mean(lambda r: r['warm']['val_accuracy'] - r['cold']['val_accuracy']):+.4f}); "
    f"first wave's mean first-rung accuracy {sum(r['warm']['first_wave_first_rung'] > r['cold']['first_wave_first_rung'] for r in rows)} of {n} "
    f"({mean(lambda r: r['warm']['first_wave_first_rung'] - r['cold']['first_wave_first_rung']):+.4f}); "
    f"all trials' {sum(r['warm']['all_first_rung'] > r['cold']['all_first_rung'] for r in rows)} of {n} "
    f"({mean(lambda r: r['warm']['all_first_rung'] - r['cold']['all_first_rung']):+.4f}); "
    f"time warm/cold {mean(lambda r: r['warm']['seconds'] / r['cold']['seconds']):.2f}."]
sh = lambda cmd: subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
machine = sh("lscpu | sed -n 's/^Model name: *//p'") + f", {os.cpu_count()} CPUs"
commit = sh("git rev-parse --short HEAD")
columns = ["first sweep's best val", "results told", "cold: best val / its test", "warm: best val / its test",
           f"cold: mean rung-0 val, trials 0-{first_wave - 1}", f"warm: mean rung-0 val, trials 0-{first_wave - 1}",
           "cold: mean rung-0 val, all", "warm: mean rung-0 val, all", "cold s", "warm s", "warm/cold time"]
header = ["| seed | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
old = open(f"{out}/{name}.md").read() if os.path.exists(f"{out}/{name}.md") else ""
notes = old[old.index("## Notes"):] if "## Notes" in old else ""
text = "\n".join([
    "# search.warm_start: a second TPE sweep started from a first sweep's results, against it started cold",
    "",
    f"experiments/warm_start_bench.sh, {datetime.date.today()}, commit {commit}, {machine}.",
    "First sweep: successive halving on the quickstart MLP, 27 trials, eta 3, budgets 1, 3, 9 epochs, random search, "
    f"sweep seed S. Second: the same with {second_trials} trials and searcher: tpe at sweep seed S + 100, cold or with warm_start: the first"
    + ("; its plan: " + waves_line if waves_line else "") + ".",
    "", *header, *table, "", *summary, ""]) + ("\n" + notes if notes else "")
print(text)
open(f"{out}/{name}.md", "w").write(text)
json.dump({"machine": machine, "commit": commit, "date": str(datetime.date.today()), "rows": rows},
          open(f"{out}/{name}.json", "w"), indent=1)
PY
