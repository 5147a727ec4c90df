#!/usr/bin/env bash
# gpu-check.sh — the GPU check of opforge's contrib ops, in two halves:
#
#   scripts/gpu-check.sh build     # on the build machine (has the -dev packages; no GPU needed):
#                                  # configure + build build-gpu/ with CUDA (Release, sm_90, -lineinfo, compressed fatbins,
#                                  # no OpenBLAS), then stage build-gpu/dist/{bin,lib}: the GPU test and
#                                  # benchmark binaries and opforge's libraries, stripped, plus the shared
#                                  # libraries a bare GPU machine lacks (libonnx_proto, libprotobuf, ...)
#                                  # found with ldd. Carry build-gpu/dist (< 64 MiB) to the GPU machine.
#   scripts/gpu-check.sh run [STEP...]   # on the GPU machine, from the repository root. STEPs
#                                  # (default: all, in this order):
#                                  #   tests     every GPU test (ctest -L gpu in a full build tree at
#                                  #             this path, else the opforge_gpu_*tests binaries)
#                                  #   memcheck  compute-sanitizer memcheck on opforge_gpu_tests
#                                  #   racecheck compute-sanitizer racecheck on opforge_gpu_tests
#                                  #   bench     opforge_gpu_bench + the PyTorch peers -> table + PNG
#   scripts/gpu-check.sh all       # both halves on one machine that has everything
#
# Everything goes to ${OUT:-build-gpu/out}, flat, at most 8 files: summary.md (device, test and
# sanitizer summaries, the benchmark table), tests.log, memcheck.log, racecheck.log, bench.log,
# ours.json, peers.json, bandwidth.png. The summary is printed last. Environment: BUILD_DIR
# (build-gpu), QUICK=1 (small benchmark sizes), REPS (benchmark repetitions, 100), BENCH_ONLY (only the
# ops whose registry key contains this text, e.g. circ_pad), MEMCHECK_FILTER
# and RACECHECK_FILTER (gtest filters for the sanitizer runs), CUDA_HOME (/usr/local/cuda).
# Exit status: non-zero when any step failed; every step runs regardless, so the summary always prints.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build-gpu}"
OUT="${OUT:-$BUILD_DIR/out}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
REPS="${REPS:-100}"
MEMCHECK_FILTER="${MEMCHECK_FILTER:-*}"
RACECHECK_FILTER="${RACECHECK_FILTER:-*GpuOp*}"
status=0

say() { printf '\n=== %s\n' "$*"; }
fail() { printf 'gpu-check: %s\n' "$*" >&2; status=1; }

do_build() {
  say "configure $BUILD_DIR (CUDA on, Release, -lineinfo, compressed fatbins, no OpenBLAS)"
  # OPFORGE_CBLAS_INCLUDE=OFF keeps OpenBLAS (36 MB) out: the GPU check never needs the CPU GEMM path.
  cmake -S . -B "$BUILD_DIR" -G Ninja -DOPFORGE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="-lineinfo -Xfatbin=-compress-all" \
    -DOPFORGE_CBLAS_INCLUDE=OFF || { fail "cmake failed"; return 1; }
  local targets=(opforge_gpu_tests opforge_gpu_bench)
  for t in opforge_gpu_engine_tests opforge_cli opforge_gpu_onnx_tests opforge_onnx_tests opforge_onnx_run \
           bench_launch_overhead sparse4d_demo opforge_conv_bench; do
    ninja -C "$BUILD_DIR" -t targets all 2>/dev/null | grep -q "^$t:" && targets+=("$t")
  done
  say "build ${targets[*]}"
  ninja -C "$BUILD_DIR" "${targets[@]}" || { fail "build failed"; return 1; }
  say "stage $BUILD_DIR/dist"
  local dist="$BUILD_DIR/dist"
  rm -rf "$dist"
  mkdir -p "$dist/bin" "$dist/lib"
  for t in "${targets[@]}"; do
    case "$t" in
      opforge_cli) t=opforge ;;
      opforge_onnx_tests) t=opforge-onnx-tests ;;
      opforge_onnx_run) t=opforge-onnx-run ;;
    esac
    [ -x "$BUILD_DIR/bin/$t" ] && cp "$BUILD_DIR/bin/$t" "$dist/bin/"
  done
  cp "$BUILD_DIR"/lib/*.so "$dist/lib/" 2>/dev/null
  strip --strip-unneeded "$dist"/bin/* "$dist"/lib/*.so 2>/dev/null || true
  for f in "$dist"/bin/* "$dist"/lib/*.so; do
    LD_LIBRARY_PATH="$dist/lib" ldd "$f" 2>/dev/null | awk '/=> \// {print $1, $3}' | while read -r name path; do
      case "$name" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libcuda.so*) continue ;;
      esac
      case "$path" in
        "$ROOT"/*|/usr/local/cuda*|*/cuda/*|*/cuda-*/*) continue ;;  # ours, or the CUDA toolkit (the GPU machine has it)
      esac
      [ -e "$dist/lib/$name" ] || { cp -L "$path" "$dist/lib/$name" && echo "  $name <- $path"; }
    done
  done
  du -sh "$dist"/bin/* "$dist"/lib/* | sort -h
  local kb
  kb=$(du -sk "$dist" | cut -f1)
  echo "$dist: $((kb / 1024)) MiB"
  [ "$kb" -lt $((62 * 1024)) ] || fail "$dist is $((kb / 1024)) MiB: over what a device run can carry (64 MiB with the tree)"
  echo "ready: carry $dist to the GPU machine and run 'scripts/gpu-check.sh run' there"
}

BIN="" LIB=""
gpu_env() {
  if [ -d "$BUILD_DIR/dist/bin" ]; then
    BIN="$BUILD_DIR/dist/bin" LIB="$BUILD_DIR/dist/lib"
    # Tests built elsewhere look for build-gpu/lib and build-gpu/bin: point them at the staged copies.
    [ -e "$BUILD_DIR/lib" ] || ln -s dist/lib "$BUILD_DIR/lib"
    [ -e "$BUILD_DIR/bin" ] || ln -s dist/bin "$BUILD_DIR/bin"
  else
    BIN="$BUILD_DIR/bin" LIB="$BUILD_DIR/lib"
  fi
  export LD_LIBRARY_PATH="$ROOT/$LIB:$CUDA_HOME/lib64:$CUDA_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OPFORGE_OPS_LIBRARY="$ROOT/$LIB/libopforge_ops.so"
  # Tests look for the build tree's bin/ and lib/ here (it may sit at another path on this machine).
  export OPFORGE_BINARY_DIR="$ROOT/$(dirname "$LIB")"
  mkdir -p "$OUT"
  {
    echo "# opforge GPU check"
    echo
    echo "host $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv,noheader 2>&1 | sed 's/^/device: /'
  } > "$OUT/summary.md"
  cat "$OUT/summary.md"
  if [ ! -x "$BIN/opforge_gpu_tests" ]; then
    fail "$BIN/opforge_gpu_tests is missing: run 'scripts/gpu-check.sh build' first and carry $BUILD_DIR/dist"
    return 1
  fi
}

step_tests() {
  say "GPU tests"
  : > "$OUT/tests.log"
  if [ -f "$BUILD_DIR/CTestTestfile.cmake" ] && grep -qF "$ROOT/$BUILD_DIR" "$BUILD_DIR/CTestTestfile.cmake" && \
     [ -x "$BUILD_DIR/bin/opforge_gpu_tests" ] && [ ! -L "$BUILD_DIR/bin" ] && command -v ctest >/dev/null; then
    ctest --test-dir "$BUILD_DIR" -L gpu --output-on-failure --timeout 600 2>&1 | tee "$OUT/tests.log" | tail -15
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "GPU tests failed (see tests.log)"
  else
    for t in "$BIN"/opforge_gpu_*tests; do
      [ -x "$t" ] || continue
      echo "--- $(basename "$t")" | tee -a "$OUT/tests.log"
      "$t" 2>&1 | tee -a "$OUT/tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[==========\]" | tail -12
      [ "${PIPESTATUS[0]}" -eq 0 ] || fail "$(basename "$t") failed (see tests.log)"
    done
  fi
  if grep -qE "^\[  SKIPPED \]|\(Skipped\)" "$OUT/tests.log"; then fail "some GPU tests were skipped (no usable device?)"; fi
  {
    echo
    echo "## GPU tests"
    echo '```'
    # ctest's last lines, or each gtest binary's closing summary (failed tests listed, skipped ones counted)
    grep -E "tests passed|tests failed|^The following tests|^[[:space:]]+[0-9]+ - " "$OUT/tests.log" | tail -20
    awk '/^--- /{print; p=0} /test suites? ran/{p=1} p && !/^\[  SKIPPED \] [A-Za-z]/' "$OUT/tests.log" | head -40
    echo '```'
  } >> "$OUT/summary.md"
}

step_sanitizer() {
  local tool="$1" filter="$2"
  say "compute-sanitizer $tool (gtest filter $filter)"
  local cs="$CUDA_HOME/bin/compute-sanitizer"
  command -v compute-sanitizer >/dev/null && cs="$(command -v compute-sanitizer)"
  if [ ! -x "$cs" ]; then
    fail "compute-sanitizer not found under $CUDA_HOME/bin"
    printf '\n%s: compute-sanitizer not found\n' "$tool" >> "$OUT/summary.md"
    return
  fi
  "$cs" --tool "$tool" --error-exitcode 17 --print-limit 20 \
    "$BIN/opforge_gpu_tests" --gtest_filter="$filter" --gtest_brief=1 > "$OUT/$tool.log" 2>&1
  local rc=$?
  tail -8 "$OUT/$tool.log"
  [ "$rc" -eq 0 ] || fail "compute-sanitizer $tool: exit $rc (see $tool.log)"
  printf '\n%s (filter %s): exit %s, %s\n' "$tool" "$filter" "$rc" "$(grep -E '(ERROR|RACECHECK) SUMMARY' "$OUT/$tool.log" | tail -1)" >> "$OUT/summary.md"
}

step_bench() {
  say "benchmarks (opforge_gpu_bench + PyTorch peers)"
  local tmp="$OUT/.bench"
  python3 bench/gpu/report.py --bench "$BIN/opforge_gpu_bench" --out "$tmp" --reps "$REPS" ${QUICK:+--quick} ${BENCH_ONLY:+--only "$BENCH_ONLY"} \
    > "$OUT/bench.log" 2>&1
  [ $? -eq 0 ] || fail "benchmarks failed (see bench.log)"
  for f in ours.json peers.json bandwidth.png; do [ -f "$tmp/$f" ] && mv "$tmp/$f" "$OUT/$f"; done
  if [ -f "$tmp/table.md" ]; then
    { echo; sed 's/^# /## /' "$tmp/table.md"; } >> "$OUT/summary.md"
  fi
  rm -rf "$tmp"
}

print_summary() {
  say "summary ($OUT)"
  [ -f "$OUT/summary.md" ] && cat "$OUT/summary.md"
}

mode="${1:-}"
shift || true
case "$mode" in
  build) do_build ;;
  run|all)
    [ "$mode" = all ] && { do_build || exit 1; }
    gpu_env || { print_summary; exit 1; }
    steps=("$@")
    [ ${#steps[@]} -eq 0 ] && steps=(tests memcheck racecheck bench)
    for s in "${steps[@]}"; do
      case "$s" in
        tests) step_tests ;;
        memcheck) step_sanitizer memcheck "$MEMCHECK_FILTER" ;;
        racecheck) step_sanitizer racecheck "$RACECHECK_FILTER" ;;
        bench) step_bench ;;
        *) fail "unknown step '$s' (tests, memcheck, racecheck, bench)" ;;
      esac
    done
    print_summary
    ;;
  *)
    sed -n '2,26p' "$0"
    exit 2
    ;;
esac
exit $status
