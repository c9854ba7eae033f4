#!/usr/bin/env bash
# Does TPE learn across Hyperband's passes? Runs the quickstart (Hyperband,
# eta 3, 1 to 9 epochs) with search.iterations: 2 under each searcher of
# SEARCHERS for each seed of SEEDS, one after another, and prints per seed
# each one's best trial (validation accuracy and that trial's test accuracy),
# the mean first-rung accuracy of the second pass's trials (those TPE
# proposes from the first pass's results; the same trial ids under random
# search), and the wall-clock time. Writes the table to
# experiments/results/searcher-hyperband-cpu.md (keeping what is written by
# hand under its "## Notes").
# Usage: experiments/searcher_hyperband.sh   (SEEDS="1 2 3 4", SEARCHERS="random tpe"; OUT as sweep_bench.sh)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
seeds=${SEEDS:-1 2 3 4}
read -r -a searchers <<< "${SEARCHERS:-random tpe}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for seed in $seeds; do
  for s in "${searchers[@]}"; do
    sed -e "s/^seed: 42/seed: $seed/" -e "s/^  eta: 3/  eta: 3\n  iterations: 2\n  searcher: $s/" \
        -e "s/^name: quickstart-mlp/name: hyperband-$s-$seed/" configs/quickstart.yaml > "$work/$s-$seed.yaml"
    start=$(date +%s.%N)
    "$hfta" run "$work/$s-$seed.yaml" --out "$work/$s-$seed" > "$work/$s-$seed.log"
    echo "$(date +%s.%N) - $start" | bc > "$work/$s-$seed.seconds"
  done
done

mkdir -p "$out"
python3 - "$work" "$out" "$seeds" "${searchers[*]}" <<'PY'
import datetime, json, os, subprocess, sys
work, out, seeds, searchers = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
rows, table = [], []
for seed in seeds:
    row = {"seed": int(seed)}
    for s in searchers:
        d = f"{work}/{s}-{seed}"
        r = json.load(open(f"{d}/results.json"))
        n = len(r["trials"])
        first_rung = []
        for t in r["trials"]:
            if t["id"] < n // 2:
                continue  # the first pass
            rungs = json.load(open(f"{d}/trials/{t['id']}/trial.json"))["rungs"]
            if rungs and rungs[0].get("metric") is not None:
                first_rung.append(rungs[0]["metric"])
        row[s] = {"val_accuracy": r["best"]["metric"], "test_accuracy": r["best"]["test"]["accuracy"],
                  "second_pass_first_rung": sum(first_rung) / len(first_rung), "trials": n,
                  "seconds": float(open(f"{d}.seconds").read())}
    rows.append(row)
    table.append(f"| {seed} | " + " | ".join(f"{row[s]['val_accuracy']:.4f} / {row[s]['test_accuracy']:.4f}" for s in searchers)
                 + " | " + " | ".join(f"{row[s]['second_pass_first_rung']:.4f}" for s in searchers)
                 + " | " + " | ".join(f"{row[s]['seconds']:.1f}" for s in searchers) + " |")
sh = lambda cmd: subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
machine = sh("lscpu | sed -n 's/^Model name: *//p'") + f", {os.cpu_count()} CPUs"
commit = sh("git rev-parse --short HEAD")
columns = ([f"{s}: best val / its test" for s in searchers] + [f"{s}: second pass, mean rung-0 val" for s in searchers]
           + [f"{s} s" for s in searchers])
path = f"{out}/searcher-hyperband-cpu.md"
old = open(path).read() if os.path.exists(path) else ""
notes = old[old.index("## Notes"):] if "## Notes" in old else ""
text = "\n".join([
    "# Searchers under Hyperband: the quickstart, two passes",
    "",
    f"experiments/searcher_hyperband.sh, {datetime.date.today()}, commit {commit}, {machine}.",
    f"Hyperband, eta 3, 1 to 9 epochs, search.iterations 2 ({rows[0][searchers[0]]['trials']} trials); the second pass's "
    "trials are proposed from the first pass's results.",
    "", "| seed | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|", *table, ""]) + ("\n" + notes if notes else "")
print(text)
open(path, "w").write(text)
json.dump({"machine": machine, "commit": commit, "date": str(datetime.date.today()), "rows": rows},
          open(f"{out}/searcher-hyperband-cpu.json", "w"), indent=1)
PY
