#!/usr/bin/env bash
# The sanitizer job (scripts/test.sh runs it, so CI does; docs/fuzzing.md): a CPU-only build with
# clang, AddressSanitizer + UndefinedBehaviorSanitizer (every report fatal, no recovery) and the
# libFuzzer targets, into build-asan/; then
#   1. the C++ CTest tests that need no GPU (label cpu; the SDK install tests and the ONNX node
#      tests are left out: they rebuild or run the same code through Python, not through C++),
#   2. every fuzz regression file (tests/fuzz/regressions, label fuzz),
#   3. a bounded smoke run of each fuzz target from a fresh seed corpus (scripts/fuzz-corpus.py).
# Environment: SANITIZE_BUILD_DIR (default build-asan), FUZZ_SMOKE_S (seconds per target,
# default 45), FUZZ_SEED (libFuzzer's -seed, default 1: fewer differences between runs, though the
# corpus's order and the machine's speed still vary them; a finding's input is printed in base64,
# so a CI failure reproduces from its log), OPFORGE_SKIP_SANITIZE=1 skips the whole job.
set -euo pipefail
[ "${OPFORGE_SKIP_SANITIZE:-0}" = "1" ] && { echo "[sanitize] skipped (OPFORGE_SKIP_SANITIZE=1)"; exit 0; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
build="${SANITIZE_BUILD_DIR:-$here/build-asan}"
smoke_s="${FUZZ_SMOKE_S:-45}"
t0=$(date +%s)
OPFORGE_DEPS_SANITIZE=1 scripts/deps.sh
# Warnings are not errors here: clang warns on things gcc does not (an unused lambda capture); the
# gcc build of scripts/test.sh is the warnings gate (OPFORGE_WERROR=ON in CI).
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DOPFORGE_CUDA=OFF -DOPFORGE_WERROR=OFF -DOPFORGE_SANITIZE=address,undefined \
    -DOPFORGE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
fi
# Only what the tests need: the test binary (with the CLI, the op libraries and the examples it
# depends on) and the fuzz targets.
cmake --build "$build" -j "$(nproc)" --target opforge_tests opforge_fuzz_targets
t1=$(date +%s)
echo "[sanitize] build: $((t1 - t0)) s"

export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"  # as scripts/test.sh says
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
echo "== C++ tests under ASan + UBSan =="
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L '^(cpu|fuzz)$' -E '^(sdk\.|onnx_node_tests)'
t2=$(date +%s)
echo "[sanitize] tests: $((t2 - t1)) s"

echo "== fuzz smoke runs (${smoke_s} s each) =="
corpus="$build/fuzz-corpus"
rm -rf "$corpus" "$build/fuzz-work"
python3 scripts/fuzz-corpus.py "$corpus" --cli "$build/bin/opforge" --ops "$build/lib/libopforge_ops.so"
mkdir -p "$build/fuzz-artifacts"
for spec in onnx_bytes:onnx onnx_struct:onnx plan:plan npy:npy wire:wire; do
  t="${spec%%:*}"
  seeds="$corpus/${spec##*:}"
  mkdir -p "$build/fuzz-work/$t"
  # -timeout: an input that runs longer is a hang (a finding); -rss_limit_mb: memory is a finding
  # too (the engine must refuse what does not fit, not take it).
  "$build/bin/fuzz_$t" "$build/fuzz-work/$t" "$seeds" -max_total_time="$smoke_s" -timeout=10 \
    -rss_limit_mb=2048 -seed="${FUZZ_SEED:-1}" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" \
    2>"$build/fuzz-work/$t.log" || {
    tail -n 60 "$build/fuzz-work/$t.log"
    echo "[sanitize] fuzz_$t found a crash, hang, leak or sanitizer report; the input is in $build/fuzz-artifacts"
    # The input in the log too (CI keeps the log, not the build tree): reproduce with
    #   echo '<base64>' | base64 -d > in && build-asan/bin/fuzz_$t in
    for a in "$build/fuzz-artifacts/$t-"*; do
      [ -f "$a" ] && [ "$(stat -c %s "$a")" -le 65536 ] && echo "[sanitize] $(basename "$a") base64: $(base64 -w0 "$a")"
    done
    exit 1
  }
  grep -E "stat::number_of_executed_units" "$build/fuzz-work/$t.log" | sed "s/^/[sanitize] fuzz_$t /"
done
t3=$(date +%s)
echo "[sanitize] fuzz smoke: $((t3 - t2)) s; total $((t3 - t0)) s"
