#!/usr/bin/env bash
# Draws experiments/searchers_vs_optuna.sh's median curves: for each benchmark
# function and dimension, each searcher's median best value (log scale) after
# each trial, hfta-tune's solid, Optuna's dashed.
# Needs gnuplot (Debian: gnuplot-nox, installed here when missing) and python3.
# Usage: experiments/plot_searchers.sh [JSON] [OUT.png]
#   (default experiments/results/searchers-vs-optuna-cpu.json and .png)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
json=$(from_caller "${1:-}"); json=${json:-$(results_dir)/searchers-vs-optuna-cpu.json}
png=$(from_caller "${2:-}"); png=${png:-$(results_dir)/searchers-vs-optuna-cpu.png}
if ! command -v gnuplot > /dev/null; then
  apt-get install -y --no-install-recommends gnuplot-nox > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One data file per panel: a row per trial, a column per searcher; prints the panels and searchers.
read -r panels columns < <(python3 - "$json" "$work" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
curves = r["median_curves"]
panels = list(curves)
columns = list(curves[panels[0]])
for p in panels:
    with open(f"{sys.argv[2]}/{p}.dat", "w") as f:
        for t in range(r["trials"]):
            f.write(f"{t + 1} " + " ".join(f"{max(curves[p][c][t], 1e-12):.6g}" for c in columns) + "\n")
print(",".join(panels), ",".join(c.replace(" ", "_") for c in columns))
PY
)
IFS=, read -r -a panel <<< "$panels"
IFS=, read -r -a column <<< "$columns"
colours=("#1f77b4" "#1f77b4" "#d62728" "#2ca02c" "#98df8a" "#2ca02c" "#7f7f7f" "#7f7f7f")
{
  echo 'set terminal pngcairo size 1400,760 font "sans,9"'
  echo "set output \"$png\""
  echo 'set termoption noenhanced'
  echo 'set logscale y'
  echo 'set format y "%.0e"'
  echo 'set grid'
  echo "set multiplot layout 2,$(( (${#panel[@]} + 1) / 2 )) title \"median best value (0 is the optimum) after each trial, $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["seeds"]))' "$json") seeds; hfta-tune solid, Optuna dashed\""
  for p in "${panel[@]}"; do
    echo "set title \"$p\""
    echo 'set xlabel "trials"'
    line="plot"
    for i in "${!column[@]}"; do
      name=${column[$i]//_/ }
      dash=1
      [[ $name == optuna* ]] && dash=2
      key="title \"$name\""
      [ "$p" != "${panel[0]}" ] && key="notitle"
      line+=" \"$work/$p.dat\" using 1:$((i + 2)) with lines lw 2 dt $dash lc rgb \"${colours[$i]:-#000000}\" $key,"
    done
    echo "${line%,}"
  done
  echo 'unset multiplot'
} > "$work/plot.gp"
gnuplot "$work/plot.gp"
echo "wrote $png"
