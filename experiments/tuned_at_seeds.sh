# Sourced by the *_vs_sklearn.sh experiments: runs a sweep on its example
# tables at sweep seeds 1 to 4, into a temporary directory $work (removed on
# exit) holding data/ (the tables), run-SEED/ (the experiment), run-SEED.log
# and run-SEED.seconds (the whole run's wall time).
# Usage: tuned_at_seeds NAME CONFIG TABLE...   (TABLE: a file in configs/data/)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/repo_root.sh"
hfta=$build_dir/src/hfta-tune
out=$(results_dir)
tuned_at_seeds() {
  local name=$1 config=$2
  shift 2
  /usr/bin/python3 -c 'import sklearn' 2>/dev/null || { echo "$name: apt-get install python3-sklearn" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/data"
  for table in "$@"; do cp "configs/data/$table" "$work/data/"; done
  for seed in 1 2 3 4; do
    sed "s/^seed: .*/seed: $seed/" "$config" > "$work/sweep-$seed.yaml"
    local start
    start=$(date +%s.%N)
    "$hfta" run "$work/sweep-$seed.yaml" --out "$work/run-$seed" > "$work/run-$seed.log"
    echo "$(echo "$(date +%s.%N) - $start" | bc)" > "$work/run-$seed.seconds"
  done
}
