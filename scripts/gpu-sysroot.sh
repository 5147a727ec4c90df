#!/usr/bin/env bash
# gpu-sysroot.sh — packs the Debian -dev files opforge's build needs (protobuf, onnx, CLI11,
# nlohmann-json, fmt, GoogleTest, Google Benchmark) into .gpudeps/sysroot.tar.gz, so that the GPU
# machine, which has CUDA, cmake and ninja but not these packages, can build the tree itself with
# its 16 cores: there, `tar -xzf .gpudeps/sysroot.tar.gz -C /` puts them at the paths their CMake
# configs name. .gpudeps/ is git-ignored through .git/info/exclude; carry it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
pkgs=(libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32 libonnx-dev
      libonnx1 libonnxifi libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 libgtest-dev libgmock-dev
      libbenchmark-dev libbenchmark1debian zlib1g-dev)
grep -qx '/.gpudeps/' .git/info/exclude 2>/dev/null || echo '/.gpudeps/' >>.git/info/exclude
mkdir -p .gpudeps
list="$(mktemp)"
for p in "${pkgs[@]}"; do
  dpkg -L "$p" | grep -v -e '^/usr/share/doc' -e '^/usr/share/man' | while read -r f; do
    if [ -f "$f" ] || [ -L "$f" ]; then echo "${f#/}"; fi
  done
done | sort -u >"$list"
tar -czf .gpudeps/sysroot.tar.gz -C / -T "$list"
rm -f "$list"
echo "gpu-sysroot: .gpudeps/sysroot.tar.gz ($(du -h .gpudeps/sysroot.tar.gz | cut -f1), ${#pkgs[@]} packages)"
