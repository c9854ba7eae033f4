# Sourced by the experiments' scripts, which run from the repository's root
# (the binary at build/src/hfta-tune, configs/, experiments/results/). A path
# the caller gives (an argument, OUT, HFTA_BUILD_DIR) still names a file from
# where the caller stood: `experiments/plot_pareto.sh runs/x` reads ./runs/x.
caller_dir=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# A caller's path as the root sees it ("" stays ""; one given from the root
# stays as written, as the recorded results name it: configs/cnn.yaml).
from_caller() {
  case $1 in
    '' | /*) printf '%s\n' "$1" ;;
    *) if [ "$caller_dir" = "$PWD" ]; then printf '%s\n' "$1"; else printf '%s\n' "$caller_dir/$1"; fi ;;
  esac
}

# Made absolute here, so that a script one runs (tabular_bench.sh runs
# sweep_bench.sh) reads them as its caller meant.
if [ -n "${OUT:-}" ]; then export OUT=$(from_caller "$OUT"); fi
if [ -n "${HFTA_BUILD_DIR:-}" ]; then export HFTA_BUILD_DIR=$(from_caller "$HFTA_BUILD_DIR"); fi

# The build whose binaries run, and where results go.
build_dir=${HFTA_BUILD_DIR:-build}
results_dir() { echo "${OUT:-experiments/results}"; }
