#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: install packages, build, ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
ctest --test-dir "${HFTA_BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)"
