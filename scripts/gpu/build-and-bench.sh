#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, PyTorch (with CUDA) and CMake, but no package
# registry: builds hfta-tune against the LibTorch inside that PyTorch, with the
# other libraries and Fashion-MNIST carried in .deps/ (made on a Debian machine
# by scripts/gpu/prepare-deps.sh), then, within BUDGET_S seconds in all (the
# build included), what issue 8 asks for first:
#   1. bench: the throughput benchmark on the GPU for the MLP, CNN, PointNet,
#      ResNet-18, MobileNetV3 and Transformer LM (serial, concurrent, fused);
#   2. tests: the whole test suite, whose GPU checks (every model's array equal
#      to each trial trained alone on the GPU, the GPU's free memory and peaks,
#      the CLI's GPU sweeps in fp32 and fp16) run where LibTorch sees a GPU;
#   3. extras: BERT, DCGAN, fp16 and prefetched batches in the benchmark;
#   4. sweep: the quickstart sweep on the GPU, --fusion auto against --fusion off.
# (gpu-tests: the GPU checks alone, only when STEPS names it.)
# Each step gets what is left of the budget (or its own cap), so the script ends
# in time and says what it skipped. Logs and JSON go to $OUT when set (the device
# tool's output folder, which takes at most 8 files), else experiments/results.
#   TORCH_PREFIX  where LibTorch's CMake files are (default: asked of python3);
#                 Debian's /usr/lib/x86_64-linux-gnu/cmake checks the plumbing on a CPU machine.
#   DEVICE        cuda (default when PyTorch sees a GPU), or cpu
#   BUDGET_S      seconds for the whole script (default 570)
#   STEPS         which of "gpu-tests bench tests extras sweep" to run, in that
#                 order (default: "bench tests extras sweep")
#   BENCHES       which benchmarks, by name (default: all those of the steps)
#   HFTA_COMMIT   the commit, recorded in the JSON (the device's copy of the tree
#                 has no .git: give it, e.g. HFTA_COMMIT=$(git rev-parse --short HEAD)
#                 expanded on the machine that starts the run)
#   SKIP_BUILD    1: use what BUILD_DIR (default build-gpu) holds, as on a machine still warm
set -uo pipefail
cd "$(dirname "$0")/../.."
deps=$(realpath -m .deps)
out=${OUT:-experiments/results}
build=${BUILD_DIR:-build-gpu}
budget=${BUDGET_S:-570}
steps=${STEPS:-bench tests extras sweep}
mkdir -p "$out"
[ -d "$deps/usr/include" ] || { echo "build-and-bench: no .deps: run scripts/gpu/prepare-deps.sh first" >&2; exit 2; }
prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}
device=${DEVICE:-$(python3 -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")' 2>/dev/null || echo cpu)}
export HFTA_FASHION_MNIST_DIR=$deps/usr/share/datasets/fashion-mnist
export HFTA_TEXT_CORPUS=$deps/usr/share/games/fortunes
export HFTA_COMMIT=${HFTA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
start=$SECONDS
log() { echo "[$((SECONDS - start)) s] $*"; }
wanted() { [[ " $steps " == *" $1 "* ]]; }
# within CAP COMMAND...: runs COMMAND for at most CAP seconds and what is left of the budget.
within() {
  local cap=$1 left=$((budget - (SECONDS - start) - 5))
  shift
  ((left < cap)) && cap=$left
  if ((cap < 10)); then
    log "skipped, out of time: $*"
    return 124
  fi
  timeout "$cap" "$@"
}

log "configure against $prefix for $device (commit $HFTA_COMMIT)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  generator=() keep_going=()
  if command -v ninja > /dev/null; then generator=(-G Ninja) keep_going=(-- -k 0); fi
  # The GPU's own architecture ("native" needs CMake 3.24; the driver names it on any).
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHFTA_CCACHE=OFF \
    -DCMAKE_PREFIX_PATH="$deps/usr;$prefix" -DCMAKE_CUDA_ARCHITECTURES="${arch:-native}" > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
  log "build"
  # Every target the steps use, and every error at once (-k 0) rather than the first.
  cmake --build "$build" -j"$(nproc)" --target hfta-tune throughput_bench test_core test_fusion test_trainers \
    test_search "${keep_going[@]}" >> "$out/build.log" 2>&1 ||
    { grep -E "error|Error" "$out/build.log" | sort -u | head -60; log "build failed"; exit 1; }
  log "built"
fi

if wanted gpu-tests; then
  log "GPU checks"
  {
    within 150 "$build/tests/test_trainers" --gtest_filter='*OnTheGpu*'
    within 60 "$build/tests/test_fusion" --gtest_filter='DeviceMemory.*:DeviceList.*:*OnTheGpu*'
    within 150 "$build/tests/test_core" --gtest_filter='Cli.Cuda*:Cli.MixedPrecision*'
  } > "$out/gpu-tests.log" 2>&1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|error" "$out/gpu-tests.log" | head -40
fi

bench=$build/experiments/throughput_bench
benches=${BENCHES:-pointnet mlp cnn resnet18 mobilenet transformer_lm bert dcgan mlp-fp16 cnn-fp16 mlp-prefetch}
: > "$out/bench.log"
run() {  # name, cap in seconds, then throughput_bench arguments
  local name=$1 cap=$2
  shift 2
  [[ " $benches " == *" $name "* ]] || return 0
  log "bench $name"
  within "$cap" "$bench" --device "$device" --repeats 3 "$@" --json "$out/throughput-$name-$device.json" \
    >> "$out/bench.log" 2>&1 || log "bench $name stopped (time or error); the sizes it finished are kept"
}
if wanted bench; then
  # GPU scale: HFTA's settings where it published ratios (PointNet classification at
  # batch 32, 1024 points; the MLP at batch 128), and B until memory or arithmetic saturate.
  run pointnet 60 --model pointnet --option points=1024 --batch 32 --steps 20 --models 1,2,4,8,16,32,64 --concurrent-max 4
  run mlp 40 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 30 --models 1,2,4,8,16,32,64,128 --concurrent-max 4
  run cnn 40 --model cnn --batch 32 --steps 30 --models 1,2,4,8,16,32,64 --concurrent-max 4
  run resnet18 50 --model resnet18 --option width=64 --batch 128 --steps 10 --models 1,2,4,8 --concurrent-max 4
  run mobilenet 45 --model mobilenet_v3_small --batch 128 --steps 10 --models 1,2,4,8,16 --concurrent-max 4
  run transformer_lm 45 --model transformer_lm --batch 64 --steps 10 --models 1,2,4,8,16 --concurrent-max 4
fi

if wanted tests; then
  log "test suite"
  (cd "$build" && export OMP_NUM_THREADS=2 && within 170 ctest -j"$(nproc)" --timeout 120 > "$out/tests.log" 2>&1)
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\(SEGFAULT\)" "$out/tests.log" | head -30
  echo "GPU checks passed: $(grep -cE "(OnTheGpu|Cli\.Cuda|Cli\.MixedPrecision|DeviceMemory).* Passed" "$out/tests.log")"
fi

if wanted extras; then
  run bert 30 --model bert --option size=mini --batch 64 --steps 10 --models 1,2,4,8 --modes serial,fused
  run dcgan 30 --model dcgan --batch 128 --steps 10 --models 1,2,4,8,16 --modes serial,fused
  # Mixed precision, as task.precision trains: fp16 autocast with per-model loss scaling.
  run mlp-fp16 30 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 30 --models 1,4,16,64 --modes serial,fused --precision fp16
  run cnn-fp16 30 --model cnn --batch 32 --steps 30 --models 1,4,16,64 --modes serial,fused --precision fp16
  # Batches streamed from pinned host memory by a background thread, against batches cut on the GPU.
  run mlp-prefetch 20 --model mlp --option width=256 --batch 128 --steps 30 --models 1,8,64 --modes fused,prefetched
fi
# One file for the JSON (the device tool returns few files); only this device's,
# so that run without OUT it never touches the CPU results beside them.
(cd "$out" && ls throughput-*-"$device".json > /dev/null 2>&1 &&
  tar czf "throughput-json-$device.tgz" throughput-*-"$device".json && rm -f throughput-*-"$device".json)

if wanted sweep; then
  # The quickstart sweep on the GPU, fused and not: wall-clock and the best trial.
  for fusion in auto off; do
    log "sweep quickstart --fusion $fusion"
    rm -rf "/tmp/hfta-sweep-$fusion"
    s=$SECONDS
    within 60 "$build/src/hfta-tune" run configs/quickstart.yaml --device "$device" --fusion "$fusion" \
      --out "/tmp/hfta-sweep-$fusion" > "/tmp/hfta-sweep-$fusion.log" 2>&1
    echo "fusion $fusion: rc $?, $((SECONDS - s)) s" >> "$out/sweep.log"
    tail -15 "/tmp/hfta-sweep-$fusion.log" >> "$out/sweep.log"
  done
  python3 - "$out/sweep.log" <<'PY' || true
import json, sys
runs = {f: json.load(open(f"/tmp/hfta-sweep-{f}/results.json")) for f in ("auto", "off")}
a, b = runs["auto"], runs["off"]
diff = max(abs(x["metric"] - y["metric"]) for x, y in zip(a["trials"], b["trials"]) if x["metric"] is not None and y["metric"] is not None)
line = f"best auto {a['best']['id']} {a['best']['metric']:.4f}, off {b['best']['id']} {b['best']['metric']:.4f}; largest per-trial metric difference {diff:.2e}"
print(line)
open(sys.argv[1], "a").write(line + "\n")
PY
  grep "^fusion" "$out/sweep.log"
fi

[ -s "$out/bench.log" ] && grep -E "^model |^ +[0-9]+ " "$out/bench.log"
log "done"
