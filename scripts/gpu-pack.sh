#!/usr/bin/env bash
# gpu-pack.sh — GPU runs without a build on the GPU machine: the binaries of a CUDA build made here
# (2 cores, no GPU), packed small enough to carry, unpacked there in seconds instead of a 5-minute
# build (device time is scarce: a fresh GPU machine spends about 300 s of a 600-s call building).
#
#   scripts/gpu-pack.sh pack [BUILD]     here, after `cmake --build BUILD` of a CUDA build (default
#                                        build/): strips the CLI, opforge-onnx-tests, opforge-onnx-run,
#                                        the GPU test and benchmark binaries, libopforge and the contrib
#                                        op library into .gpudeps/prebuilt.tar.xz (ignored; carry
#                                        .gpudeps), with the runtime libraries the GPU machine lacks
#                                        (OpenBLAS and its Fortran runtime), the commit it was built at
#                                        and the SDK's install tree (sdk/: headers, CMake package,
#                                        authoring and harness archives; its binaries link to the pack's)
#   eval "$(scripts/gpu-pack.sh unpack [DIR])"
#                                        on the GPU machine: unpacks the sysroot (scripts/gpu.sh
#                                        sysroot) and the pack into DIR (default /tmp/opforge-prebuilt)
#                                        and prints the exports that make it the build tree the tools
#                                        use: LD_LIBRARY_PATH (the pack's libraries, pip's cuDNN),
#                                        OPFORGE_BUILD_DIR=DIR (tests/zoo/run_zoo.py; DIR is also the
#                                        --bin of bench/models/public.py) and OPFORGE_BINARY_DIR=DIR
#                                        (where the C++ tests find libopforge_ops.so)
#
# What runs from a pack: DIR/bin/opforge, the GPU engine and contrib tests
# (DIR/bin/opforge_gpu_engine_tests, DIR/bin/opforge_gpu_tests), the op tests
# (OPFORGE_GPU_ONNX_OPS=Conv DIR/bin/opforge_gpu_onnx_tests --gtest_filter='GpuOnnx.EveryOp*'),
# the node tests on CUDA
# (tools/onnx_tests/node_tests.py run CASES DIR/bin/opforge-onnx-tests --device=cuda ...), the zoo
# and the benchmarks. The CTest groups of scripts/gpu.sh still need its build. unpack warns when the
# pack was built at another commit than the tree it runs in (the scripts and the binaries must agree).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
PACK=.gpudeps/prebuilt.tar.xz
die() { echo "gpu-pack.sh: $*" >&2; exit 1; }

pack() {
  local b=${1:-build} stage
  [ -x "$b/bin/opforge" ] || die "$b/bin/opforge not found: build first (a CUDA build)"
  [ -x "$b/bin/opforge_gpu_onnx_tests" ] || die "$b has no GPU test binaries (OPFORGE_CUDA=OFF?)"
  stage=$(mktemp -d) || die "mktemp failed"
  trap 'rm -rf "$stage"' RETURN
  mkdir -p "$stage/bin" "$stage/lib" .gpudeps
  local f
  for f in opforge opforge-onnx-tests opforge-onnx-run opforge_gpu_onnx_tests opforge_gpu_tests \
           opforge_gpu_engine_tests opforge_gpu_bench opforge_conv_bench; do
    [ -x "$b/bin/$f" ] && { strip -o "$stage/bin/$f" "$b/bin/$f" || die "strip $f failed"; }
  done
  # libtest_plugin_failing.so: the op library GpuEngine.ATacticFailingAtRunTimeNamesLayerAndTactic
  # loads (a tactic that fails at run time); without it that test fails on a pack.
  for f in "$b"/lib/libopforge.so "$b"/lib/libopforge_ops.so "$b"/lib/libtest_plugin_failing.so; do
    [ -f "$f" ] && { strip -o "$stage/lib/$(basename "$f")" "$f" || die "strip $f failed"; }
  done
  # Shared libraries the binaries need that the GPU machine does not have (its CUDA toolkit, cuDNN
  # from pip and the sysroot's protobuf/onnx/fmt cover the rest).
  local lib path
  for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
    path=$(ldd "$b/lib/libopforge.so" | awk -v l="$lib" '$1 == l {print $3}')
    [ -n "$path" ] && cp -L "$path" "$stage/lib/$lib"
  done
  # The SDK as installed (cmake --install): headers, CMake package, the authoring and harness
  # archives (debug info stripped); its CLI and shared libraries are links to the pack's own, so an
  # out-of-tree op project (examples/out_of_tree) builds against DIR/sdk on the GPU machine.
  local inst
  inst=$(mktemp -d) || die "mktemp failed"
  if cmake --install "$b" --prefix "$inst" >/dev/null 2>&1; then
    mkdir -p "$stage/sdk/bin" "$stage/sdk/lib"
    cp -r "$inst/include" "$stage/sdk/"
    cp -r "$inst/lib/cmake" "$stage/sdk/lib/"
    for f in "$inst"/lib/*.a; do strip -g -o "$stage/sdk/lib/$(basename "$f")" "$f" || die "strip $f failed"; done
    for f in "$inst"/bin/*; do ln -s "../../bin/$(basename "$f")" "$stage/sdk/bin/$(basename "$f")"; done
    for f in "$inst"/lib/*.so; do ln -s "../../lib/$(basename "$f")" "$stage/sdk/lib/$(basename "$f")"; done
  else
    echo "gpu-pack.sh: note: cmake --install $b failed; the pack has no sdk/" >&2
  fi
  rm -rf "$inst"
  {
    echo "commit $(git rev-parse HEAD)"
    git diff --quiet HEAD || echo "with local changes"
    echo "build $(realpath "$b")"
  } >"$stage/PACKED"
  if ! tar -C "$stage" -cf - . | xz -T"$(nproc)" -6 >"$PACK.tmp"; then
    rm -f "$PACK.tmp"
    die "packing failed"
  fi
  mv "$PACK.tmp" "$PACK" || die "cannot write $PACK"
  echo "gpu-pack.sh: $PACK ($(du -h "$PACK" | cut -f1)): carry .gpudeps" >&2
}

unpack() {
  local dir=${1:-/tmp/opforge-prebuilt} cudnn
  [ -f "$PACK" ] || die "no $PACK (scripts/gpu-pack.sh pack, then carry .gpudeps)"
  [ -f .gpudeps/sysroot.tar.gz ] && tar -xzf .gpudeps/sysroot.tar.gz -C / 2>/dev/null
  mkdir -p "$dir" || die "cannot make $dir"
  tar -xJf "$PACK" -C "$dir" || die "cannot unpack $PACK into $dir"
  local packed
  packed=$(awk '$1 == "commit" {print $2}' "$dir/PACKED")
  [ "$packed" = "$(git rev-parse HEAD 2>/dev/null)" ] ||
    echo "gpu-pack.sh: warning: the pack was built at ${packed:0:10}, the tree is at $(git rev-parse --short HEAD 2>/dev/null)" >&2
  grep -q "with local changes" "$dir/PACKED" && echo "gpu-pack.sh: note: the pack was built with local changes" >&2
  cudnn=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null)
  echo "export LD_LIBRARY_PATH=$dir/lib${cudnn:+:$cudnn/lib}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  echo "export OPFORGE_BUILD_DIR=$dir"
  echo "export OPFORGE_BINARY_DIR=$dir"  # the C++ test harness (tests/op_harness.cc: binaryDir)
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  unpack) shift; unpack "$@" ;;
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
