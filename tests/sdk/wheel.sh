#!/usr/bin/env bash
# The pip wheel as a user gets it: built from this build tree (OPFORGE_WHEEL_BUILD_DIR: nothing is
# compiled again but the extension opforge._C), installed into a fresh virtual environment, and used
# there from a folder outside the repository:
#   - the wheel holds the libraries, the CLI, the headers, the CMake package, the extension, and no
#     path of the build machine (installed .cmake files, RUNPATHs);
#   - `import opforge` is the wheel's (not the development install of python/), and every opforge
#     library the process maps is the venv's;
#   - the console script `opforge` (exec --help; a plan built and run, checked with numpy);
#   - a contrib op through torch, a plan built, saved, loaded and run through the Python API;
#   - find_package(opforge) with CMAKE_PREFIX_PATH = opforge.cmake_prefix_path: examples/out_of_tree's
#     op library built against the wheel, loaded with opforge.load_library(), its op a torch op;
#   - the wheel under another torch version than it was built against (the recorded version faked):
#     a clear ImportError naming both.
# The venv takes torch, numpy and onnx from the system (--system-site-packages: no 1 GB download).
#   wheel.sh BUILD SOURCE        (exit 77, skipped, without torch/setuptools/venv)
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
python=${PYTHON:-python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opforge-wheel-XXXXXX")
# OPFORGE_KEEP_TEST_DIRS=1 keeps the folder for a look (docs/testing.md).
[ "${OPFORGE_KEEP_TEST_DIRS:-0}" = 1 ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! "$python" -c "import torch, numpy, onnx, setuptools, venv" >/dev/null 2>&1; then
  echo "skipped: $python lacks torch, numpy, onnx, setuptools or venv"
  exit 77
fi
unset OPFORGE_BUILD_DIR OPFORGE_OPS_LIBRARY PYTHONPATH PYTHONHOME
# The extension's objects through the compiler cache when there is one (same sources, same flags).
if [ -z "${CXX:-}" ] && [ -x /usr/lib/ccache/c++ ]; then export CXX=/usr/lib/ccache/c++; fi
t0=$SECONDS

# 1. The wheel, from this build tree; python/ (the development install) and the root are left as they were.
snapshot() {
  (cd "$src" && ls -A && find python -name __pycache__ -prune -o -print | sort &&
    stat -c '%n %Y' python/opforge/_build_info.py python/opforge/_C*.so 2>/dev/null) || true
}
before=$(snapshot)
# OPFORGE_WHEEL_NO_BUILD: the tree is installed as it is, not brought up to date — under CTest a
# build here would relink libopforge.so while the tests beside this one load it.
OPFORGE_WHEEL_BUILD_DIR=$build OPFORGE_WHEEL_NO_BUILD=1 OPFORGE_WHEEL_WORK_DIR=$tmp/work \
  "$python" -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$tmp/dist" "$src" >"$tmp/wheel.log" 2>&1 ||
  { cat "$tmp/wheel.log"; fail "pip wheel"; }
grep -q "reusing the CMake build tree $build" "$tmp/wheel.log" || { cat "$tmp/wheel.log"; fail "the build tree was not reused"; }
whl=$(ls "$tmp"/dist/opforge-*.whl)
[ "$before" = "$(snapshot)" ] || fail "building the wheel changed the source tree: $(diff <(echo "$before") <(snapshot))"
echo "ok: built $(basename "$whl") ($(du -m "$whl" | cut -f1) MB) in $((SECONDS - t0)) s"
mkdir "$tmp/unzipped"
"$python" - "$whl" "$tmp/unzipped" <<'EOF'
import stat, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
want = ["_opforge_cli.py", "opforge/__init__.py", "opforge/_wheel_info.py", "opforge/bin/opforge",
        "opforge/bin/opforge-onnx-tests", "opforge/lib/libopforge.so", "opforge/lib/libopforge_ops.so",
        "opforge/lib/libopforge_author.a", "opforge/include/opforge/op.h", "opforge/include/opforge/plugin_abi.h",
        "opforge/lib/cmake/opforge/opforgeConfig.cmake", "opforge/lib/cmake/opforge/opforgeConfigVersion.cmake",
        "opforge/lib/cmake/opforge/opforgeTargets.cmake", "opforge/plugin/__init__.py"]
missing = [n for n in want if n not in names]
assert not missing, f"not in the wheel: {missing}"
assert any(n.startswith("opforge/_C.") and n.endswith(".so") for n in names), "no opforge/_C*.so in the wheel"
assert "opforge/_build_info.py" not in names, "the development install's _build_info.py is in the wheel"
assert not [n for n in names if n.startswith("opforge/csrc")], "the extension's sources are in the wheel"
for exe in ("opforge/bin/opforge", "opforge/bin/opforge-onnx-tests"):
    assert (z.getinfo(exe).external_attr >> 16) & stat.S_IXUSR, f"{exe} is not executable in the wheel"
ep = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
assert "opforge = _opforge_cli:main" in z.read(ep).decode(), z.read(ep).decode()
z.extractall(sys.argv[2])
print(f"ok: the wheel holds {len(names)} files: libraries, CLI, headers, CMake package, opforge._C")
EOF
u=$tmp/unzipped/opforge
if grep -rlF -e "$build" -e "$src" "$u/lib/cmake" "$u"/*.py; then fail "the wheel's .cmake/.py files name the build machine's trees"; fi
runpath() { readelf -d "$1" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p'; }
for f in "$u/bin/opforge" "$u/bin/opforge-onnx-tests" "$u/lib/libopforge.so" "$u/lib/libopforge_ops.so"; do
  [ "$(runpath "$f")" = '$ORIGIN/../lib' ] || fail "$f: RUNPATH '$(runpath "$f")', want \$ORIGIN/../lib"
done
[ "$(runpath "$u"/_C.*.so)" = '$ORIGIN/lib' ] || fail "opforge._C: RUNPATH '$(runpath "$u"/_C.*.so)', want \$ORIGIN/lib"
echo "ok: no build path in the wheel's CMake/Python files; RUNPATHs relative"

# 2. A fresh venv (torch, numpy, onnx from the system site), the wheel installed into it.
"$python" -m venv --system-site-packages --without-pip "$tmp/venv"
vpy=$tmp/venv/bin/python
# (the system's pip, run by the venv's interpreter, installs into the venv)
"$vpy" -m pip install -q --no-index --no-deps --ignore-installed "$whl" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "pip install the wheel"; }
site=$("$vpy" -c "import sysconfig; print(sysconfig.get_path('platlib'))")
[ -f "$site/opforge/bin/opforge" ] || fail "the wheel is not installed in the venv ($site)"
[ -x "$tmp/venv/bin/opforge" ] || fail "no console script $tmp/venv/bin/opforge"
mkdir "$tmp/run" && cd "$tmp/run"

# 3. The console script: the bundled CLI, with the wheel's contrib library.
help=$("$tmp/venv/bin/opforge" exec --help 2>&1) || fail "opforge exec --help: $help"
grep -q -- '--onnx' <<<"$help" || fail "opforge exec --help says no --onnx: $help"
"$vpy" -c "
import numpy as np
np.save('x.npy', np.random.default_rng(5).standard_normal((2, 3, 32, 32)).astype(np.float32))"
"$tmp/venv/bin/opforge" exec --onnx="$src/examples/circ_pad/circ_pad.onnx" --device=cpu --shapes=x:2x3x32x32 \
  --plugins="$site/opforge/lib/libopforge_ops.so" \
  --loadInputs=x:x.npy --saveOutputs=out --iterations=1 --duration=0 --warmUp=0 >exec.log 2>&1 ||
  { cat exec.log; fail "opforge exec (console script)"; }
"$vpy" -c "
import numpy as np
x, y = np.load('x.npy'), np.load('out/y.npy')
want = np.pad(x, ((0, 0), (0, 0), (2, 2), (1, 1)), mode='wrap')
assert y.shape == want.shape and np.array_equal(y, want), (y.shape, want.shape)
print('ok: console script: opforge exec --help; circ_pad.onnx built and run, y == numpy wrap padding')" ||
  fail "the console script's plan"

# 4. Python: the wheel's package, a contrib op through torch, a plan built, saved, loaded and run.
"$vpy" - "$site" "$src" <<'EOF' || fail "the Python smoke test"
import pathlib, sys
site, src = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
import numpy as np
import torch
import opforge
pkg = pathlib.Path(opforge.__file__).resolve().parent
assert pkg == site / "opforge", f"opforge imported from {pkg}, not the venv's {site / 'opforge'}"
for name, m in list(sys.modules.items()):
    f = getattr(m, "__file__", None) or ""
    assert not (name.split(".")[0] == "opforge" and site not in pathlib.Path(f).resolve().parents), (name, f)
assert opforge.cmake_prefix_path == str(pkg) and opforge.build_dir() == pkg, opforge.cmake_prefix_path
x = torch.randn(2, 3, 8, 9)
y = torch.ops.example.circ_pad_plugin(x, pads=[1, 2, 3, 4])
want = np.pad(x.numpy(), ((0, 0), (0, 0), (3, 4), (1, 2)), mode="wrap")
assert y.shape == want.shape and np.array_equal(y.numpy(), want), (y.shape, want.shape)
print("ok: import opforge from the venv; torch.ops.example.circ_pad_plugin == numpy wrap padding")
if torch.cuda.is_available():  # the GPU machine: the same op on CUDA tensors (the wheel's CUDA tactic)
    xc = torch.randn(2, 3, 8, 9, device="cuda")
    yc = torch.ops.example.circ_pad_plugin(xc, pads=[1, 2, 3, 4])
    want = np.pad(xc.cpu().numpy(), ((0, 0), (0, 0), (3, 4), (1, 2)), mode="wrap")
    assert yc.is_cuda and np.array_equal(yc.cpu().numpy(), want)
    print("ok: torch.ops.example.circ_pad_plugin on CUDA == numpy wrap padding")
else:
    print("note: no CUDA device here: the CUDA step is skipped")
profile = {"x": ((1, 3, 32, 32), (2, 3, 32, 32), (4, 3, 32, 32))}
e = opforge.Engine.build(src / "examples" / "circ_pad" / "circ_pad.onnx", profiles=profile, device="cpu")
e.save("circ_pad.plan")
e2 = opforge.Engine.load("circ_pad.plan")
x = np.random.default_rng(7).standard_normal((3, 3, 32, 32)).astype(np.float32)
for engine in (e, e2):
    y = engine.run({"x": x})["y"]
    assert np.array_equal(y, np.pad(x, ((0, 0), (0, 0), (2, 2), (1, 1)), mode="wrap"))
print("ok: a plan built, saved, loaded and run from the wheel, y == numpy")
maps = {l.split()[-1] for l in open("/proc/self/maps") if "libopforge" in l or "/opforge/_C." in l}
names = {pathlib.Path(m).name for m in maps}
assert {"libopforge.so", "libopforge_ops.so"} <= names and any(n.startswith("_C.") for n in names), names
assert all(site in pathlib.Path(m).resolve().parents for m in maps), maps
print("ok: every opforge library mapped is the venv's: " + ", ".join(sorted(pathlib.Path(m).name for m in maps)))
EOF

# 5. find_package(opforge) through opforge.cmake_prefix_path: the out-of-tree example's op library
#    built against the wheel (the library only; sdk.out_of_tree runs its tests), then a torch op.
prefix=$("$vpy" -c "import opforge; print(opforge.cmake_prefix_path)")
[ "$prefix" = "$site/opforge" ] || fail "opforge.cmake_prefix_path is $prefix"
cmake -S "$src/examples/out_of_tree" -B "$tmp/ext" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DEXT_CUDA=OFF \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/ext-configure.log" 2>&1 || { cat "$tmp/ext-configure.log"; fail "configure"; }
grep -q "opforge_DIR:PATH=$prefix/lib/cmake/opforge" "$tmp/ext/CMakeCache.txt" || fail "opforge was not found in the wheel"
cmake --build "$tmp/ext" --target ext_ops >"$tmp/ext-build.log" 2>&1 || { cat "$tmp/ext-build.log"; fail "build ext_ops"; }
OPFORGE_EXT_LIB=$tmp/ext/lib/libext_ops.so "$vpy" -c "
import os, torch, opforge
opforge.load_library(os.environ['OPFORGE_EXT_LIB'])
a, b = torch.randn(8, 64), torch.randn(8, 64)
y = torch.ops.ext.silu_mul(a, b)
want = torch.nn.functional.silu(a.double()) * b.double()
err = (y.double() - want).abs().max().item()
assert y.shape == (8, 64) and err <= 1e-5, err
print('ok: find_package(opforge) via opforge.cmake_prefix_path; opforge.load_library(libext_ops.so): '
      'torch.ops.ext.silu_mul == F.silu(a) * b, max error %.3g' % err)" || fail "the user's op library from the wheel"

# 6. Another torch version than the wheel was built for (the recorded one faked): a clear ImportError.
info=$site/opforge/_wheel_info.py
built=$("$vpy" -c "import torch; print(torch.__version__)")
grep -q "^TORCH_VERSION = '$built'$" "$info" || fail "_wheel_info.py does not record torch $built: $(cat "$info")"
sed -i "s/^TORCH_VERSION = .*/TORCH_VERSION = '1.13.0+cu117'/" "$info"
if "$vpy" -c "import opforge" >mismatch.log 2>&1; then fail "import opforge succeeded with another recorded torch"; fi
grep -q "ImportError: opforge: this opforge wheel was built against torch 1.13.0+cu117, but torch $built is imported" \
  mismatch.log || { cat mismatch.log; fail "no clear torch version message"; }
grep -qi "undefined symbol" mismatch.log && fail "a symbol lookup error instead of the version message"
echo "ok: torch mismatch refused: $(grep -m1 "^ImportError" mismatch.log | cut -c1-200)"

echo "PASS: the wheel built from the build tree, installed into a fresh venv and used there ($((SECONDS - t0)) s)"
