#!/usr/bin/env bash
# Run on a Debian 12 machine that reaches Debian's archive. Downloads what
# hfta-tune builds against besides LibTorch and CUDA (JSON, CLI, YAML, GoogleTest,
# Google Benchmark, zlib headers), the Fashion-MNIST files and the fortunes corpus, and unpacks them
# into .deps/ (git-ignored; about 45 MiB), to carry with the source tree to a GPU
# machine that has PyTorch but no package registry (scripts/gpu/build-and-bench.sh).
# No package is installed here; nothing is committed.
# Usage: scripts/gpu/prepare-deps.sh [DIR]   (default: .deps in the repository)
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=$(realpath -m "${1:-.deps}")
packages=(
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libyaml-cpp0.7
  libgtest-dev googletest libbenchmark-dev libbenchmark1debian zlib1g-dev
  dataset-fashion-mnist fortunes fortunes-min
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 777 "$work"  # apt's download user must write there
(cd "$work" && apt-get download -q "${packages[@]}" 2>&1 | grep -v "unsandboxed" || true)
for p in "${packages[@]}"; do
  ls "$work"/"${p}"_*.deb > /dev/null || { echo "prepare-deps: could not download $p" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$dest"; done
# zlib1g-dev's libz.so points at this machine's exact libz version: point it at the
# soname every x86-64 Linux has instead.
ln -sf /lib/x86_64-linux-gnu/libz.so.1 "$dest/usr/lib/x86_64-linux-gnu/libz.so"
echo "prepare-deps: $(du -sh "$dest" | cut -f1) in $dest"
