#!/usr/bin/env bash
# Do TPE in waves and quasi-random (qmc) search find better trials than
# random search, and what do TPE's waves cost in fusion? Runs one
# successive-halving sweep (the quickstart's MLP and parameters, 27 trials,
# budgets 1 to 9 epochs) with each searcher of SEARCHERS (search.waves as
# hfta-tune picks it for tpe), for each of several sweep seeds, rotating which
# runs first. Prints per seed: each searcher's best validation accuracy and its
# trial's test accuracy, the mean first-rung accuracy of the trials after
# TPE's first wave (those TPE proposes from results; the others' are the same
# trial ids), and each searcher's wall-clock time over random search's (waves
# train narrower arrays). Writes the table to experiments/results/searcher-sha-cpu.md
# (keeping what is written by hand under its "## Notes") and the numbers as JSON beside it.
# Usage: experiments/searcher_bench.sh   (SEEDS="1 2 3 4", SEARCHERS="random qmc tpe" by default; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
seeds=${SEEDS:-1 2 3 4}
read -r -a searchers <<< "${SEARCHERS:-random qmc tpe}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The quickstart as successive halving (keeps its task, parameters and early stopping).
sweep() {  # searcher seed
  python3 - "$1" "$2" <<'PY'
import re, sys
searcher, seed = sys.argv[1:]
text = open("configs/quickstart.yaml").read()
text = re.sub(r"search:\n  method: hyperband\n  eta: 3\n",
              f"search:\n  method: sha\n  eta: 3\n  trials: 27\n  searcher: {searcher}\n", text)
text = re.sub(r"seed: 42", f"seed: {seed}", text)
text = text.replace("name: quickstart-mlp", f"name: sha-{searcher}-{seed}")
assert "method: sha" in text
print(text, end="")
PY
}

runs=()
i=0
for seed in $seeds; do
  # Whichever runs first is often slower here: each seed starts with the next searcher.
  order=("${searchers[@]:i % ${#searchers[@]}}" "${searchers[@]:0:i % ${#searchers[@]}}")
  i=$((i + 1))
  for searcher in "${order[@]}"; do
    sweep "$searcher" "$seed" > "$work/$searcher-$seed.yaml"
    start=$(date +%s.%N)
    "$hfta" run "$work/$searcher-$seed.yaml" --out "$work/$searcher-$seed" > "$work/$searcher-$seed.log"
    end=$(date +%s.%N)
    runs+=("$searcher-$seed=$(echo "$end - $start" | bc)")
  done
done

mkdir -p "$out"
python3 - "$work" "$out" "${runs[@]}" <<'PY'
import datetime, json, os, subprocess, sys
work, out, *runs = sys.argv[1:]
seconds = {r.split("=")[0]: float(r.split("=")[1]) for r in runs}

sys.path.insert(0, "experiments")
from sweep_stats import first_rung

rows, table = [], []
searchers = list(dict.fromkeys(k.split("-")[0] for k in seconds))
seeds = sorted({int(k.split("-")[1]) for k in seconds})
waves_line = next((l.strip() for l in open(f"{work}/tpe-{seeds[0]}.log") if "waves of" in l), "") \
    if "tpe" in searchers else ""
first_wave = int(waves_line.split("waves of ")[1].split(",")[0]) if waves_line else 0
for seed in seeds:
    row = {"seed": seed}
    for s in searchers:
        r = json.load(open(f"{work}/{s}-{seed}/results.json"))
        row[s] = {"best_id": r["best"]["id"], "val_accuracy": r["best"]["metric"],
                  "test_accuracy": r["best"]["test"]["accuracy"], "seconds": seconds[f"{s}-{seed}"],
                  "later_waves_first_rung": first_rung(f"{work}/{s}-{seed}", range(first_wave, 27))}
        row[s]["time_ratio"] = row[s]["seconds"] / row[searchers[0]]["seconds"]
    rows.append(row)
    cells = [f"{row[s]['val_accuracy']:.4f} / {row[s]['test_accuracy']:.4f}" for s in searchers]
    cells += [f"{row[s]['later_waves_first_rung']:.4f}" for s in searchers]
    cells += [f"{row[s]['seconds']:.1f}" for s in searchers]
    cells += [f"{row[s]['time_ratio']:.2f}" for s in searchers[1:]]
    table.append(f"| {seed} | " + " | ".join(cells) + " |")
sh = lambda cmd: subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
machine = sh("lscpu | sed -n 's/^Model name: *//p'") + f", {os.cpu_count()} CPUs"
commit = sh("git rev-parse --short HEAD")
columns = ([f"{s}: best val / its test" for s in searchers] +
           [f"{s}: mean rung-0 val of trials {first_wave}-26" for s in searchers] +
           [f"{s} s" for s in searchers] + [f"{s}/{searchers[0]} time" for s in searchers[1:]])
header = ["| seed | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
# What was written by hand below "## Notes" stays.
old = open(f"{out}/searcher-sha-cpu.md").read() if os.path.exists(f"{out}/searcher-sha-cpu.md") else ""
notes = old[old.index("## Notes"):] if "## Notes" in old else ""
text = "\n".join([
    f"# Searchers against random search: successive halving on the quickstart MLP",
    "",
    f"experiments/searcher_bench.sh, {datetime.date.today()}, commit {commit}, {machine}.",
    "27 trials, eta 3, budgets 1, 3, 9 epochs" + ("; tpe's plan: " + waves_line if waves_line else ""),
    "", *header, *table, ""]) + ("\n" + notes if notes else "")
print(text)
open(f"{out}/searcher-sha-cpu.md", "w").write(text)
json.dump({"machine": machine, "commit": commit, "date": str(datetime.date.today()), "rows": rows},
          open(f"{out}/searcher-sha-cpu.json", "w"), indent=1)
PY
