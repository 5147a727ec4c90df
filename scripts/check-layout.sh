#!/usr/bin/env bash
# check-layout.sh — the engine (src/) includes nothing from the op folders (ops/): every op,
# built-in or contrib, reaches the engine through the plugin ABI and the public headers only.
# Prints each offending '#include' as FILE:LINE: TEXT and exits 1; exits 0 when there is none.
# Usage: scripts/check-layout.sh [REPO_ROOT]   (default: the repository this script is in)
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [ ! -d "$root/src" ]; then
  echo "check-layout: no src/ under $root" >&2
  exit 2
fi
# An include naming ops/ in any spelling: "ops/...", "../ops/...", "../../../ops/...", <ops/...>.
hits="$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?ops/' "$root/src" \
  --include='*.h' --include='*.hpp' --include='*.cc' --include='*.cpp' --include='*.cu' \
  --include='*.cuh' || true)"
if [ -n "$hits" ]; then
  echo "check-layout: files under src/ include paths under ops/ (the engine must not know ops):"
  echo "${hits//$root\//}"
  exit 1
fi
echo "check-layout: no file under src/ includes a path under ops/"
