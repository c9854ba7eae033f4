#!/usr/bin/env bash
# Sets everything up and runs the quickstart sweep (configs/quickstart.yaml):
# Hyperband over MLPs on Fashion-MNIST, about half a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh --target hfta-tune
hfta="${HFTA_BUILD_DIR:-build}/src/hfta-tune"
"$hfta" validate configs/quickstart.yaml
out=runs/quickstart-$(date +%Y%m%d-%H%M%S)
"$hfta" run configs/quickstart.yaml --out "$out"
