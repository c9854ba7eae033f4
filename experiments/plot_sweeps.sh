#!/usr/bin/env bash
# Draws one bar chart from sweep_bench.sh's JSON files: each sweep's wall-clock
# time relative to --fusion off with one worker, for every mode it ran.
# Needs gnuplot (Debian: gnuplot-nox, installed here when missing) and python3.
# Usage: experiments/plot_sweeps.sh [OUT.png] (default experiments/results/sweeps-cpu.png)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
png=$(from_caller "${1:-}"); png=${png:-$(results_dir)/sweeps-cpu.png}
if ! command -v gnuplot > /dev/null; then
  apt-get install -y --no-install-recommends gnuplot-nox > /dev/null
fi
data=$(mktemp)
trap 'rm -f "$data"' EXIT
python3 - "$data" "$(results_dir)"/sweep-*-cpu.json <<'PY'
import json, os, sys
modes = ["auto-1", "off-1", "auto-N", "off-N"]
with open(sys.argv[1], "w") as out:
    for path in sys.argv[2:]:
        r = json.load(open(path))
        base = r["modes"]["off-1"]["seconds"]
        label = os.path.basename(r["sweep"]).removesuffix(".yaml")
        cells = [f"{base / r['modes'][m]['seconds']:.3f}" if m in r["modes"] else "NaN" for m in modes]
        out.write(f"{label} " + " ".join(cells) + "\n")
PY
gnuplot <<GP
set terminal pngcairo size 900,480 font "sans,10"
set output "$png"
set title "Whole sweeps: speed relative to --fusion off with one worker (higher is faster)"
set ylabel "speedup"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key below
set termoption noenhanced
set grid ytics
set yrange [0:*]
set xtics rotate by -20
plot "$data" using 2:xtic(1) title "fusion auto, 1 worker", \
     "" using 3 title "fusion off, 1 worker", \
     "" using 4 title "fusion auto, 1 worker per core", \
     "" using 5 title "fusion off, 1 worker per core"
GP
echo "wrote $png"
