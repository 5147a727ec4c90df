#!/usr/bin/env bash
# check-layout.sh — the include rules of the tree:
#   1. the engine (src/) includes nothing from the op folders (ops/): every op, built-in or
#      contrib, reaches the engine through the plugin ABI and the public headers only;
#   2. the builder (src/builder) and the runtime (src/runtime) include neither each other: what
#      both need lives in the rooms below them (src/plan, src/device, src/common, ...);
#   3. nothing outside src/ includes an engine header that has a public replacement
#      (src/device/device.h, formerly src/runtime/device.h: use opforge/device.h).
# Prints each offending '#include' as FILE:LINE: TEXT under the rule it breaks and exits 1; exits 0
# when there is none. The fixtures under tests/layout/ (which break the rules on purpose) are not
# part of the tree being checked.
# Usage: scripts/check-layout.sh [REPO_ROOT]   (default: the repository this script is in)
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [ ! -d "$root/src" ]; then
  echo "check-layout: no src/ under $root" >&2
  exit 2
fi
sources=(--include='*.h' --include='*.hpp' --include='*.cc' --include='*.cpp' --include='*.cu'
         --include='*.cuh')
# The include of a path whose directory part ends in DIR/, in any spelling: "DIR/...",
# "../DIR/...", "../../src/DIR/...", <DIR/...>.
includes_dir() { echo "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]([^\">]*/)?$1/"; }
status=0
report() {  # report TITLE HITS
  if [ -n "$2" ]; then
    echo "check-layout: $1:"
    echo "${2//$root\//}"
    status=1
  fi
}

hits="$(grep -rnE "$(includes_dir ops)" "$root/src" "${sources[@]}" || true)"
report "files under src/ include paths under ops/ (the engine must not know ops)" "$hits"

hits=""
[ -d "$root/src/builder" ] &&
  hits+="$(grep -rnE "$(includes_dir runtime)" "$root/src/builder" "${sources[@]}" || true)"
[ -d "$root/src/runtime" ] &&
  hits+="${hits:+$'\n'}$(grep -rnE "$(includes_dir builder)" "$root/src/runtime" "${sources[@]}" ||
    true)"
hits="$(printf '%s' "$hits" | sed '/^$/d')"
report "src/builder and src/runtime include each other (share through src/plan, src/device)" \
  "$hits"

# Engine headers with a public replacement: the device layer (opforge/device.h).
private='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?(runtime|device)/device\.h[">]'
hits="$(grep -rnE "$private" "$root" "${sources[@]}" --exclude-dir=.git --exclude-dir='build*' \
  --exclude-dir=.mirror | grep -v -e "^$root/src/" -e "^$root/tests/layout/" || true)"
report "files outside src/ include the engine's device header (use opforge/device.h)" "$hits"

if [ "$status" -eq 0 ]; then
  echo "check-layout: no file under src/ includes a path under ops/; src/builder and src/runtime" \
    "include neither each other; nothing outside src/ includes src/device/device.h"
fi
exit "$status"
