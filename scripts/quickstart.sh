#!/usr/bin/env bash
# Sets everything up and runs the quickstart sweep (configs/quickstart.yaml).
# Until the tuner lands, the quickstart validates the sweep and prints its plan summary.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh --target hfta-tune
"${HFTA_BUILD_DIR:-build}/src/hfta-tune" validate configs/quickstart.yaml
