#!/usr/bin/env bash
# Builds hfta-tune and its tests with AddressSanitizer and UndefinedBehaviorSanitizer
# in ./build-asan (or $HFTA_ASAN_BUILD_DIR), runs the test suite under them, then a
# short quickstart sweep (run, status, export) with leak detection. Any report
# fails it, and is printed. Arguments go to ctest, e.g. `-R Cli` for a part of
# the suite. Slow: about 50 minutes to build on two cores, 40 to test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
dir=${HFTA_ASAN_BUILD_DIR:-build-asan}
flags="-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer"
if [ ! -f "$dir/CMakeCache.txt" ]; then
  # (vptr checks need every library's type information instrumented: LibTorch's is not.)
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHFTA_BUILD_EXPERIMENTS=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
fi
cmake --build "$dir" --parallel "$(nproc)"

logs=$(mktemp -d)
# The suite without leak detection: tests end with LibTorch's and GoogleTest's
# process-lifetime objects alive, and a killed or forked process is no leak.
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$logs/ubsan"
ASAN_OPTIONS="detect_leaks=0:log_path=$logs/asan" \
  ctest --test-dir "$dir" --output-on-failure --parallel "$(nproc)" --timeout 3000 "$@" || failed=1
# A sweep's whole life, with leak detection: what leaks per trial adds up over thousands.
sweep=$(mktemp -d)
for verb in "run configs/quickstart.yaml --out $sweep/q --time-limit 60s" "status $sweep/q" "export $sweep/q --output $sweep/q.json"; do
  # shellcheck disable=SC2086
  ASAN_OPTIONS="detect_leaks=1:log_path=$logs/leak" "$dir/src/hfta-tune" $verb > "$sweep/out" 2>&1 ||
    { echo "hfta-tune $verb failed:"; cat "$sweep/out"; failed=1; }
done
rm -rf "$sweep"
if compgen -G "$logs/*" > /dev/null; then
  echo "sanitizer reports ($logs):"
  cat "$logs"/*
  exit 1
fi
rm -rf "$logs"
[ -z "${failed:-}" ] && echo "sanitize: no reports"
