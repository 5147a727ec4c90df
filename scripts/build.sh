#!/usr/bin/env bash
# Configures (once) and builds opforge into build/ (incremental; ccache when present).
# Environment: OPFORGE_WERROR=ON (CI), OPFORGE_CUDA=AUTO|ON|OFF, BUILD_DIR (default build).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$here/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja \
    -DOPFORGE_WERROR="${OPFORGE_WERROR:-OFF}" -DOPFORGE_CUDA="${OPFORGE_CUDA:-AUTO}"
fi
cmake --build "$build" -j "$(nproc)"
