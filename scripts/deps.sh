#!/usr/bin/env bash
# Installs what opforge needs to build and test: Debian packages (apt) and Python packages (pip).
# Safe to re-run: it installs only what is missing. Set OPFORGE_SKIP_DEPS=1 to skip entirely;
# OPFORGE_DEPS_SANITIZE=1 adds clang and libFuzzer (scripts/sanitize.sh).
set -euo pipefail
[ "${OPFORGE_SKIP_DEPS:-0}" = "1" ] && exit 0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(
  cmake ninja-build g++ ccache pkg-config clang-format
  protobuf-compiler libprotobuf-dev libonnx-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  python3 python3-pip python3-dev python3-venv
)
# The sanitizer job (scripts/sanitize.sh) builds with clang and links libFuzzer.
if [ "${OPFORGE_DEPS_SANITIZE:-0}" = "1" ]; then
  apt_packages+=(clang-14 libclang-rt-14-dev)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[deps] installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python="${PYTHON:-python3}"
if ! "$python" -c "import onnx, numpy, onnxruntime, onnxscript, torch, torchvision, transformers, timm, pytest, setuptools" >/dev/null 2>&1; then
  echo "[deps] installing Python packages from python/requirements.txt"
  "$python" -m pip install -q -r "$here/python/requirements.txt"
fi
