"""The opforge pip package (a wheel): `pip wheel --no-build-isolation .` or `pip install --no-build-isolation .`
at the repository root.

setuptools drives CMake: the C++ libraries, the CLI and the CMake package are built by this
repository's CMakeLists.txt and installed (`cmake --install`) into the package folder, which is the
install prefix; then the extension opforge._C is compiled against the torch of the build
environment. The wheel holds:

    opforge/*.py ...                 the Python package (python/opforge)
    opforge/_C.*.so                  the extension (RUNPATH $ORIGIN/lib)
    opforge/bin/opforge              the CLI (the console script `opforge` runs it)
    opforge/bin/opforge-onnx-tests   the ONNX node-test runner
    opforge/lib/libopforge.so, libopforge_ops.so, libopforge_author.a (+ libopforge_harness.a)
    opforge/lib/cmake/opforge/       find_package(opforge): opforge.cmake_prefix_path
    opforge/include/opforge/*.h      the public headers
    opforge/_wheel_info.py           the torch version the extension was built against

Environment:
    OPFORGE_WHEEL_BUILD_DIR  an existing, configured CMake build tree of this repository to reuse
                             (its targets are brought up to date, a no-op when built; CI sets it so
                             that opforge is compiled once). Without it the wheel configures and
                             builds its own tree in <work> (Release, no tests).
    OPFORGE_WHEEL_NO_BUILD   1: install OPFORGE_WHEEL_BUILD_DIR as it is, without bringing it up to
                             date (tests/sdk/wheel.sh: a build there would relink the libraries
                             the tests running beside it load)
    OPFORGE_WHEEL_WORK_DIR   setuptools' build folder (default <repo>/build-wheel; never <repo>/build,
                             the development build tree)
    OPFORGE_WHEEL_CMAKE_ARGS extra arguments for the configure step of the wheel's own tree

The development install (the editable install of python/, pointed at a build tree) is
python/setup.py; this file does not touch python/ (no _build_info.py, no egg-info there).
Build isolation: the extension must be compiled against the torch it will be imported with, so
build with --no-build-isolation (as for PyTorch extensions). An isolated build (plain
`pip install .`) compiles against the torch pip downloads into the isolated environment; if the
installed torch differs, `import opforge` says so.
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent


def fail(msg):
    sys.stderr.write(f"\nopforge wheel: error: {msg}\n\n")
    sys.exit(1)


def project_version():
    m = re.search(r"project\(opforge VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        fail("no `project(opforge VERSION x.y.z` in CMakeLists.txt")
    return m.group(1)


def work_dir():
    d = pathlib.Path(os.environ.get("OPFORGE_WHEEL_WORK_DIR") or ROOT / "build-wheel")
    d = d if d.is_absolute() else (ROOT / d)
    if d.resolve() == (ROOT / "build").resolve():
        fail(f"OPFORGE_WHEEL_WORK_DIR={d} is the development build tree; choose another folder")
    d.mkdir(parents=True, exist_ok=True)
    return d.resolve()


def run(cmd, **kw):
    print("opforge wheel: " + " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    r = subprocess.run([str(c) for c in cmd], **kw)
    if r.returncode != 0:
        fail(f"`{' '.join(str(c) for c in cmd)}` failed with exit status {r.returncode}")


def cache_value(tree, name):
    cache = tree / "CMakeCache.txt"
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return None


def native_targets(tree):
    """The targets whose files `cmake --install` copies."""
    targets = ["opforge", "opforge_ops", "opforge_author", "opforge_cli", "opforge_onnx_tests"]
    if (cache_value(tree, "OPFORGE_TESTS") or "ON").upper() in ("ON", "1", "TRUE", "YES"):
        targets.append("opforge_harness")  # the op harness (opforge_add_op_test), installed with the tests
    return targets


def cmake_tree(work):
    """The CMake build tree to install from: OPFORGE_WHEEL_BUILD_DIR (brought up to date), or a
    tree of the wheel's own, configured and built here."""
    reuse = os.environ.get("OPFORGE_WHEEL_BUILD_DIR")
    if reuse:
        tree = pathlib.Path(reuse)
        tree = (tree if tree.is_absolute() else ROOT / tree).resolve()
        if not (tree / "CMakeCache.txt").exists():
            fail(f"OPFORGE_WHEEL_BUILD_DIR={reuse}: {tree / 'CMakeCache.txt'} does not exist (not a configured "
                 f"CMake build tree; scripts/build.sh makes one in build/)")
        home = cache_value(tree, "CMAKE_HOME_DIRECTORY")
        if home and pathlib.Path(home).resolve() != ROOT:
            fail(f"OPFORGE_WHEEL_BUILD_DIR={reuse} is a build tree of {home}, not of {ROOT}")
        print(f"opforge wheel: reusing the CMake build tree {tree}", flush=True)
    else:
        # The work folder itself (beside build/ by default), so that with the same flags a compiler
        # cache with base_dir finds build/'s objects (the same relative paths).
        tree = work
        if not (tree / "CMakeCache.txt").exists():
            run(["cmake", "-S", ROOT, "-B", tree, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DOPFORGE_TESTS=OFF",
                 *shlex.split(os.environ.get("OPFORGE_WHEEL_CMAKE_ARGS", ""))])
    if reuse and os.environ.get("OPFORGE_WHEEL_NO_BUILD") == "1":
        print(f"opforge wheel: OPFORGE_WHEEL_NO_BUILD=1: installing {tree} as it is", flush=True)
        return tree
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    run(["cmake", "--build", tree, "-j", jobs, "--target", *native_targets(tree)])
    return tree


class BuildPy(build_py):
    """The Python package without the development install's files (_build_info.py names a build
    tree), plus _wheel_info.py."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if m[:2] != ("opforge", "_build_info")]

    def run(self):
        super().run()
        import torch
        info = pathlib.Path(self.build_lib) / "opforge" / "_wheel_info.py"
        info.write_text("# Written by setup.py when the wheel was built: opforge._C was compiled against this torch.\n"
                        f"TORCH_VERSION = {torch.__version__!r}\n"
                        f"VERSION = {project_version()!r}\n")


class BuildExt(build_ext):
    """Installs the CMake build into the package folder (the prefix), then compiles opforge._C."""

    def run(self):
        if self.inplace:
            fail("the repository root builds the wheel only; the development (editable) install is python/ "
                 "(OPFORGE_BUILD_DIR=build python3 -m pip install --no-build-isolation -e python/)")
        try:
            import torch
        except ImportError as e:
            fail(f"PyTorch is needed to build opforge's extension ({e}); install it and build with "
                 f"--no-build-isolation")
        if not torch._C._GLIBCXX_USE_CXX11_ABI:
            fail("this PyTorch uses the pre-C++11 libstdc++ ABI; opforge._C passes std::string to libopforge.so "
                 "(new ABI)")
        prefix = pathlib.Path(self.build_lib).resolve() / "opforge"
        tree = cmake_tree(work_dir())
        run(["cmake", "--install", tree, "--prefix", prefix, "--strip"])  # no debug info in the wheel
        lib = prefix / "lib"
        # Copies of third-party libraries the build tree's lib/ holds (libprotobuf.so.32, libonnx_proto.so.1
        # on a machine without the Debian packages: python/README.md) travel with the wheel; opforge._native
        # loads them first, as from a build tree.
        for f in sorted((tree / "lib").glob("lib*.so.*")):
            shutil.copy2(f, lib / f.name)
            print(f"opforge wheel: bundled {f.name} from {tree / 'lib'}", flush=True)
        for ext in self.extensions:
            ext.library_dirs.append(str(lib))
            ext.extra_link_args += ["-Wl,-rpath,$ORIGIN/lib", f"-Wl,-rpath-link,{lib}"]
        super().run()


def extension():
    from torch.utils.cpp_extension import CppExtension
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "python" / "opforge" / "csrc").glob("*.cc"))
    # The public headers of the source tree: the same files the prefix installs (include/opforge),
    # named here by a fixed path so that a compiler cache finds them again.
    return CppExtension(name="opforge._C", sources=sources, include_dirs=[str(ROOT / "include")],
                        libraries=["opforge"],
                        extra_compile_args=["-std=c++20", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                                            "-fvisibility=hidden"])


def main():
    try:
        from torch.utils.cpp_extension import BuildExtension
    except ImportError as e:
        fail(f"PyTorch is needed to build opforge's extension ({e}); install it first "
             "(python3 -m pip install -r python/requirements.txt) and build with --no-build-isolation")
    work = work_dir()
    build_ext_cls = type("OpforgeBuildExt", (BuildExt, BuildExtension.with_options(use_ninja=True)), {})
    setup(
        version=project_version(),
        ext_modules=[extension()],
        cmdclass={"build_py": BuildPy, "build_ext": build_ext_cls},
        # setuptools' folders away from build/ (the development CMake tree) and python/.
        options={"build": {"build_base": str(work / "setuptools")},
                 "egg_info": {"egg_base": os.path.relpath(work, ROOT)}},
    )


main()
