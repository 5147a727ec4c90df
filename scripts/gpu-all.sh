#!/usr/bin/env bash
# gpu-all.sh — every GPU check of opforge in three calls that each fit a 10-minute device run, on the
# GPU machine, from the repository root, after `scripts/gpu-check.sh build` (and build-gpu/dist carried):
#
#   scripts/gpu-all.sh tests      # concurrently (correctness only, so sharing the GPU is harmless):
#                                 #   contrib + engine + ONNX-op GPU tests, compute-sanitizer memcheck and
#                                 #   racecheck (scripts/gpu-check.sh run tests memcheck racecheck);
#                                 #   the ONNX node tests on the CUDA backend + the sanitizer subset of the
#                                 #   ONNX ops (scripts/gpu-onnx-check.sh STEPS=node,sanitize);
#                                 #   the Python package's GPU tests (pytest -m gpu tests/python), which
#                                 #   include the PyTorch-exported models on CUDA plans against ONNX Runtime;
#                                 #   a CUDA plan built by one `opforge exec` process and run by another.
#   scripts/gpu-all.sh bench      # one after the other (the GPU to itself): the contrib-op benchmarks and
#                                 #   their PyTorch peers, the launch overhead per layer with and without
#                                 #   CUDA graphs, the model benchmarks against PyTorch eager / torch.compile.
#   scripts/gpu-all.sh sparse4d   # examples/sparse4d/run_gpu.sh run (consistency + latency at full size;
#                                 #   S4D_STEPS=consistency or S4D_STEPS=latency for one of them per call).
#   scripts/gpu-all.sh convs      # the convolution tactics: opforge_conv_bench (cuDNN legacy vs graph API, LINEAR
#                                 #   and HWC, FP16/FP32) beside PyTorch's (bench/gpu/conv_peers.py); the ONNX-op GPU
#                                 #   tests of the convolutions (every tactic, LINEAR and HWC, vs the CPU); the
#                                 #   Sparse4D backbone plans (full size, FP32 and FP16): GPU compute time, layers
#                                 #   per format and tactic, per-layer profile.
#   scripts/gpu-all.sh probe      # examples/sparse4d/fp16_probe.py --device cuda --backbone: where the FP16
#                                 #   plans lose accuracy (layer groups kept in FP32) and the per-layer
#                                 #   profiles of the FP16 backbone and head plans.
#
# Logs go to /tmp/gpu-all/<phase>/ and, packed, to $OUT/gpu-<phase>.tar.gz (the device tool brings back at
# most 8 files); the summary is printed last and written to $OUT/gpu-<phase>.md.
# Environment: OUT (default build-gpu/out-all), ONNX_NODE_TESTS (a node-test folder; else
# .devcarry/node.tar.xz is unpacked, else ../shared/onnx-node-tests/node), PHASE_TIMEOUT (seconds per job, 500),
# ONNX_STEPS (the gpu-onnx-check.sh steps of `tests`, default node,sanitize; SANITIZE_OPS=all and SANITIZE_TIMEOUT
# pass through), BENCH_ARGS (bench/models/bench.py
# options for the `models` part, e.g. "--models resnet --precisions fp16 --batches 32"), BENCH_PARTS (the parts of
# `bench`, default contrib,launch,models).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
phase="${1:-}"
case "$phase" in tests|bench|sparse4d|probe|convs) ;; *) sed -n '2,26p' "$0"; exit 2 ;; esac
OUT="${OUT:-build-gpu/out-all}"
PHASE_TIMEOUT="${PHASE_TIMEOUT:-500}"
L="/tmp/gpu-all/$phase"
rm -rf "$L" && mkdir -p "$L" "$OUT"
B="$ROOT/build-gpu/dist"
[ -x "$B/bin/opforge" ] || { echo "gpu-all: $B/bin/opforge is missing: run 'scripts/gpu-check.sh build' and carry build-gpu/dist" >&2; exit 1; }
[ -e build-gpu/lib ] || ln -s dist/lib build-gpu/lib
[ -e build-gpu/bin ] || ln -s dist/bin build-gpu/bin
export LD_LIBRARY_PATH="$B/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPFORGE_BINARY_DIR="$B" OPFORGE_BUILD_DIR="$B" OPFORGE_OPS_LIBRARY="$B/lib/libopforge_ops.so"
started=$(date +%s)
status=0
summary="$L/summary.md"
{
  echo "# gpu-all.sh $phase"
  echo "host $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
} > "$summary"

python_package() {  # the opforge Python package against the staged build (idempotent)
  python3 -c "import opforge._C" 2>/dev/null && return 0
  python3 -m pip install --no-build-isolation --no-deps -e python/ > "$L/pip.log" 2>&1
}

job() {  # job NAME COMMAND...: runs in the background with a time limit, exit code to $L/NAME.rc
  local name="$1"; shift
  ( timeout "$PHASE_TIMEOUT" "$@" > "$L/$name.log" 2>&1; echo $? > "$L/$name.rc" ) &
}

cross_process_plan() {  # a CUDA plan written by one process, loaded and run by another, against the CPU
  local d="$L/xplan" m=examples/circ_pad/circ_pad.onnx
  mkdir -p "$d"
  "$B/bin/opforge" exec --onnx="$m" --plugins="$OPFORGE_OPS_LIBRARY" --device=cuda --shapes=x:4x3x32x32 --saveEngine="$d/cuda.plan" \
    --skipInference || return 1
  "$B/bin/opforge" exec --loadEngine="$d/cuda.plan" --plugins="$OPFORGE_OPS_LIBRARY" --saveOutputs="$d/cuda" \
    --dumpProfile --exportTrace="$d/trace.json" --exportProfile="$d/profile.json" --exportTimes="$d/times.json" || return 1
  "$B/bin/opforge" exec --onnx="$m" --plugins="$OPFORGE_OPS_LIBRARY" --device=cpu --shapes=x:4x3x32x32 --saveOutputs="$d/cpu" \
    --iterations=1 --duration=0 --warmUp=0 || return 1
  "$B/bin/opforge" inspect "$d/cuda.plan" --plugins="$OPFORGE_OPS_LIBRARY" || return 1
  python3 - "$d" <<'EOF'
import glob, os, sys
import numpy as np
d = sys.argv[1]
files = sorted(glob.glob(os.path.join(d, "cpu", "*.npy")))
assert files, "no outputs saved"
for f in files:
    a, b = np.load(f), np.load(os.path.join(d, "cuda", os.path.basename(f)))
    assert a.shape == b.shape and np.all(np.isfinite(b)), (f, a.shape, b.shape)
    err = float(np.max(np.abs(a.astype(np.float64) - b)))
    print(f"{os.path.basename(f)}: shape {a.shape}, max |cuda - cpu| = {err:.3g}")
    assert err <= 1e-6, err
print("plan written by one process and run by another: outputs match the CPU plan")
EOF
}

case "$phase" in
tests)
  node="${ONNX_NODE_TESTS:-}"
  if [ -z "$node" ] && [ -f .devcarry/node.tar.xz ]; then
    mkdir -p /tmp/gpu-all/node && tar xJf .devcarry/node.tar.xz -C /tmp/gpu-all/node && node=/tmp/gpu-all/node/node
  fi
  job contrib env OUT="$L/contrib" scripts/gpu-check.sh run tests memcheck racecheck
  job onnx env OUT="$L/onnx" STEPS="${ONNX_STEPS:-node,sanitize}" ${node:+ONNX_NODE_TESTS=$node} SANITIZE_TIMEOUT="${SANITIZE_TIMEOUT:-400}" scripts/gpu-onnx-check.sh
  export L B
  job xplan bash -c "$(declare -f cross_process_plan); cross_process_plan"
  job python bash -c "$(declare -f python_package); python_package || { cat $L/pip.log; exit 1; };
    python3 -m pytest -q -m gpu -rs tests/python -p no:cacheprovider"
  wait
  for n in contrib onnx xplan python; do
    rc=$(cat "$L/$n.rc" 2>/dev/null || echo '?')
    [ "$rc" = 0 ] || status=1
    echo "- $n: exit $rc" >> "$summary"
  done
  {
    echo; echo "## contrib/engine/ONNX-op GPU tests + sanitizers"; cat "$L/contrib/summary.md" 2>/dev/null | sed -n '4,200p'
    echo; echo "## ONNX node tests (CUDA) + sanitizer subset"; sed -n '/== summary/,$p' "$L/onnx.log"
    echo; echo "## cross-process plan"; tail -4 "$L/xplan.log"
    echo; echo "## pytest -m gpu"; grep -E "passed|failed|error|SKIPPED" "$L/python.log" | tail -15
  } >> "$summary"
  ;;
bench)
  python_package || echo "(opforge Python package not installed: see pip.log)" >> "$summary"
  parts=",${BENCH_PARTS:-contrib,launch,models},"
  if [[ $parts == *,contrib,* ]]; then
    OUT="$L/contrib" REPS="${REPS:-100}" timeout "$PHASE_TIMEOUT" scripts/gpu-check.sh run bench > "$L/contrib.log" 2>&1 || status=1
  fi
  if [[ $parts == *,launch,* ]]; then
    timeout 120 "$B/bin/bench_launch_overhead" --plugins="$OPFORGE_OPS_LIBRARY" > "$L/launch_overhead.log" 2>&1 || status=1
  fi
  if [[ $parts == *,models,* ]]; then
    OUT="$L/models" STEPS=bench BENCH_BUDGET_S="${BENCH_BUDGET_S:-200}" timeout "$PHASE_TIMEOUT" scripts/gpu-onnx-check.sh \
      > "$L/models.log" 2>&1 || status=1
  fi
  {
    echo; sed -n '/^## /,$p' "$L/contrib/summary.md" 2>/dev/null
    if [ -f "$L/launch_overhead.log" ]; then echo; echo "## launch overhead"; echo '```'; cat "$L/launch_overhead.log"; echo '```'; fi
    echo; echo "## models"; cat "$L/models/bench_models.md" 2>/dev/null || tail -30 "$L/models.log"
  } >> "$summary"
  ;;
sparse4d)
  python_package || echo "(opforge Python package not installed: see pip.log)" >> "$summary"
  OUT="$L/s4d" LOOPS="${LOOPS:-20}" REPS="${REPS:-50}" STEPS="${S4D_STEPS:-consistency,latency}" \
    timeout "$PHASE_TIMEOUT" examples/sparse4d/run_gpu.sh run \
    > "$L/sparse4d.log" 2>&1 || status=1
  { echo; cat "$L/s4d/sparse4d_gpu.md" 2>/dev/null || tail -40 "$L/sparse4d.log"; } >> "$summary"
  ;;
convs)
  python_package || echo "(opforge Python package not installed: see pip.log)" >> "$summary"
  OPFORGE_GPU_ONNX_OPS=Conv,ConvTranspose,opforge::FusedConv timeout 300 "$B/bin/opforge_gpu_onnx_tests" \
    > "$L/conv_tests.log" 2>&1 || status=1
  for dt in fp16 fp32; do
    timeout 200 "$B/bin/opforge_conv_bench" --dtype $dt --reps 20 > "$L/conv_bench_$dt.md" 2>&1 || status=1
  done
  timeout 100 python3 bench/gpu/conv_peers.py --dtype fp16 > "$L/conv_peers_fp16.md" 2>&1 || status=1
  W=/tmp/s4d-convs
  { python3 examples/sparse4d/sparse4d.py export --config full --out $W &&
    python3 examples/sparse4d/sparse4d.py build --config full --out $W --device cuda --precisions fp16,fp32; } \
    > "$L/s4d_build.log" 2>&1 || status=1
  for prec in fp16 fp32; do
    p=$W/plans/backbone_$prec.plan
    [ -f $p ] || continue
    "$B/bin/opforge" inspect $p --plugins="$OPFORGE_OPS_LIBRARY" > "$L/backbone_${prec}_inspect.txt" 2>&1
    timeout 120 "$B/bin/opforge" exec --loadEngine=$p --plugins="$OPFORGE_OPS_LIBRARY" --device=cuda --duration=3 \
      > "$L/backbone_${prec}_exec.txt" 2>&1 || status=1
    timeout 120 "$B/bin/opforge" exec --loadEngine=$p --plugins="$OPFORGE_OPS_LIBRARY" --device=cuda --duration=1 \
      --dumpProfile > "$L/backbone_${prec}_profile.txt" 2>&1 || status=1
  done
  {
    echo; echo "## ONNX-op GPU tests of the convolutions"; grep -E "gpu_onnx:|PASSED|FAILED|tests ran" "$L/conv_tests.log"
    for dt in fp16 fp32; do echo; cat "$L/conv_bench_$dt.md"; done
    echo; cat "$L/conv_peers_fp16.md"
    echo; echo "## Sparse4D backbone plans"; grep -E "^built|^exported" "$L/s4d_build.log"
    for prec in fp16 fp32; do
      echo; echo "### backbone $prec"; grep -E "GPU Compute Time|Latency:|Throughput" "$L/backbone_${prec}_exec.txt"
      echo "layers by format: $(grep -c ':HWC' "$L/backbone_${prec}_inspect.txt") lines mention HWC;" \
        "reformats: $(grep -ci 'reformat' "$L/backbone_${prec}_inspect.txt")"
    done
  } >> "$summary"
  ;;
probe)
  python_package || echo "(opforge Python package not installed: see pip.log)" >> "$summary"
  timeout "$PHASE_TIMEOUT" python3 examples/sparse4d/fp16_probe.py --device cuda --backbone --threads 8 \
    --work /tmp/s4d-probe --profile-dir "$L/profiles" \
    --pin "attention+softmax=FusedAttention:fp32,Softmax:fp32" \
    --pin "layernorms=LayerNormalization:fp32,FusedAddLayerNorm:fp32" \
    --pin "matmuls=MatMul:fp32,FusedMatMul:fp32,Gemm:fp32" \
    --pin "DA=DeformableAggregation:fp32" \
    --pin "elementwise=Add:fp32,Sub:fp32,Mul:fp32,Div:fp32,Relu:fp32,Sigmoid:fp32,Exp:fp32,Clip:fp32,Where:fp32" \
    > "$L/probe.log" 2>&1 || status=1
  { echo; grep -E '^\||^full config' "$L/probe.log" || tail -40 "$L/probe.log"; } >> "$summary"
  ;;
esac
echo "- elapsed $(( $(date +%s) - started )) s, exit $status" >> "$summary"
cp "$summary" "$OUT/gpu-$phase.md"
tar czf "$OUT/gpu-$phase.tar.gz" -C "$L" --exclude='*.plan' --exclude='*.onnx' --exclude='node' . 2>/dev/null
cat "$summary"
exit $status
