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
echo "== Python tests =="
export OPFORGE_BUILD_DIR="$build"
python3 -m pip install -q --no-build-isolation --no-deps -e python/
python3 -m pytest -q tests/python
echo "all tests passed"
