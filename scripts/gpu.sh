#!/usr/bin/env bash
# gpu.sh — the GPU checks of opforge: CTest label groups run on the GPU machine, one summary.
#
#   scripts/gpu.sh sysroot           here, once (a machine with the Debian -dev packages): packs the
#                                    -dev files the GPU machine lacks into .gpudeps/sysroot.tar.gz;
#                                    carry it, and third_party/cudnn-frontend (scripts/deps.sh), to
#                                    the GPU machine, which has no network
#   scripts/gpu.sh build [GROUP...]  on the GPU machine, from the repository root: unpacks the sysroot
#                                    at /, configures (CMake preset `gpu`: build-gpu/, Release, CUDA,
#                                    sm_90, no -Werror) and builds everything, installs the Python
#                                    package against build-gpu, then runs the GROUPs
#   scripts/gpu.sh GROUP...          on the GPU machine, after a build: runs the GROUPs
#   scripts/gpu.sh summary FILE...   the summary of JUnit files from `ctest --output-junit` (and
#                                    the `ctest --show-only=json-v1` lists that name the groups)
#
# A GROUP is a CTest label, each sized to fit a 10-minute device call with the others of its line:
#   gpu                   GPU engine, built-in (ONNX) and contrib op tests; a plan across processes
#   gpu-sanitize          compute-sanitizer memcheck and racecheck over the op tests, in shards, and
#                         over GpuAotKernel.* (AotKernel launching images compiled elsewhere)
#   gpu-node              the ONNX node tests on the CUDA backend
#   gpu-python            the Python package's GPU tests (pytest -m gpu, one test per file)
#   gpu-zoo               the model zoo (tests/zoo) on CUDA, FP32 and --fp16, against PyTorch
#   gpu-bench             benchmarks: contrib ops, launch overhead, convolutions (against PyTorch)
#   gpu-bench-models      benchmark: ResNet-style CNN and transformer layer against PyTorch
#   gpu-bench-sparse4d    Sparse4Dv3 at full size: consistency with PyTorch, the FP16 accuracy probe
#   gpu-bench-sparse4d-latency  Sparse4Dv3: latency per module against PyTorch
#   gpu-bench-public-cnn  public CNNs (resnet50, efficientnet_b0) at batch 32 and 128, fp16 / fp32
#                         (TF32) / fp32-notf32, against eager and torch.compile reduce-overhead
#   gpu-bench-public-transformer  vit_b_16, BERT-base, GPT-2 at batch 1 and 32, fp16 / fp32 (TF32)
#   gpu-bench-public-quick  resnet50, vit_b_16, BERT-base at batch 32 in fp16, each plan built once,
#                         with its --dumpProfile and `opforge inspect` (one call's worth)
# `ctest --test-dir build-gpu -N -L '^GROUP$'` lists a group. The correctness groups named run in
# one ctest (-j nproc), sharing the GPU; then the benchmark groups (gpu-bench*) in another, one test
# at a time, the GPU to itself. CTest stops every test DEADLINE_S seconds (default 560) after this
# script started, so the summary is written inside a 10-minute call.
#
# GPU_TARGETS="opforge_cli opforge_ops" builds only those targets (a benchmark call that runs
# bench/models/public.py by hand; the CTest groups need the whole build).
# OPFORGE_COMMIT=HASH names the commit in the summary when the tree's git metadata is stale.
# Output: ${OUT:-build-gpu/gpu-out}: summary.md (device, build, each group's counts, the failed and
# skipped tests, each test's last output line, the benchmark tables) and gpu-logs.tar.gz (build.log,
# ctest-*.log, junit-*.xml, the sanitizer logs, benchmark tables and JSON). Exit status: non-zero when
# the build or a test failed, or a test was skipped (on the GPU machine a skip means no usable GPU).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
START=$SECONDS
B="$ROOT/build-gpu"  # the preset's binaryDir
OUT="${OUT:-$B/gpu-out}"
LOGS="$B/gpu-logs"
GROUPS_KNOWN=(gpu gpu-sanitize gpu-node gpu-python gpu-bench gpu-bench-models gpu-bench-sparse4d
              gpu-bench-sparse4d-latency gpu-bench-public-cnn gpu-bench-public-transformer
              gpu-bench-public-quick gpu-zoo)

sysroot() {
  local pkgs=(libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32 libonnx-dev
              libonnx1 libonnxifi libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 libgtest-dev libgmock-dev
              libbenchmark-dev libbenchmark1debian zlib1g-dev)
  local exclude p f list
  exclude="$(git rev-parse --git-common-dir)/info/exclude"
  grep -qx '/.gpudeps/' "$exclude" 2>/dev/null || echo '/.gpudeps/' >>"$exclude"
  mkdir -p .gpudeps
  list="$(mktemp)"
  for p in "${pkgs[@]}"; do
    dpkg -L "$p" | grep -v -e '^/usr/share/doc' -e '^/usr/share/man' | while read -r f; do
      if [ -f "$f" ] || [ -L "$f" ]; then echo "${f#/}"; fi
    done
  done | sort -u >"$list"
  tar -czf .gpudeps/sysroot.tar.gz -C / -T "$list" || return 1
  rm -f "$list"
  echo "gpu.sh: .gpudeps/sysroot.tar.gz ($(du -h .gpudeps/sysroot.tar.gz | cut -f1), ${#pkgs[@]} packages): carry .gpudeps (and third_party/cudnn-frontend, which scripts/deps.sh fetched)"
}

# cuDNN from the nvidia-cudnn wheel when PyTorch brought one, else the system's.
CUDNN="$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null)"
[ -n "$CUDNN" ] && export LD_LIBRARY_PATH="$CUDNN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The tree's commit. A copy of the tree whose git metadata is older than its files (the GPU
# machine's copy) would name the wrong one: OPFORGE_COMMIT, when set, names it instead.
commit_label() {
  if [ -n "${OPFORGE_COMMIT:-}" ]; then
    echo "$OPFORGE_COMMIT (OPFORGE_COMMIT)"
    return
  fi
  echo "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
}

build_steps() {
  local lib so extra=()
  if [ -f .gpudeps/sysroot.tar.gz ]; then
    tar -xzf .gpudeps/sysroot.tar.gz -C / || return 1
  else
    echo "gpu.sh: no .gpudeps/sysroot.tar.gz (scripts/gpu.sh sysroot): the -dev packages must be installed"
  fi
  lib="$(find "${CUDNN:-/nonexistent}/lib" -name 'libcudnn.so*' 2>/dev/null | sort | head -1)"
  [ -n "$lib" ] && extra=(-DOPFORGE_CUDNN_INCLUDE="$CUDNN/include" -DOPFORGE_CUDNN_LIBRARY="$lib")
  local targets=()
  [ -n "${GPU_TARGETS:-}" ] && read -r -a targets <<<"--target $GPU_TARGETS"
  cmake --preset gpu "${extra[@]}" && cmake --build --preset gpu -j "$(nproc)" "${targets[@]}" || return 1
  [ -z "${GPU_TARGETS:-}" ] || return 0  # a partial build (benchmark calls): no Python package
  # The Python package against this build (gpu-python, the benchmarks' PyTorch side), once per build.
  so="$(OPFORGE_BUILD_DIR="$B" python3 -c 'import opforge._C as c; print(c.__file__)' 2>/dev/null)"
  if [ -z "$so" ] || [ -n "$(find python/opforge/csrc "$B/lib/libopforge.so" -newer "$so" 2>/dev/null | head -1)" ]; then
    OPFORGE_BUILD_DIR="$B" python3 -m pip install --no-build-isolation --no-deps -e python/ || return 1
  fi
}

build() {
  local t=$SECONDS rc
  build_steps >"$LOGS/build.log" 2>&1
  rc=$?
  echo "build: exit $rc in $((SECONDS - t)) s (build.log)" >>"$LOGS/status.txt"
  [ $rc -eq 0 ] || tail -40 "$LOGS/build.log"
  return $rc
}

# ctest_pass NAME JOBS GROUP...: one ctest over the GROUPs' labels, JUnit to $LOGS/junit-NAME.xml
ctest_pass() {
  local name=$1 jobs=$2 regex n stop rc trunc=()
  shift 2
  regex="^($(IFS='|'; echo "$*"))\$"
  n=$(ctest --test-dir "$B" -N -L "$regex" | awk '/^Total Tests:/ {print $3}')
  echo "$name: groups $*: ${n:-0} tests, ctest -j $jobs" >>"$LOGS/status.txt"
  ctest --test-dir "$B" -L "$regex" --show-only=json-v1 >"$LOGS/tests-$name.json" 2>/dev/null
  # keep a long output's beginning and end, where the result line is (CTest >= 3.24)
  ctest --help | grep -q -- --test-output-truncation && trunc=(--test-output-truncation middle)
  stop=$(date -d "@$(($(date +%s) + ${DEADLINE_S:-560} - (SECONDS - START)))" +%H:%M:%S)
  OPFORGE_GPU_OUT="$LOGS" ctest --test-dir "$B" -L "$regex" -j "$jobs" --output-on-failure --no-tests=error \
    --stop-time "$stop" --test-output-size-passed 65536 --test-output-size-failed 1048576 \
    "${trunc[@]}" --output-junit "$LOGS/junit-$name.xml" >"$LOGS/ctest-$name.log" 2>&1
  rc=$?
  tail -25 "$LOGS/ctest-$name.log"
  return $rc
}

# The correctness groups in one ctest, side by side on the GPU; then the benchmarks, one at a time.
run_groups() {
  local g tests=() bench=() rc=0
  if [ ! -f "$B/CTestTestfile.cmake" ]; then
    echo "gpu.sh: no build in $B (a fresh machine?): run 'scripts/gpu.sh build $*'" | tee -a "$LOGS/status.txt" >&2
    return 1
  fi
  if [ $((${DEADLINE_S:-560} - (SECONDS - START))) -lt 30 ]; then
    echo "gpu.sh: under 30 s left of DEADLINE_S=${DEADLINE_S:-560}: no group run" | tee -a "$LOGS/status.txt" >&2
    return 1
  fi
  for g in "$@"; do
    [[ " ${GROUPS_KNOWN[*]} " == *" $g "* ]] || { echo "gpu.sh: unknown group '$g' (${GROUPS_KNOWN[*]})" >&2; return 2; }
    case "$g" in gpu-bench*) bench+=("$g") ;; *) tests+=("$g") ;; esac
  done
  [ ${#tests[@]} -eq 0 ] || ctest_pass tests "$(nproc)" "${tests[@]}" || rc=1
  [ ${#bench[@]} -eq 0 ] || ctest_pass bench 1 "${bench[@]}" || rc=1
  return $rc
}

# summary FILE...: Markdown on stdout from CTest JUnit files (*.xml) and, for the groups, the
# `ctest --show-only=json-v1` lists (*.json); exit 1 when a test failed or was skipped.
summary() {
  python3 - "$@" <<'EOF'
import json, os, sys, xml.etree.ElementTree as ET
labels = {}
for path in sys.argv[1:]:
    if path.endswith(".json") and os.path.exists(path):
        with open(path) as f:
            for t in json.load(f).get("tests", []):
                for p in t.get("properties", []):
                    if p.get("name") == "LABELS":
                        labels[t["name"]] = p["value"]
cases = []
testcases = [c for p in sys.argv[1:] if p.endswith(".xml") for c in ET.parse(p).getroot().iter("testcase")]
for c in testcases:
    out = c.findtext("system-out") or ""
    status = c.get("status", "run")
    if c.find("failure") is not None or status == "fail":
        status = "failed"
    elif c.find("skipped") is not None or status in ("notrun", "disabled"):
        status = "skipped"
    else:
        status = "passed"
    skip = c.find("skipped")
    cases.append(dict(name=c.get("name"), time=float(c.get("time") or 0), status=status, out=out,
                      why=(skip.get("message", "") if skip is not None else ""),
                      group=",".join(labels.get(c.get("name"), [])) or "(no labels file)"))

def result_line(out):
    """The last line a test printed that is not gtest's framing: its result."""
    for line in reversed(out.strip().splitlines()):
        s = line.strip()
        if s and not s.startswith(("[", "Running main()", "Note: Google Test filter", "Note: This is test shard")):
            return s[:200]
    return ""

print("| group | tests | passed | failed | skipped | seconds (sum) |")
print("|---|---|---|---|---|---|")
for g in sorted({c["group"] for c in cases}):
    cs = [c for c in cases if c["group"] == g]
    n = {s: sum(c["status"] == s for c in cs) for s in ("passed", "failed", "skipped")}
    print(f"| {g} | {len(cs)} | {n['passed']} | {n['failed']} | {n['skipped']} | {sum(c['time'] for c in cs):.0f} |")
ran = {c["name"] for c in cases}
notrun = [n for n in labels if n not in ran]
if notrun:  # listed for the groups but absent from the JUnit files: ctest stopped first (DEADLINE_S)
    print(f"\n**Not run: {len(notrun)} test(s)**: " + ", ".join(notrun[:12]) + (" ..." if len(notrun) > 12 else ""))
failed = [c for c in cases if c["status"] == "failed"]
skipped = [c for c in cases if c["status"] == "skipped"]
if failed:
    print("\n## Failed\n")
    for c in failed:
        tail = "\n".join(c["out"].strip().splitlines()[-15:])
        print(f"### {c['name']} ({c['time']:.1f} s)\n\n```\n{tail}\n```\n")
if skipped:
    print(f"\n## Skipped ({len(skipped)})\n")
    why = {}
    for c in skipped:
        why.setdefault(result_line(c["out"]) or c["why"], []).append(c["name"])
    for w, names in why.items():
        shown = ", ".join(names[:12]) + (f", ... ({len(names) - 12} more)" if len(names) > 12 else "")
        print(f"- {w}: {len(names)} test(s): {shown}")
rows = [(c, result_line(c["out"])) for c in cases if c["status"] != "skipped"]
rows = [(c, r) for c, r in rows if r]
if rows:
    print("\n## Results (each test's last output line)\n")
    print("| test | status | s | result |")
    print("|---|---|---|---|")
    for c, r in rows:
        print(f"| {c['name']} | {c['status']} | {c['time']:.1f} | {r.replace('|', '/')} |")
sys.exit(1 if failed or skipped or notrun else 0)
EOF
}

SUMMARY_RC=0
write_summary() {  # the summary of this run into $LOGS/summary.md, then $OUT; SUMMARY_RC: summary's
  {
    echo "# opforge GPU checks: scripts/gpu.sh $*"
    echo
    echo "host $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), commit $(commit_label)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/device: /' |
      grep . || echo "device: none (nvidia-smi lists none)"
    echo
    sed 's/^/- /' "$LOGS/status.txt"
    echo "- elapsed $((SECONDS - START)) s"
    echo
    if compgen -G "$LOGS/junit-*.xml" >/dev/null; then
      summary "$LOGS"/junit-*.xml "$LOGS"/tests-*.json || SUMMARY_RC=1
    fi
    local t
    for t in "$LOGS"/bench/*.md; do
      [ -f "$t" ] || continue
      echo
      echo "## Table: bench/$(basename "$t")"
      echo
      sed 's/^#/##/' "$t"
    done
  } >"$LOGS/summary.md"
  mkdir -p "$OUT"
  cp "$LOGS/summary.md" "$OUT/summary.md"
  tar -czf "$OUT/gpu-logs.tar.gz" -C "$B" gpu-logs
  cat "$LOGS/summary.md"
}

mode="${1:-}"
case "$mode" in
  sysroot) sysroot; exit ;;
  summary) shift; [ $# -ge 1 ] || { sed -n '2,30p' "$0"; exit 2; }; summary "$@"; exit ;;
  build) shift ;;
  gpu*) mode=run ;;
  *) sed -n '2,30p' "$0"; exit 2 ;;
esac
rm -rf "$LOGS" && mkdir -p "$LOGS"
: >"$LOGS/status.txt"
status=0
if [ "$mode" = build ]; then
  build || status=1
fi
if [ $status -eq 0 ] && [ $# -gt 0 ]; then
  run_groups "$@" || status=1
fi
write_summary "$mode" "$@"
[ $SUMMARY_RC -eq 0 ] || status=1
exit $status
