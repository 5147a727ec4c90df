#!/usr/bin/env bash
# ThreadSanitizer job (scripts/test.sh runs it last; docs/fuzzing.md): a CPU-only clang build of the
# C++ test binary with -fsanitize=thread into build-tsan/ (about 7 minutes on 2 cores), then every
# test of opforge_tests with any report fatal — the several-contexts-in-threads tests
# (Engine.SeveralContextsRunAtOnce, Engine.BuildLoadAndRunInThreads) and every other one.
# OpenBLAS runs single-threaded here: it is not instrumented, so TSan cannot see how it joins its
# worker threads and reports their writes (a false positive). OPFORGE_SKIP_TSAN=1 skips the job;
# TSAN_BUILD_DIR changes the build folder.
set -euo pipefail
[ "${OPFORGE_SKIP_TSAN:-0}" = "1" ] && { echo "[tsan] skipped (OPFORGE_SKIP_TSAN=1)"; exit 0; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${TSAN_BUILD_DIR:-$here/build-tsan}"
t0=$(date +%s)
OPFORGE_DEPS_SANITIZE=1 scripts/deps.sh
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DOPFORGE_CUDA=OFF -DOPFORGE_WERROR=OFF -DOPFORGE_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target opforge_tests
t1=$(date +%s)
echo "[tsan] build: $((t1 - t0)) s"
echo "== C++ tests under ThreadSanitizer =="
# AttrLimits.* (15,000 one-node builds, one thread; the ASan/UBSan job runs them) is left out.
OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" "$build/bin/opforge_tests" \
  --gtest_filter='-AttrLimits.*'
echo "[tsan] tests: $(($(date +%s) - t1)) s"
