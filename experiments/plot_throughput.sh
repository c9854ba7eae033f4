#!/usr/bin/env bash
# Draws throughput against B (serial, concurrent, fused) from throughput_bench
# JSON files: experiments/results/NAME.json -> experiments/results/NAME.png.
# Needs gnuplot (Debian: gnuplot-nox, installed here when missing) and python3.
# Usage: experiments/plot_throughput.sh RESULT.json...
set -euo pipefail
if ! command -v gnuplot > /dev/null; then
  apt-get install -y --no-install-recommends gnuplot-nox > /dev/null
fi
for json in "$@"; do
  data=$(mktemp)
  title=$(python3 - "$json" "$data" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as out:
    for row in r["results"]:
        cells = [str(row["models"])] + [str(row.get(m, "NaN")) for m in ("serial", "concurrent", "fused")]
        out.write(" ".join(cells) + "\n")
opts = ", ".join(f"{k}={v}" for k, v in sorted(r["options"].items()))
print(f"{r['model']}{' (' + opts + ')' if opts else ''}, batch {r['batch']}, {r['device']}, "
      f"{r['threads']} thread(s), commit {r['machine']['commit']}")
PY
)
  gnuplot <<GP
set terminal pngcairo size 800,500 font "sans,10"
set output "${json%.json}.png"
set title "${title}"
set xlabel "models B"
set ylabel "model-samples / s"
set logscale x 2
set key top left
set grid
plot "$data" using 1:2 with linespoints title "serial", \
     "$data" using 1:3 with linespoints title "concurrent", \
     "$data" using 1:4 with linespoints title "fused (hfta-tune)"
GP
  rm -f "$data"
  echo "wrote ${json%.json}.png"
done
