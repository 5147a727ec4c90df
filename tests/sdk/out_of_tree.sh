#!/usr/bin/env bash
# The SDK as a user gets it: install this build into a fresh prefix and use only that prefix.
#   out_of_tree.sh example BUILD SOURCE CUDA(ON|OFF)  the install tree holds no path of the build
#       machine's trees (installed .cmake files, RUNPATHs); examples/out_of_tree configured with only
#       CMAKE_PREFIX_PATH, built, its test run; its ONNX file run by the installed `opforge exec
#       --plugins=` and compared with numpy; the op used from PyTorch (torch.ops.ext.silu_mul)
#   out_of_tree.sh version BUILD SOURCE                find_package(opforge 9.9) fails with CMake's
#       version message
#   out_of_tree.sh abi BUILD SOURCE                    the plugin ABI: find_package(opforge) with
#       opforge_PLUGIN_ABI_VERSION_REQUIRED = another ABI fails with CMake's message naming both, the
#       same ABI is found; an op library built against the prefix for another ABI
#       (-DOPFORGE_PLUGIN_ABI_VERSION=) is refused by the installed CLI with both versions named
set -euo pipefail
mode=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd) cuda=${4:-OFF}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opforge-sdk-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/p" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }

if [ "$mode" = abi ]; then
  abi=$(sed -n 's/^set(opforge_PLUGIN_ABI_VERSION \([0-9]*\))$/\1/p' "$tmp/p/lib/cmake/opforge/opforgeConfig.cmake")
  [ -n "$abi" ] || fail "the installed opforgeConfig.cmake sets no opforge_PLUGIN_ABI_VERSION"
  other=$((abi + 98))
  mkdir "$tmp/a"
  printf 'cmake_minimum_required(VERSION 3.22)\nproject(a LANGUAGES CXX)\nfind_package(opforge 0.1 REQUIRED)\nmessage(STATUS "abi=${opforge_PLUGIN_ABI_VERSION}")\n' \
    >"$tmp/a/CMakeLists.txt"
  if cmake -S "$tmp/a" -B "$tmp/ab" -DCMAKE_PREFIX_PATH="$tmp/p" -Dopforge_PLUGIN_ABI_VERSION_REQUIRED=$other \
    >"$tmp/a.log" 2>&1; then
    fail "find_package(opforge) accepted plugin ABI $abi for opforge_PLUGIN_ABI_VERSION_REQUIRED=$other"
  fi
  grep -q "version: 0\.1\.[0-9]* (plugin ABI $abi, not the plugin ABI $other of" "$tmp/a.log" ||
    { cat "$tmp/a.log"; fail "no plugin ABI message"; }
  echo "ok: refused: $(grep -m1 'plugin ABI' "$tmp/a.log" | sed 's/^ *//')"
  rm -rf "$tmp/ab"
  cmake -S "$tmp/a" -B "$tmp/ab" -DCMAKE_PREFIX_PATH="$tmp/p" -Dopforge_PLUGIN_ABI_VERSION_REQUIRED=$abi \
    >"$tmp/a.log" 2>&1 || { cat "$tmp/a.log"; fail "find_package(opforge) with the package's own ABI $abi"; }
  grep -q "abi=$abi\$" "$tmp/a.log" || { cat "$tmp/a.log"; fail "opforge_PLUGIN_ABI_VERSION"; }
  echo "ok: found with opforge_PLUGIN_ABI_VERSION_REQUIRED=$abi"
  # An op library that claims another ABI (the headers' OPFORGE_PLUGIN_ABI_VERSION overridden), loaded
  # by the installed CLI: refused, both versions named, no crash.
  cmake -S "$src/examples/out_of_tree" -B "$tmp/b" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/p" -DEXT_CUDA=OFF \
    -DCMAKE_CXX_FLAGS="-DOPFORGE_PLUGIN_ABI_VERSION=${other}u" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
    >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }
  cmake --build "$tmp/b" --target ext_ops >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build ext_ops"; }
  if "$tmp/p/bin/opforge" ops --plugins="$tmp/b/lib/libext_ops.so" >"$tmp/ops.log" 2>&1; then
    fail "the installed opforge loaded an op library of plugin ABI $other"
  fi
  grep -q "was built for plugin ABI version $other; this opforge speaks version $abi" "$tmp/ops.log" ||
    { cat "$tmp/ops.log"; fail "no ABI message"; }
  grep -q 'terminate\|Aborted\|Segmentation' "$tmp/ops.log" && fail "opforge ops crashed"
  echo "PASS: plugin ABI: $(grep -m1 'plugin ABI' "$tmp/ops.log")"
  exit 0
fi

if [ "$mode" = version ]; then
  mkdir "$tmp/v"
  printf 'cmake_minimum_required(VERSION 3.22)\nproject(v LANGUAGES CXX)\nfind_package(opforge 9.9 REQUIRED)\n' \
    >"$tmp/v/CMakeLists.txt"
  if cmake -S "$tmp/v" -B "$tmp/vb" -DCMAKE_PREFIX_PATH="$tmp/p" >"$tmp/v.log" 2>&1; then
    fail "find_package(opforge 9.9) succeeded"
  fi
  grep -q 'requested version "9.9"' "$tmp/v.log" || { cat "$tmp/v.log"; fail "no version message"; }
  grep -q 'opforgeConfig.cmake, version: 0\.1\.' "$tmp/v.log" || { cat "$tmp/v.log"; fail "no found version"; }
  echo "PASS: find_package(opforge 9.9) refused: $(grep -m1 'requested version' "$tmp/v.log" | sed 's/^ *//')"
  exit 0
fi

p=$tmp/p
for f in bin/opforge bin/opforge-onnx-tests lib/libopforge.so lib/libopforge_ops.so lib/libopforge_author.a lib/libopforge_harness.a \
         include/opforge/op.h include/opforge/plugin_export.h include/opforge/testing/op_harness.h \
         lib/cmake/opforge/opforgeConfig.cmake lib/cmake/opforge/opforgeConfigVersion.cmake; do
  [ -f "$p/$f" ] || fail "not installed: $f"
done
# Only the public headers (and the op harness's), nothing of src/.
[ -z "$(find "$p/include" -type f ! -path "$p/include/opforge/*.h")" ] ||
  [ "$(find "$p/include" -type f ! -path "$p/include/opforge/*.h")" = "$p/include/opforge/testing/op_harness.h" ] || fail "extra headers: $(find "$p/include" -type f)"
# Relocatable: no path of the build or source tree in the installed CMake files, RUNPATH $ORIGIN/../lib.
if grep -rlF -e "$build" -e "$src" "$p/lib/cmake"; then fail "the installed .cmake files name the build machine's trees"; fi
for f in "$p/bin/opforge" "$p/bin/opforge-onnx-tests" "$p/lib/libopforge.so" "$p/lib/libopforge_ops.so"; do
  rp=$(readelf -d "$f" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  [ "$rp" = '$ORIGIN/../lib' ] || fail "$f: RUNPATH '$rp', want \$ORIGIN/../lib"
done
# The installed node-test runner starts (its libraries resolve in the prefix).
help=$("$p/bin/opforge-onnx-tests" --help 2>&1) || fail "installed opforge-onnx-tests --help: $help"
grep -q '^usage: opforge-onnx-tests' <<<"$help" || fail "installed opforge-onnx-tests --help: $help"

# The example, against the prefix only.
cmake -S "$src/examples/out_of_tree" -B "$tmp/b" -G Ninja -DCMAKE_PREFIX_PATH="$p" -DEXT_CUDA="$cuda" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }
grep -q "opforge_DIR:PATH=$p/lib/cmake/opforge" "$tmp/b/CMakeCache.txt" || fail "opforge was not found in the prefix"
cmake --build "$tmp/b" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build"; }
lib=$tmp/b/lib/libext_ops.so
# The op library exports the two ABI entry points and nothing else of opforge's.
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -i opforge | sort | tr '\n' ' ')
[ "$exported" = "opforge_plugin_abi_version opforge_plugin_get_library " ] || fail "exports: $exported"
# Its tests: its own program and the op harness's (opforge_add_op_test: GoogleTest is found here).
[ -x "$tmp/b/silu_mul_harness_test" ] || fail "opforge_add_op_test built no silu_mul_harness_test"
ctest --test-dir "$tmp/b" --output-on-failure >"$tmp/ctest.log" 2>&1 || { cat "$tmp/ctest.log"; fail "the example's tests"; }
for t in EveryTypeOnRandomShapes EveryTacticMatchesTheReference; do
  grep -q "SiluMul.$t .* Passed" "$tmp/ctest.log" || { cat "$tmp/ctest.log"; fail "harness test $t not run"; }
done
grep -Eq '100% tests passed(, 0 tests failed)? out of 5' "$tmp/ctest.log" || { cat "$tmp/ctest.log"; fail "example ctest"; }

# The ONNX file through the installed CLI, checked with numpy.
cd "$tmp"
python3 -c "
import numpy as np
r = np.random.default_rng(3)
np.save('a.npy', r.uniform(-4, 4, (5, 64)).astype(np.float32))
np.save('b.npy', r.uniform(-4, 4, (5, 64)).astype(np.float32))"
"$p/bin/opforge" exec --onnx="$src/examples/out_of_tree/silu_mul.onnx" --plugins="$lib" --device=cpu \
  --shapes=a:5x64,b:5x64 --loadInputs=a:a.npy,b:b.npy --saveOutputs=out --iterations=1 --duration=0 \
  --warmUp=0 >exec.log 2>&1 || { cat exec.log; fail "opforge exec"; }
python3 -c "
import numpy as np
a, b, y = np.load('a.npy'), np.load('b.npy'), np.load('out/y.npy')
want = a.astype(np.float64) / (1 + np.exp(-a.astype(np.float64))) * b
assert y.shape == (5, 64) and y.dtype == np.float32, (y.shape, y.dtype)
err = np.abs(y - want).max()
assert err <= 1e-5 * (1 + np.abs(want).max()), err
print('opforge exec: y matches numpy, max error %.3g' % err)"
# From PyTorch, as its README shows: the library's op becomes a torch op (when the opforge Python
# package and torch are importable here, as in scripts/test.sh).
if python3 -c "import opforge, torch" >/dev/null 2>&1; then
  OPFORGE_EXT_LIB="$lib" python3 -c "
import os, opforge, torch
opforge.load_library(os.environ['OPFORGE_EXT_LIB'])
a, b = torch.randn(8, 64, dtype=torch.float64).float(), torch.randn(8, 64)
y = torch.ops.ext.silu_mul(a, b)
want = torch.nn.functional.silu(a.double()) * b.double()
err = (y.double() - want).abs().max().item()
assert y.shape == (8, 64) and err <= 1e-5, err
print('torch.ops.ext.silu_mul matches F.silu(a) * b, max error %.3g' % err)" ||
    fail "the op from PyTorch"
else
  echo "note: the opforge Python package is not importable here; the PyTorch step is skipped"
fi
echo "PASS: installed into a fresh prefix, examples/out_of_tree built and tested against it (CUDA $cuda)"
