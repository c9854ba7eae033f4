#!/usr/bin/env bash
# Runs throughput_bench for every trainable model at CPU scale, writes
# throughput-*-cpu.json and a plot of each into $OUT (default experiments/results).
# Usage: experiments/throughput_all.sh [build dir] (default: build)
set -euo pipefail
source "$(dirname "$0")/repo_root.sh"
bench=$(from_caller "${1:-}"); bench=${bench:-$build_dir}/experiments/throughput_bench
out=$(results_dir)
mkdir -p "$out"
run() {  # name, then throughput_bench arguments
  local name=$1
  shift
  "$bench" "$@" --json "$out/throughput-$name-cpu.json"
}
# Overhead-bound: a small MLP at a small batch.
run mlp-32-b16 --model mlp --option width=32 --batch 16 --steps 50 --models 1,2,4,8,16,32
# The issue's small models at batch 32.
run mlp-64-b32 --model mlp --option width=64 --batch 32 --steps 30 --models 1,2,4,8,16,32
run cnn-b32 --model cnn --batch 32 --steps 20 --models 1,2,4,8,16,32
# HFTA's own CPU reference workload: MLP 784-256-256-10, batch 128, Adam, dropout, 1 and 2 threads.
run mlp-256-b128-t1 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 20 --models 1,2,4,8,16,32
run mlp-256-b128-t2 --model mlp --option width=256 --batch 128 --dropout 0.2 --steps 20 --threads 2 \
  --models 1,2,4,8,16,32 --modes serial,fused
# Larger models at CPU scale (GPU scale: points=1024, width=64).
run pointnet-p128-b32 --model pointnet --option points=128 --batch 32 --steps 10 --models 1,2,4,8,16,32
# With both T-Nets it trains 112 model-samples/s: arrays past 8 would take this script ten minutes more.
run pointnet-tf-p128-b32 --model pointnet --option points=128 --option input_transform=true \
  --option feature_transform=true --batch 32 --steps 5 --models 1,2,4,8
run dcgan-16-b64 --model dcgan --option nz=32 --option ngf=16 --option ndf=16 --batch 64 --steps 10 --models 1,2,4,8,16,32
run resnet18-w8-b32 --model resnet18 --option width=8 --batch 32 --steps 5 --models 1,2,4,8,16,32 --repeats 3
run mobilenet-w05-b32 --model mobilenet_v3_small --option width_mult=0.5 --batch 32 --steps 5 --models 1,2,4,8,16,32
# Language models at CPU scale (configs/transformer_lm.yaml's and configs/bert.yaml's shapes).
run transformer-lm-d64-b32 --model transformer_lm --option d_model=64 --option heads=4 --option layers=2 \
  --option ff=256 --option seq_len=64 --batch 32 --steps 10 --models 1,2,4,8,16,32
run bert-tiny-b32 --model bert --option size=tiny --option seq_len=64 --batch 32 --steps 5 --models 1,2,4,8,16,32
experiments/plot_throughput.sh "$out"/throughput-*-cpu.json
