#!/usr/bin/env bash
# Checks that every C++/CUDA file git tracks is formatted as .clang-format says (100 columns).
# Lists the files that are not, with the command that fixes them; exit 1 if any.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
fmt="${CLANG_FORMAT:-clang-format}"
if ! command -v "$fmt" >/dev/null 2>&1; then
  echo "check-format: $fmt not found (apt-get install clang-format)" >&2
  exit 1
fi
bad=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -z -- '*.cc' '*.h' '*.cu' '*.cuh' '*.cpp' '*.hpp')
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) not formatted as .clang-format says:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix: $fmt -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: every tracked C++/CUDA file is formatted ($("$fmt" --version | head -1))"
