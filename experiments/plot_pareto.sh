#!/usr/bin/env bash
# Draws a sweep of two objectives: every trial that finished training at its
# two values, the Pareto front (results.json's pareto_front) joined as the
# staircase that bounds what it dominates, and the trials a rung passed over (their values at the budget
# they reached, less trained) in grey.
# Needs gnuplot (Debian: gnuplot-nox, installed here when missing) and python3.
# Usage: experiments/plot_pareto.sh DIR [OUT.png] (default experiments/results/pareto-<name>-cpu.png)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
dir=$(from_caller "${1:?usage: experiments/plot_pareto.sh DIR [OUT.png]}")
if ! command -v gnuplot > /dev/null; then
  apt-get install -y --no-install-recommends gnuplot-nox > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Writes the three point sets and prints: name, the two objectives' names and goals.
read -r name x goal_x y goal_y < <(python3 - "$dir/results.json" "$work" <<'PY'
import json, sys
res, work = json.load(open(sys.argv[1])), sys.argv[2]
(x, y) = [(o["name"], o["goal"]) for o in res["objectives"][:2]]
front = {t["id"] for t in res["pareto_front"]}
top = max(t["budget"] for t in res["trials"])
with open(f"{work}/front", "w") as f_front, open(f"{work}/done", "w") as f_done, open(f"{work}/cut", "w") as f_cut:
    for t in res["trials"]:
        o = t.get("objectives", {})
        if o.get(x[0]) is None or o.get(y[0]) is None:
            continue
        row = f"{o[x[0]]} {o[y[0]]} {t['id']}\n"
        finished = t["status"] == "stopped" or t["budget"] >= top
        (f_done if finished else f_cut).write(row)
    # The front in order of its second objective, as a staircase.
    for t in sorted(res["pareto_front"], key=lambda t: t["objectives"][y[0]]):
        f_front.write(f"{t['objectives'][x[0]]} {t['objectives'][y[0]]} {t['id']}\n")
print(res["name"], x[0], x[1], y[0], y[1])
PY
)
png=$(from_caller "${2:-}"); png=${png:-$(results_dir)/pareto-$name-cpu.png}
gnuplot <<GP
set terminal pngcairo size 800,520 font "sans,10"
set output "$png"
set termoption noenhanced
set title "$name: the Pareto front of $x ($goal_x) and $y ($goal_y)"
set xlabel "$x"
set ylabel "$y"
set logscale y
set grid
set key below
plot "$work/cut" using 1:2 with points pt 6 ps 0.8 lc rgb "#aaaaaa" title "passed over by a rung (less trained)", \
     "$work/done" using 1:2 with points pt 7 ps 1.0 lc rgb "#1f77b4" title "trained to budget.max or stopped early", \
     "$work/front" using 1:2 with fsteps lw 2 lc rgb "#d62728" title "Pareto front", \
     "$work/front" using 1:2:3 with labels offset 1.2,0.6 tc rgb "#d62728" notitle
GP
echo "wrote $png"
