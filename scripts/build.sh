#!/usr/bin/env bash
# Configures and builds hfta-tune in ./build (or $HFTA_BUILD_DIR).
# Extra arguments go to `cmake --build`, e.g. `scripts/build.sh --target hfta-tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${HFTA_BUILD_DIR:-build}

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HFTA_CMAKE_ARGS:-}
fi
cmake --build "$build_dir" --parallel "$(nproc)" "$@"
