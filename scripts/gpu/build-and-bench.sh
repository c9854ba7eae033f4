#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, PyTorch (with CUDA) and CMake, but no package
# registry: builds hfta-tune against the LibTorch inside that PyTorch, with the
# other libraries and Fashion-MNIST carried in .deps/ (made on a Debian machine
# by scripts/gpu/prepare-deps.sh), runs the test suite, then the throughput
# benchmark on the GPU for every trainable model. In at most about 10 minutes.
# Results (JSON, logs) go to $OUT when set (the device tool's output folder),
# else experiments/results.
#   TORCH_PREFIX  where LibTorch's CMake files are (default: asked of python3);
#                 Debian's /usr/lib/x86_64-linux-gnu/cmake checks the plumbing on a CPU machine.
#   DEVICE        cuda (default when PyTorch sees a GPU), or cpu
#   BENCH_SCALE   small (default) or full
set -euo pipefail
cd "$(dirname "$0")/../.."
deps=$(realpath -m .deps)
out=${OUT:-experiments/results}
build=${BUILD_DIR:-build-gpu}
mkdir -p "$out"
[ -d "$deps/usr/include" ] || { echo "build-and-bench: no .deps: run scripts/gpu/prepare-deps.sh first" >&2; exit 2; }
prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}
device=${DEVICE:-$(python3 -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")' 2>/dev/null || echo cpu)}
export HFTA_FASHION_MNIST_DIR=$deps/usr/share/datasets/fashion-mnist
export HFTA_TEXT_CORPUS=$deps/usr/share/games/fortunes
start=$SECONDS
log() { echo "[$((SECONDS - start)) s] $*"; }

log "configure against $prefix for $device"
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHFTA_CCACHE=OFF \
  -DCMAKE_PREFIX_PATH="$deps/usr;$prefix" -DCMAKE_CUDA_ARCHITECTURES=native > "$out/gpu-configure.log" 2>&1 ||
  { tail -30 "$out/gpu-configure.log"; exit 1; }
log "build"
cmake --build "$build" -j"$(nproc)" > "$out/gpu-build.log" 2>&1 || { tail -40 "$out/gpu-build.log"; exit 1; }
log "tests"
(cd "$build" && ctest -j"$(nproc)" --timeout 300 > "$out/gpu-tests.log" 2>&1) || true
tail -15 "$out/gpu-tests.log"

bench=$build/experiments/throughput_bench
run() {  # name, then throughput_bench arguments
  local name=$1
  shift
  log "bench $name"
  timeout 120 "$bench" --device "$device" --repeats 3 "$@" --json "$out/throughput-$name-$device.json" ||
    log "bench $name stopped (timeout or error)"
}
# GPU scale: the B where HFTA reports its ratios, and beyond until memory or arithmetic saturate.
run mlp-256-b128 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 50 --models 1,2,4,8,16,32,64
run cnn-b32 --model cnn --batch 32 --steps 50 --models 1,2,4,8,16,32,64
# Mixed precision, as task.precision trains: fp16 autocast with (per-model) loss scaling.
run mlp-256-b128-fp16 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 50 --models 1,4,16,64 --modes serial,fused --precision fp16
run cnn-b32-fp16 --model cnn --batch 32 --steps 50 --models 1,4,16,64 --modes serial,fused --precision fp16
run pointnet-p1024-b32 --model pointnet --option points=1024 --batch 32 --steps 20 --models 1,2,4,8,16,32
run resnet18-w64-b128 --model resnet18 --option width=64 --batch 128 --steps 10 --models 1,2,4,8 --modes serial,fused
run mobilenet-w1-b128 --model mobilenet_v3_small --batch 128 --steps 10 --models 1,2,4,8,16 --modes serial,fused
run dcgan-64-b128 --model dcgan --batch 128 --steps 10 --models 1,2,4,8,16 --modes serial,fused
# The language models at the catalog's sizes (Transformer LM d256; BERT-Mini) on the fortunes corpus.
run transformer-lm-d256-b64 --model transformer_lm --batch 64 --steps 10 --models 1,2,4,8,16 --modes serial,fused
run bert-mini-b64 --model bert --option size=mini --batch 64 --steps 10 --models 1,2,4,8 --modes serial,fused
log "done"
