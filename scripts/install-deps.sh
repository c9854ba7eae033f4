#!/usr/bin/env bash
# Installs every Debian package hfta-tune needs to build, test and run.
# Idempotent: when everything is present it only checks and returns in about a second.
# Must run as root (or with sudo available) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev            # LibTorch 1.13 (CPU)
  libopenblas0-openmp     # fast BLAS; without it LibTorch uses the reference BLAS (~13x slower matmul)
  libdnnl-dev             # oneDNN's headers: per-model convolutions on the conv layout in place (fusion/dnnl_conv.cpp)
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libgtest-dev libbenchmark-dev zlib1g-dev
  dataset-fashion-mnist   # the real dataset, gzipped IDX files under /usr/share/datasets/fashion-mnist
  fortunes                # the language models' text corpus, under /usr/share/games/fortunes
  ccache                  # optional, but makes rebuilds of LibTorch code bearable on two cores
  python3-torch           # PyTorch 1.13 for Python: the test that exported state dicts load with torch.load
  gnuplot-nox             # draws the benchmark plots (experiments/plot_throughput.sh)
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages already installed"
fi

# Make OpenBLAS (OpenMP flavour) the active BLAS and LAPACK through Debian's alternatives,
# whatever was selected before: LibTorch links libblas.so.3, which follows these links.
arch_dir=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  name="${lib}-${arch_dir}"
  target=$(update-alternatives --list "$name" 2>/dev/null | grep openblas-openmp | head -n1 || true)
  if [ -n "$target" ]; then
    current=$(readlink -f "/etc/alternatives/$name" || true)
    if [ "$current" != "$(readlink -f "$target")" ]; then
      "${sudo_cmd[@]}" update-alternatives --quiet --set "$name" "$target"
      echo "install-deps: $lib -> $target"
    fi
  else
    echo "install-deps: warning: no OpenBLAS alternative for $lib" >&2
  fi
done
