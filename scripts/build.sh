#!/usr/bin/env bash
# Configures and builds hfta-tune in ./build (or $HFTA_BUILD_DIR).
# HFTA_CMAKE_ARGS (space-separated) are passed to CMake, which then re-runs
# configuration. Extra arguments go to `cmake --build`, e.g. `--target hfta-tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${HFTA_BUILD_DIR:-build}
read -r -a cmake_args <<< "${HFTA_CMAKE_ARGS:-}"

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_args[@]}"
elif [ ${#cmake_args[@]} -gt 0 ]; then
  cmake -S . -B "$build_dir" "${cmake_args[@]}"
fi
cmake --build "$build_dir" --parallel "$(nproc)" "$@"
