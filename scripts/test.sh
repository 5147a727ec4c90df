#!/usr/bin/env bash
# Runs every test: C++ unit and integration tests (CTest; tests labelled `gpu` skip themselves
# where no GPU is present), then the Python tests. Installs dependencies and builds first, so it
# works on a fresh clone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/deps.sh
scripts/build.sh
build="${BUILD_DIR:-$here/build}"
echo "== C++ tests =="
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
if compgen -G "tests/python/test_*.py" >/dev/null; then
  echo "== Python tests =="
  python3 -m pytest -q tests/python
fi
echo "all tests passed"
