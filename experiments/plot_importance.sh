#!/usr/bin/env bash
# Draws a sweep's parameter importance (results.json's "importance") as bars,
# largest at the top, as Optuna's plot_param_importances does, titled with the
# metric, the budget and how many results it judged.
# Needs gnuplot (Debian: gnuplot-nox, installed here when missing) and python3.
# Usage: experiments/plot_importance.sh DIR [OUT.png] (default experiments/results/importance-<name>-cpu.png)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
dir=$(from_caller "${1:?usage: experiments/plot_importance.sh DIR [OUT.png]}")
if ! command -v gnuplot > /dev/null; then
  apt-get install -y --no-install-recommends gnuplot-nox > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Writes the bars (smallest first: gnuplot draws the first at the bottom) and prints the title.
title=$(python3 - "$dir/results.json" "$work/bars" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
imp = res.get("importance")
if not imp or not imp["params"]:
    sys.exit("no importance to draw: " + (imp or {}).get("why", "results.json has none (written before it existed)"))
with open(sys.argv[2], "w") as f:
    for i, p in enumerate(reversed(imp["params"])):
        f.write(f'{i} {p["importance"]} "{p["name"]}"\n')
print(f'{res["name"]}: importance for {imp["metric"]}\\n(fANOVA, {imp["results"]} trials at {imp["budget"]:g} {imp.get("unit", "budget units")}; '
      f'alone the parameters explain {100 * imp["main_effects"]:.0f}% of its variance)')
PY
)
name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$dir/results.json")
png=$(from_caller "${2:-}"); png=${png:-$(results_dir)/importance-$name-cpu.png}
rows=$(wc -l < "$work/bars")
gnuplot <<GP
set terminal pngcairo size 760,$((160 + 40 * rows)) font "sans,10"
set output "$png"
set termoption noenhanced
set title "$title"
set xlabel "share of the main effects"
set xrange [0:1]
set yrange [-0.6:$rows - 0.4]
set ytics scale 0
set lmargin 16
set grid x
set style fill solid 0.8
unset key
plot "$work/bars" using (\$2 / 2):1:(\$2 / 2):(0.35):ytic(3) with boxxyerror lc rgb "#1f77b4", \
     "$work/bars" using 2:1:(sprintf("%.2f", \$2)) with labels left offset 0.6,0
GP
echo "wrote $png"
