#!/usr/bin/env bash
# GPU checks of the built-in ONNX ops' CUDA tactics, for a CUDA build copied to a GPU machine
# (same conventions as scripts/gpu-check.sh):
#   OPFORGE_BINARY_DIR  the folder with bin/ and lib/ of a CUDA build (default build-gpu)
#   OUT                 where logs and results go (default /tmp/out)
#   ONNX_NODE_TESTS     the ONNX backend node tests (default: shared/onnx-node-tests/node, then
#                       ../shared/onnx-node-tests/node)
#   SANITIZE=0          skip the compute-sanitizer memcheck/racecheck runs
#   SKIP_BENCH=1        skip the model benchmarks
#   STEPS               comma-separated subset of ops,node,sanitize,bench (default all four; to stay
#                       under a 10-minute device call, e.g. STEPS=ops,node then STEPS=sanitize,bench)
#   JOBS                parallel node-test cases (default 8)
#   SANITIZE_TIMEOUT    seconds per compute-sanitizer tool (default 150; a timeout reads as exit 124)
#   SANITIZE_OPS        the ops under compute-sanitizer: a comma list, or `all` (default: a subset of 20
#                       with shared memory, indexing or library calls)
#   SANITIZE_TOOLS      which compute-sanitizer tools, in order (default "memcheck racecheck"; two runs of this
#                       script with one tool each and their own OUT can share a GPU)
#   SANITIZE_SHARDS     run each tool as N processes side by side, the ops dealt round-robin among them (default
#                       1; the sanitizers are bound by host instrumentation, so shards use the machine's cores)
#   BENCH_BUDGET_S      the benchmark's time budget for torch.compile max-autotune (default 200)
#   BENCH_ARGS          extra options of bench/models/bench.py (--models, --precisions, --batches)
# Steps: (1) opforge_gpu_onnx_tests — every op, CUDA tactic and dtype against the CPU reference,
# graph capture, unaligned tensors, index errors, fused networks, --fp16; (2) the ONNX node tests
# on the CUDA backend; (3) compute-sanitizer memcheck and racecheck on a subset of the op tests;
# (4) bench/models/run.sh. Summaries are printed last. Exit status: non-zero if a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OPFORGE_BINARY_DIR:=build-gpu}"
: "${OUT:=/tmp/out}"
: "${SANITIZE:=1}"
: "${SKIP_BENCH:=0}"
: "${JOBS:=8}"
: "${STEPS:=ops,node,sanitize,bench}"
: "${SANITIZE_TIMEOUT:=150}"
: "${BENCH_BUDGET_S:=200}"
BIN="$OPFORGE_BINARY_DIR/bin"
mkdir -p "$OUT"
export OPFORGE_BINARY_DIR OUT
export LD_LIBRARY_PATH="$OPFORGE_BINARY_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
summary=()
started=$(date +%s)
step() { [[ ",$STEPS," == *",$1,"* ]]; }
elapsed() { echo $(( $(date +%s) - started ))s; }

# (1) op tests
if ! step ops; then
  summary+=("gpu op tests: skipped (STEPS)")
else
echo "== opforge_gpu_onnx_tests"
if timeout 360 "$BIN/opforge_gpu_onnx_tests" --gtest_output="xml:$OUT/gpu_onnx_tests.xml" >"$OUT/gpu_onnx_tests.log" 2>&1; then
  summary+=("gpu op tests: passed ($(grep -Eo '[0-9]+ ops, [0-9]+ CUDA tactics matched the reference' "$OUT/gpu_onnx_tests.log" | tail -1)) [$(elapsed)]")
else
  status=1
  summary+=("gpu op tests: FAILED (see $OUT/gpu_onnx_tests.log) [$(elapsed)]")
  grep -E "^\[  FAILED|Failure|error" "$OUT/gpu_onnx_tests.log" | head -40
fi
tail -5 "$OUT/gpu_onnx_tests.log"
fi

# (2) ONNX node tests on the CUDA backend
node="${ONNX_NODE_TESTS:-}"
if [ -z "$node" ]; then
  for d in shared/onnx-node-tests/node ../shared/onnx-node-tests/node; do [ -d "$d" ] && node=$d && break; done
fi
if ! step node; then
  summary+=("node tests (CUDA): skipped (STEPS)")
elif [ -n "$node" ] && [ -d "$node" ]; then
  echo "== opforge-onnx-tests --device=cuda ($node)"
  timeout 360 "$BIN/opforge-onnx-tests" "$node" --device=cuda --jobs="$JOBS" >"$OUT/onnx_node_tests_cuda.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  grep -A40 "^failed cases:" "$OUT/onnx_node_tests_cuda.log" | head -40
  summary+=("node tests (CUDA): $(grep -E '^node tests:' "$OUT/onnx_node_tests_cuda.log" | tail -1) [exit $rc, $(elapsed)]")
  summary+=("  $(grep -E '^CUDA:' "$OUT/onnx_node_tests_cuda.log" | tail -1)")
else
  summary+=("node tests (CUDA): skipped, no node-test folder (set ONNX_NODE_TESTS)")
fi

# (3) compute-sanitizer on a subset (memcheck: out-of-bounds / misaligned accesses; racecheck:
# shared-memory races), index-error tests included.
if [ "$SANITIZE" != "0" ] && step sanitize && command -v compute-sanitizer >/dev/null 2>&1; then
  ops="${SANITIZE_OPS:-Gather,GatherND,ScatterND,ScatterElements,Transpose,Concat,Slice,Pad,Resize,MaxPool,NonZero,TopK,CumSum,ReduceSum,Softmax,LayerNormalization,MatMul,Conv,opforge::FusedConv,opforge::FusedAttention}"
  [ "$ops" = all ] && ops=""  # an empty filter: every op
  # the op lists, one process each: all of $ops, or (SANITIZE_SHARDS=N) the ops dealt round-robin into N lists
  parts=("$ops")
  shards="${SANITIZE_SHARDS:-1}"
  if [ "$shards" -gt 1 ]; then
    if [ -z "$ops" ]; then  # every op key the build registers ("KEY vN [origin]" at the start of a line)
      mapfile -t all_ops < <("$BIN/opforge" ops 2>/dev/null | awk '/^[^ ]/ {print $1}')
    else
      IFS=, read -r -a all_ops <<<"$ops"
    fi
    if [ ${#all_ops[@]} -gt 0 ]; then
      parts=()
      for ((k = 0; k < shards; ++k)); do
        part=""
        for ((i = k; i < ${#all_ops[@]}; i += shards)); do part+="${part:+,}${all_ops[i]}"; done
        parts+=("$part")
      done
    else
      echo "gpu-onnx-check: 'opforge ops' listed no ops: one process" >&2
    fi
  fi
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    echo "== compute-sanitizer --tool $tool (${#parts[@]} process(es))"
    pids=() logs=()
    for k in "${!parts[@]}"; do
      filter='GpuOnnx.EveryOp*'
      [ "$k" -eq 0 ] && filter+=':GpuOnnx.IndexErrors*'
      log="$OUT/sanitizer_$tool.log"
      [ ${#parts[@]} -gt 1 ] && log="$OUT/sanitizer_${tool}_$k.log"
      logs+=("$log")
      echo "ops: ${parts[k]:-all}" >"$log"
      OPFORGE_GPU_ONNX_OPS="${parts[k]}" timeout "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode=42 \
        "$BIN/opforge_gpu_onnx_tests" --gtest_filter="$filter" >>"$log" 2>&1 &
      pids+=($!)
    done
    rc=0
    for pid in "${pids[@]}"; do wait "$pid" || { r=$?; [ $rc -eq 0 ] && rc=$r; }; done
    if [ $rc -eq 0 ]; then
      # the test's closing line: "gpu_onnx: N ops, T CUDA tactics ..." (all ops) or "gpu_onnx: K ops named, N ran, T ..."
      ran=$(cat "${logs[@]}" | awk '/^gpu_onnx: [0-9]+ ops, / {n += $2; t += $4} /^gpu_onnx: .* ops named/ {n += $5; t += $7}
        END {printf "%d ops ran, %d CUDA tactics matched the reference", n, t}')
      summary+=("compute-sanitizer $tool: clean, ${#logs[@]} run(s), $ran: $(cat "${logs[@]}" | grep -Eo 'ERROR SUMMARY: [0-9]+ errors|RACECHECK SUMMARY: [0-9]+ hazards' | sort | uniq -c | tr -s ' ' | paste -sd';') [$(elapsed)]")
    else
      status=1
      summary+=("compute-sanitizer $tool: exit $rc (see $OUT/sanitizer_$tool*.log) [$(elapsed)]")
      cat "${logs[@]}" | grep -E "=========" | head -20
    fi
  done
else
  summary+=("compute-sanitizer: skipped")
fi

# (4) model benchmarks
bench=""
if [ "$SKIP_BENCH" = "0" ] && step bench; then
  echo "== bench/models/run.sh"
  # shellcheck disable=SC2086  # BENCH_ARGS: extra bench.py options, e.g. "--models resnet --precisions fp16"
  if bench/models/run.sh --budget-s "$BENCH_BUDGET_S" ${BENCH_ARGS:-} >"$OUT/bench_models.log" 2>&1; then
    bench=$(cat "$OUT/bench_models.md")
  else
    status=1
    bench="model benchmarks failed (see $OUT/bench_models.log):"$'\n'"$(tail -20 "$OUT/bench_models.log")"
  fi
fi

echo
echo "== summary ($(elapsed))"
printf '%s\n' "${summary[@]}"
[ -n "$bench" ] && { echo; echo "$bench"; }
exit $status
