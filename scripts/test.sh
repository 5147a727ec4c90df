#!/usr/bin/env bash
# Runs every test: the format check, C++ unit and integration tests (CTest; tests labelled `gpu`
# skip themselves where no GPU is present), the ONNX backend node tests (generated from the
# installed onnx package), the Python tests, the model zoo's CI subset, then the C++ tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer with the fuzz targets' regression files and
# a 30-second smoke run of each (scripts/sanitize.sh; OPFORGE_SKIP_SANITIZE=1 skips it) and under
# ThreadSanitizer (scripts/tsan.sh). Installs dependencies and builds first, so it works on a
# fresh clone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
scripts/deps.sh
scripts/build.sh
build="${BUILD_DIR:-$here/build}"
# One OpenBLAS thread a process: the tests run side by side (ctest -j, the node-test runner's jobs,
# pytest's CLI runs), and OpenBLAS's pthreads build spins on sched_yield waiting for its workers,
# which starves the processes beside it (tests/CMakeLists.txt).
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
scripts/check-format.sh
echo "== C++ tests =="
# Every test writes under a directory of its own (tests/op_harness.h testDir()); each test runs
# twice, in a random order and in parallel, so that a path two tests share shows up as a failure.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -E '^onnx_node_tests' \
  --schedule-random --repeat until-fail:2
echo "== ONNX node tests =="
ctest --test-dir "$build" --output-on-failure -R '^onnx_node_tests'
echo "== Python tests =="
export OPFORGE_BUILD_DIR="$build"
python3 -m pip install -q --no-build-isolation --no-deps -e python/
python3 -m pytest -q tests/python
echo "== Model zoo (CPU; the CI subset, OPFORGE_ZOO=all for every model: tests/zoo) =="
HF_HUB_OFFLINE=1 python3 -m pytest -q tests/zoo
echo "== AddressSanitizer + UBSan (scripts/sanitize.sh: C++ tests, fuzz regressions, fuzz smoke runs) =="
FUZZ_SMOKE_S="${FUZZ_SMOKE_S:-30}" scripts/sanitize.sh
echo "== ThreadSanitizer (scripts/tsan.sh: a clang -fsanitize=thread build of the C++ tests) =="
scripts/tsan.sh
echo "all tests passed"
