#!/usr/bin/env bash
# Does TPE in waves find better trials than random search, and what do the
# waves cost in fusion? Runs one successive-halving sweep (the quickstart's MLP
# and parameters, 27 trials, budgets 1 to 9 epochs) with searcher random and
# searcher tpe (search.waves as hfta-tune picks it), for each of several sweep
# seeds, alternating which runs first. Prints per seed: each searcher's best
# validation accuracy and its trial's test accuracy, the mean first-rung
# accuracy of the trials after the first wave (those TPE proposes from
# results; random search's are the same trial ids), and the wall-clock ratio
# tpe/random (waves train narrower arrays). Writes the table to
# experiments/results/searcher-sha-cpu.md (keeping what is written by hand
# under its "## Notes") and the numbers as JSON beside it.
# Usage: experiments/searcher_bench.sh   (SEEDS="1 2 3 4" by default; OUT as sweep_bench.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
hfta=${HFTA_BUILD_DIR:-build}/src/hfta-tune
out=${OUT:-experiments/results}
seeds=${SEEDS:-1 2 3 4}
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
  order="random tpe"
  [ $((i % 2)) -eq 1 ] && order="tpe random"  # whichever runs first is often slower here
  i=$((i + 1))
  for searcher in $order; do
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

def first_rung(directory, ids):
    values = []
    for i in ids:
        t = json.load(open(f"{directory}/trials/{i}/trial.json"))
        if t["rungs"] and t["rungs"][0].get("metric") is not None:  # (failed, diverged: none)
            values.append(t["rungs"][0]["metric"])
    return sum(values) / len(values)

rows, table = [], []
seeds = sorted({int(k.split("-")[1]) for k in seconds})
waves_line = next(l.strip() for l in open(f"{work}/tpe-{seeds[0]}.log") if "waves of" in l)
first_wave = int(waves_line.split("waves of ")[1].split(",")[0])
for seed in seeds:
    row = {"seed": seed}
    for s in ("random", "tpe"):
        r = json.load(open(f"{work}/{s}-{seed}/results.json"))
        row[s] = {"best_id": r["best"]["id"], "val_accuracy": r["best"]["metric"],
                  "test_accuracy": r["best"]["test"]["accuracy"], "seconds": seconds[f"{s}-{seed}"],
                  "later_waves_first_rung": first_rung(f"{work}/{s}-{seed}", range(first_wave, 27))}
    row["time_ratio"] = row["tpe"]["seconds"] / row["random"]["seconds"]
    rows.append(row)
    table.append(f"| {seed} | {row['random']['val_accuracy']:.4f} / {row['random']['test_accuracy']:.4f} | "
                 f"{row['tpe']['val_accuracy']:.4f} / {row['tpe']['test_accuracy']:.4f} | "
                 f"{row['random']['later_waves_first_rung']:.4f} | {row['tpe']['later_waves_first_rung']:.4f} | "
                 f"{row['random']['seconds']:.1f} | {row['tpe']['seconds']:.1f} | {row['time_ratio']:.2f} |")
sh = lambda cmd: subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
machine = sh("lscpu | sed -n 's/^Model name: *//p'") + f", {os.cpu_count()} CPUs"
commit = sh("git rev-parse --short HEAD")
header = ["| seed | random: best val / its test | tpe: best val / its test | random: mean rung-0 val of trials "
          f"{first_wave}-26 | tpe: same trials | random s | tpe s | tpe/random time |",
          "|---|---|---|---|---|---|---|---|"]
# What was written by hand below "## Notes" stays.
old = open(f"{out}/searcher-sha-cpu.md").read() if os.path.exists(f"{out}/searcher-sha-cpu.md") else ""
notes = old[old.index("## Notes"):] if "## Notes" in old else ""
text = "\n".join([
    f"# TPE in waves against random search: successive halving on the quickstart MLP",
    "",
    f"experiments/searcher_bench.sh, {datetime.date.today()}, commit {commit}, {machine}.",
    "27 trials, eta 3, budgets 1, 3, 9 epochs; tpe's plan: " + waves_line,
    "", *header, *table, ""]) + ("\n" + notes if notes else "")
print(text)
open(f"{out}/searcher-sha-cpu.md", "w").write(text)
json.dump({"machine": machine, "commit": commit, "date": str(datetime.date.today()), "rows": rows},
          open(f"{out}/searcher-sha-cpu.json", "w"), indent=1)
PY
