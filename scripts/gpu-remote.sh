#!/usr/bin/env bash
# gpu-remote.sh — on the GPU machine, from the repository root: build the tree there and run the
# GPU checks, so that nothing but the sources (and .gpudeps/sysroot.tar.gz from
# scripts/gpu-sysroot.sh) travels. Steps (default: build tests node):
#   build   unpack the sysroot at /, configure build-gpu (CUDA on, Release, sm_90, cuDNN from the
#           nvidia-cudnn wheel or the system, no OpenBLAS) and build everything with every core;
#           warnings are not errors there (its g++ 13 warns where CI's g++ 12 does not)
#   tests   ctest -L gpu (every GPU test; CPU tests too with ALL=1)
#   node    the ONNX node tests, generated from the installed onnx, on the CUDA backend
#   memcheck / racecheck   compute-sanitizer on opforge_gpu_tests and opforge_gpu_onnx_tests
# Logs go to $OUT (default build-gpu/out): build.log, tests.log, node.log, memcheck.log,
# racecheck.log, summary.txt (printed last). Exit status non-zero when a step failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=build-gpu
OUT="${OUT:-$B/out}"
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build tests node)
status=0
summary=()
cudnn="$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null)"
[ -n "$cudnn" ] && export LD_LIBRARY_PATH="$cudnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
t0=$SECONDS
for s in "${steps[@]}"; do
  t=$SECONDS
  case "$s" in
    build)
      tar -xzf .gpudeps/sysroot.tar.gz -C / || { summary+=("build: no sysroot"); status=1; continue; }
      lib="$(ls "$cudnn"/lib/libcudnn.so* 2>/dev/null | head -1)"
      cmake -S . -B "$B" -G Ninja -DOPFORGE_CUDA=ON -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DOPFORGE_USE_OPENBLAS=OFF -DCMAKE_CUDA_FLAGS=-lineinfo \
        ${cudnn:+-DOPFORGE_CUDNN_INCLUDE=$cudnn/include -DOPFORGE_CUDNN_LIBRARY=$lib} >"$OUT/build.log" 2>&1 &&
        ninja -C "$B" -j "$(nproc)" >>"$OUT/build.log" 2>&1
      rc=$?
      summary+=("build: exit $rc in $((SECONDS - t)) s ($(grep -c 'error' "$OUT/build.log") lines with 'error')")
      [ $rc -ne 0 ] && { tail -40 "$OUT/build.log"; status=1; break; } ;;
    tests)
      lab=(-L gpu); [ "${ALL:-0}" = 1 ] && lab=()
      mkdir -p /tmp/gpu-tests && TEST_TMPDIR=/tmp/gpu-tests ctest --test-dir "$B" "${lab[@]}" -E '^onnx_node' -j 4 --output-on-failure >"$OUT/tests.log" 2>&1
      rc=$?
      summary+=("tests: exit $rc: $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -1) [$((SECONDS - t)) s]")
      [ $rc -ne 0 ] && { grep -E '\(Failed\)|\*\*\*' "$OUT/tests.log" | head -30; status=1; } ;;
    node)
      python3 tools/onnx_tests/node_tests.py generate "$B/onnx-node-tests" >"$OUT/node.log" 2>&1
      "$B/bin/opforge-onnx-tests" "$B/onnx-node-tests" --device=cuda --jobs=8 \
        --divergences=tools/onnx_tests/divergences.txt >>"$OUT/node.log" 2>&1
      rc=$?
      summary+=("node tests (CUDA): exit $rc: $(grep -E '^node tests:' "$OUT/node.log" | tail -1); $(grep -E '^CUDA:' "$OUT/node.log" | tail -1) [$((SECONDS - t)) s]")
      [ $rc -ne 0 ] && { grep -A30 '^failed cases' "$OUT/node.log" | head -30; status=1; } ;;
    memcheck|racecheck)
      for b in opforge_gpu_tests opforge_gpu_onnx_tests; do
        timeout 400 compute-sanitizer --tool "$s" --error-exitcode 3 "$B/bin/$b" >>"$OUT/$s.log" 2>&1
        rc=$?
        summary+=("$s $b: exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$s.log" | tail -1) [$((SECONDS - t)) s]")
        [ $rc -ne 0 ] && status=1
      done ;;
    *) summary+=("unknown step $s"); status=1 ;;
  esac
done
{
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  printf '%s\n' "${summary[@]}"
  echo "total: $((SECONDS - t0)) s"
} | tee "$OUT/summary.txt"
exit $status
