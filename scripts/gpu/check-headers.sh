#!/usr/bin/env bash
# Compiles every source file (syntax only) against another LibTorch's headers,
# taken from Debian's archive, so that API drift between Debian 12's LibTorch 1.13
# and the GPU machine's 2.x shows here, without a GPU and before device time is
# spent. The CUDA-only branches compile too, with the CUDA toolkit's headers.
# Usage: [CHECK_ONLY=REGEX] scripts/gpu/check-headers.sh [SUITE [STD]]
#   SUITE  trixie (LibTorch 2.6, the default) or sid (2.14; C++20, which 2.13 on requires)
#   STD    the C++ standard (default c++17 for trixie, c++20 for sid)
# Needs build/compile_commands.json (scripts/build.sh) and Debian's archive; installs nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
suite=${1:-trixie}
std=${2:-$([ "$suite" = sid ] && echo c++20 || echo c++17)}
cache=$(realpath -m .cache/libtorch-$suite)
[ -f build/compile_commands.json ] || { echo "check-headers: no build/compile_commands.json: run scripts/build.sh" >&2; exit 2; }

if [ ! -d "$cache/usr/include/ATen" ]; then
  # apt's own state in the cache folder: the system's sources and lists stay as they are.
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial"
  echo "deb http://deb.debian.org/debian $suite main" > "$cache/apt/sources.list"
  apt_options=(-o Dir::Etc::SourceList="$cache/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$cache/apt/lists" -o Dir::Cache="$cache/apt" -o APT::Architecture=amd64)
  apt-get "${apt_options[@]}" update -q > /dev/null
  (cd "$cache/apt" && apt-get "${apt_options[@]}" download -q libtorch-dev 2>&1 | grep -v unsandboxed || true)
  dpkg-deb -x "$cache"/apt/libtorch-dev_*.deb "$cache"
  # Generated at LibTorch's build from its CMake options; a CPU package leaves it out.
  mkdir -p "$cache/shim/c10/cuda/impl"
  echo "#pragma once" > "$cache/shim/c10/cuda/impl/cuda_cmake_macros.h"
fi
# torch/version.h, or in newer versions the header-only one it includes.
version=$(awk '/define TORCH_VERSION_(MAJOR|MINOR|PATCH) / && !seen[$2]++ {v = v (v ? "." : "") $3} END {print v}' \
  $(ls "$cache"/usr/include/torch/csrc/api/include/torch/version.h "$cache"/usr/include/torch/headeronly/version.h 2> /dev/null))
echo "check-headers: LibTorch $version ($suite), $std"

python3 - "$cache" "$std" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys
cache, std = sys.argv[1:]
headers = ["-isystem", cache + "/shim", "-isystem", cache + "/usr/include",
           "-isystem", cache + "/usr/include/torch/csrc/api/include"]
if os.path.exists("/usr/local/cuda/include/cuda_runtime_api.h"):
    headers += ["-isystem", "/usr/local/cuda/include"]  # the CUDA-only branches
# The precompiled header once, for this LibTorch and standard (with -g, as the
# build compiles: GCC refuses a header built without it).
pch = cache + "/pch"
os.makedirs(pch, exist_ok=True)
flags = ["-O2", "-g", "-DNDEBUG", "-D_GLIBCXX_USE_CXX11_ABI=1", "-std=" + std]
subprocess.run(["cp", "include/hfta/torch_pch.h", pch + "/torch_pch.h"], check=True)
subprocess.run(["g++", *flags, *headers, "-Iinclude", "-x", "c++-header", pch + "/torch_pch.h",
                "-o", pch + "/torch_pch.h.gch"], check=True)

def command(entry):
    args, out, skip = shlex.split(entry["command"]), [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("-o", "-include") or (a == "-isystem" and args[i + 1].startswith("/usr/include/torch")):
            skip = True  # this machine's LibTorch and its precompiled header
            continue
        if a.startswith("-std="):
            a = "-std=" + std
        if a.startswith("-D") and not a.startswith(("-DHFTA", "-DNDEBUG", "-D_GLIBCXX")):
            continue  # Debian 1.13's own definitions
        out.append(a)
    return [out[0], "-fsyntax-only", *headers, "-I" + pch, "-include", "torch_pch.h", *out[1:]]

only = os.environ.get("CHECK_ONLY", "")  # a regular expression: only the files it matches
entries = [e for e in json.load(open("build/compile_commands.json"))
           if "c++-header" not in e["command"] and re.search(only, e["file"])]
def check(entry):
    r = subprocess.run(command(entry), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], [l for l in r.stderr.splitlines() if "error" in l]
failed = 0
with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
    for name, errors in pool.map(check, entries):
        if errors:
            failed += 1
            print("\n".join(errors[:10]))
print(f"check-headers: {len(entries)} files, {failed} with errors")
sys.exit(1 if failed else 0)
PY
