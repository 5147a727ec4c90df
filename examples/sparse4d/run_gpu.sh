#!/usr/bin/env bash
# run_gpu.sh — Sparse4Dv3 on the GPU at the published size: consistency with PyTorch over 10 frames (FP32 and
# FP16 plans) and latency per module against PyTorch eager and torch.compile (FP32 and autocast FP16).
#
#   examples/sparse4d/run_gpu.sh build   # on the build machine (no GPU needed): CUDA build of libopforge, the op
#                                        # library, the CLI and sparse4d_demo in $BUILD_DIR (build-gpu, the same
#                                        # configuration as scripts/gpu-check.sh), staged with the shared libraries
#                                        # a bare GPU machine lacks into $BUILD_DIR/dist-s4d/{bin,lib}. Carry it.
#   examples/sparse4d/run_gpu.sh run     # on the GPU machine, from the repository root
#   examples/sparse4d/run_gpu.sh all     # both on one machine
#
# `run` does, with the opforge Python package (installed against dist-s4d if `import opforge` fails):
#   1. examples/sparse4d/sparse4d.py run --config full --device cuda: export the three graphs (opforge.onnx.export),
#      write 10 frames, build FP32 and FP16 CUDA plans with `opforge exec`, run sparse4d_demo (C++) on them, compare every output with PyTorch (CUDA, TF32 off),
#      then time the demo over $LOOPS loops of the 10 frames;
#   2. examples/sparse4d/bench_torch.py: PyTorch eager / torch.compile, FP32 / autocast FP16, same modules;
#   3. examples/sparse4d/report.py: the tables, ratios from this run, targets.
# Into ${OUT} (small files only): sparse4d_gpu.md (the report, ready for bench/results/sparse4d_h200.md),
# consistency.md/.json, torch.json, demo_*_times.json, demo logs, build.log, plans.txt (tactics per plan, layers
# left on the CPU), run.log. Big files (ONNX, plans, frames, outputs) stay in $WORK.
# Environment: OUT (default $BUILD_DIR/out-s4d), WORK (default /tmp/sparse4d-work), BUILD_DIR (build-gpu),
# CONFIG (full), LOOPS (20), REPS (100), COMPILE_MODES (default; e.g. default,reduce-overhead), SKIP_TORCH=1,
# PRECISIONS (fp32,fp16: the plans built and the PyTorch modes timed; fp16 alone halves the latency step),
# STEPS (consistency,latency: the default, both; `consistency` alone skips the latency loops and the PyTorch
# peers, `latency` alone skips the comparison — each then fits a 10-minute device call; the latency step keeps
# opforge's and PyTorch's times in one run, so its ratios stay ratios from one run),
# CUDA_HOME (/usr/local/cuda). Exit status: non-zero when a step or a consistency criterion failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build-gpu}"
OUT="${OUT:-$BUILD_DIR/out-s4d}"
WORK="${WORK:-/tmp/sparse4d-work}"
CONFIG="${CONFIG:-full}"
LOOPS="${LOOPS:-20}"
REPS="${REPS:-100}"
COMPILE_MODES="${COMPILE_MODES:-default}"
PRECISIONS="${PRECISIONS:-fp32,fp16}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
DIST="$BUILD_DIR/dist-s4d"
status=0

say() { printf '\n=== %s\n' "$*"; }
fail() { printf 'run_gpu: %s\n' "$*" >&2; status=1; }

do_build() {
  say "configure $BUILD_DIR (CUDA on, Release, as scripts/gpu-check.sh)"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DOPFORGE_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="-lineinfo" \
    -DOPFORGE_CBLAS_INCLUDE=OFF || { fail "cmake failed"; return 1; }
  say "build opforge opforge_ops opforge_cli sparse4d_demo"
  ninja -C "$BUILD_DIR" opforge opforge_ops opforge_cli sparse4d_demo || { fail "build failed"; return 1; }
  say "stage $DIST"
  rm -rf "$DIST"
  mkdir -p "$DIST/bin" "$DIST/lib"
  cp "$BUILD_DIR/bin/opforge" "$BUILD_DIR/bin/sparse4d_demo" "$DIST/bin/"
  cp "$BUILD_DIR/lib/libopforge.so" "$BUILD_DIR/lib/libopforge_ops.so" "$DIST/lib/"
  strip --strip-unneeded "$DIST"/bin/* "$DIST"/lib/*.so 2>/dev/null || true
  for f in "$DIST"/bin/* "$DIST"/lib/*.so; do
    LD_LIBRARY_PATH="$DIST/lib" ldd "$f" 2>/dev/null | awk '/=> \// {print $1, $3}' | while read -r name path; do
      case "$name" in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libcuda.so*) continue ;;
      esac
      case "$path" in
        "$ROOT"/*|/usr/local/cuda*|*/cuda/*|*/cuda-*/*) continue ;;
      esac
      [ -e "$DIST/lib/$name" ] || { cp -L "$path" "$DIST/lib/$name" && echo "  $name <- $path"; }
    done
  done
  du -sh "$DIST"/bin/* "$DIST"/lib/* | sort -h
  echo "ready: carry $DIST to the GPU machine and run 'examples/sparse4d/run_gpu.sh run' there"
}

do_run() {
  local B="$BUILD_DIR"
  [ -x "$DIST/bin/sparse4d_demo" ] && B="$DIST"
  if [ ! -x "$B/bin/sparse4d_demo" ]; then
    fail "$B/bin/sparse4d_demo is missing: run 'examples/sparse4d/run_gpu.sh build' first and carry $DIST"
    return 1
  fi
  export OPFORGE_BUILD_DIR="$ROOT/$B"
  export LD_LIBRARY_PATH="$ROOT/$B/lib:$CUDA_HOME/lib64:$CUDA_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OPFORGE_OPS_LIBRARY="$ROOT/$B/lib/libopforge_ops.so"
  mkdir -p "$OUT" "$WORK"
  {
    echo "host $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
  } | tee "$OUT/run.log"
  if ! python3 -c "import opforge, opforge._C" 2>/dev/null; then
    say "installing the opforge Python package against $B"
    python3 -m pip install --no-build-isolation --no-deps -e python/ >> "$OUT/run.log" 2>&1 ||
      { fail "pip install -e python/ failed (see run.log)"; return 1; }
  fi

  local steps=",${STEPS:-consistency,latency},"
  local extra=() loops=0
  [[ $steps == *,latency,* ]] && loops="$LOOPS"
  [[ $steps == *,consistency,* ]] || extra+=(--skip-compare)
  say "export, frames, plans, demo (steps: ${STEPS:-consistency,latency}; $CONFIG, CUDA plans, $loops latency loops)"
  python3 examples/sparse4d/sparse4d.py run --config "$CONFIG" --device cuda --out "$WORK" --precisions "$PRECISIONS" \
    --latency-loops "$loops" --timing-cache "$WORK/timing.cache" --threads 8 "${extra[@]}" 2>&1 |
    grep -v "Skipping constant folding" | tee -a "$OUT/run.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "sparse4d.py run failed or a consistency criterion was not met (see run.log)"
  for f in consistency.md consistency.json build.log demo_fp32.log demo_fp16.log demo_fp32_latency.log \
           demo_fp16_latency.log demo_fp32_times.json demo_fp16_times.json; do
    [ -f "$WORK/$f" ] && cp "$WORK/$f" "$OUT/"
  done
  : > "$OUT/plans.txt"
  for p in "$WORK"/plans/*.plan; do
    [ -f "$p" ] || continue
    {
      echo "== $(basename "$p")"
      "$B/bin/opforge" inspect "$p" --plugins="$B/lib/libopforge_ops.so" > "$WORK/inspect.tmp" 2>&1
      grep -E "^  (backend|weights)" "$WORK/inspect.tmp"
      echo "tactics (count, op, tactic):"
      awk '/^  \[[0-9]+\]/ {op=$3} /tactic:/ {t=$0; sub(/.*tactic: /, "", t); sub(/ +workspace.*/, "", t); print op, t}' \
        "$WORK/inspect.tmp" | sort | uniq -c | sort -rn
    } >> "$OUT/plans.txt"
  done
  rm -f "$WORK/inspect.tmp"

  if [ "${SKIP_TORCH:-0}" != 1 ] && [[ $steps == *,latency,* ]]; then
    say "PyTorch peers (eager, torch.compile[$COMPILE_MODES]; FP32, autocast FP16)"
    python3 examples/sparse4d/bench_torch.py --config "$CONFIG" --out "$OUT/torch.json" --reps "$REPS" --precisions "$PRECISIONS" \
      --compile-modes "$COMPILE_MODES" 2>&1 | tee -a "$OUT/run.log" | grep -E "^---|^\{" || true
    [ -f "$OUT/torch.json" ] || fail "bench_torch.py failed (see run.log)"
  fi
  say "report"
  python3 examples/sparse4d/report.py --work "$WORK" --torch "$OUT/torch.json" --out "$OUT/sparse4d_gpu.md" ||
    fail "report.py failed"
}

mode="${1:-}"
case "$mode" in
  build) do_build ;;
  run) do_run ;;
  all) do_build && do_run ;;
  *)
    sed -n '2,28p' "$0"
    exit 2
    ;;
esac
exit $status
