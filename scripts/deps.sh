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

# cuDNN's frontend (header-only C++; the graph API's SDPA node that FusedAttention's cuDNN tactics
# build) into third_party/cudnn-frontend/include, from NVIDIA's nvidia-cudnn-frontend wheel, which
# carries the headers. Only where a CUDA compiler is found; without it the tactics are left out.
fe_version=1.32.0
fe_dir="$here/third_party/cudnn-frontend"
if { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } &&
   [ "$(cat "$fe_dir/VERSION" 2>/dev/null)" != "$fe_version" ]; then
  echo "[deps] fetching the cuDNN frontend headers $fe_version into third_party/cudnn-frontend"
  tmp="$(mktemp -d)"
  if "$python" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cudnn-frontend==$fe_version" &&
     "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], [n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("include/")])' \
       "$(ls "$tmp"/nvidia_cudnn_frontend-*.whl | head -1)" "$tmp/x"; then
    rm -rf "$fe_dir"
    mkdir -p "$fe_dir"
    mv "$tmp/x/include" "$fe_dir/include"
    echo "$fe_version" >"$fe_dir/VERSION"
  else
    echo "[deps] could not fetch nvidia-cudnn-frontend $fe_version: FusedAttention's cuDNN tactics are left out"
  fi
  rm -rf "$tmp"
fi
