"""Builds the `opforge` Python package: the pure-Python part (PyTorch ops, ONNX export, engine
wrapper) and the extension `opforge._C`, a thin pybind11 binding of libopforge's public headers.

The extension compiles only python/opforge/csrc/*.cc against ../include and links the already
built libopforge.so; no kernel is compiled here (ops run from libopforge_ops.so through the
registry). Build libopforge first (scripts/build.sh), then, from the repository root:

    OPFORGE_BUILD_DIR=build python3 -m pip install --no-build-isolation -e python/

OPFORGE_BUILD_DIR is the CMake build tree (or a copy of its bin/ and lib/); a relative path is taken from
the repository root; default: <repo>/build.
It is recorded in opforge/_build_info.py, and the variable overrides it at run time.
"""
import os
import pathlib
import sys

from setuptools import find_packages, setup

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def build_dir():
    d = os.environ.get("OPFORGE_BUILD_DIR") or os.environ.get("BUILD_DIR") or str(ROOT / "build")
    p = pathlib.Path(d)
    if not p.is_absolute():  # relative to the repository root (pip runs this file from python/)
        p = (ROOT / p).resolve()
    return p


def fail(msg):
    sys.stderr.write(f"\nopforge setup: error: {msg}\n\n")
    sys.exit(1)


try:
    import torch  # noqa: F401
    from torch.utils.cpp_extension import BuildExtension, CppExtension
except ImportError as e:  # pragma: no cover - reported to the user
    fail(f"PyTorch is needed to build opforge's extension ({e}); install it first "
         "(python3 -m pip install -r python/requirements.txt) and build with --no-build-isolation")

if not torch._C._GLIBCXX_USE_CXX11_ABI:
    fail("this PyTorch was built with the pre-C++11 libstdc++ ABI; opforge's extension passes std::string "
         "to libopforge.so (new ABI), so it needs a PyTorch built with _GLIBCXX_USE_CXX11_ABI=1")

bdir = build_dir()
libdir = bdir / "lib"
include = ROOT / "include"
if not (libdir / "libopforge.so").exists():
    fail(f"{libdir / 'libopforge.so'} does not exist: build opforge first (scripts/build.sh, or "
         f"`cmake -S . -B build -G Ninja && ninja -C build opforge opforge_ops`) and point OPFORGE_BUILD_DIR "
         f"at the build tree")

# Where the package finds libopforge.so and libopforge_ops.so at run time (OPFORGE_BUILD_DIR
# overrides it).
(HERE / "opforge" / "_build_info.py").write_text(
    "# Written by python/setup.py at build time; OPFORGE_BUILD_DIR overrides it at run time.\n"
    f"BUILD_DIR = {str(bdir)!r}\n")

sources = sorted(str(p.relative_to(HERE)) for p in (HERE / "opforge" / "csrc").glob("*.cc"))
ext = CppExtension(
    name="opforge._C",
    sources=sources,
    include_dirs=[str(include)],
    library_dirs=[str(libdir)],
    libraries=["opforge"],
    extra_compile_args=["-std=c++20", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"],
    # rpath: find libopforge.so at run time; rpath-link: let the linker find the libraries it needs in
    # lib/ too (copies of libprotobuf / libonnx_proto on a machine without the Debian packages).
    extra_link_args=[f"-Wl,-rpath,{libdir}", f"-Wl,-rpath-link,{libdir}"],
)

setup(
    name="opforge",
    version="0.1.0",
    description="opforge: custom GPU operators defined once in C++ — PyTorch ops, ONNX export, engine bindings",
    packages=find_packages(include=["opforge", "opforge.*"]),
    package_data={"opforge": ["py.typed"]},
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    python_requires=">=3.10",
    install_requires=["numpy", "torch", "onnx"],
    zip_safe=False,
)
