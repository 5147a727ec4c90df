"""Finds the opforge build (libopforge.so, libopforge_ops.so) and loads the extension opforge._C.

The build tree is $OPFORGE_BUILD_DIR, else the one recorded when the extension was built
(opforge/_build_info.py), else <repository>/build. Its lib/ may also hold copies of third-party
libraries libopforge.so needs (libprotobuf.so.32, libonnx_proto.so.1 on a machine without the
Debian packages): versioned libraries there (lib*.so.N) are loaded first, so the copy is used.
"""
import ctypes
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]

BUILD_HINT = (
    "Build it from the repository root:\n"
    "    scripts/build.sh                     # libopforge.so and libopforge_ops.so in build/\n"
    "    OPFORGE_BUILD_DIR=build python3 -m pip install --no-build-isolation -e python/\n"
    "(OPFORGE_BUILD_DIR names the CMake build tree, or a copy of its bin/ and lib/; see python/README.md)")


def build_dir() -> pathlib.Path:
    env = os.environ.get("OPFORGE_BUILD_DIR")
    if env:
        return pathlib.Path(env).resolve()
    try:
        from . import _build_info  # written by setup.py
        return pathlib.Path(_build_info.BUILD_DIR)
    except ImportError:
        return REPO / "build"


def library_dir() -> pathlib.Path:
    return build_dir() / "lib"


def default_ops_library() -> pathlib.Path:
    return library_dir() / "libopforge_ops.so"


def _preload(libdir: pathlib.Path):
    core = libdir / "libopforge.so"
    if not core.exists():
        raise ImportError(f"opforge: {core} does not exist (build directory {libdir.parent}).\n{BUILD_HINT}")
    # Third-party libraries copied next to libopforge.so (versioned names), before libopforge.so.
    for p in sorted(libdir.glob("lib*.so.*")):
        try:
            ctypes.CDLL(str(p))
        except OSError:
            pass  # not needed here or not loadable; libopforge.so's own lookup reports what is missing
    try:
        ctypes.CDLL(str(core))
    except OSError as e:
        raise ImportError(f"opforge: cannot load {core}: {e}\n{BUILD_HINT}") from e


def load_extension():
    """Returns the module opforge._C, or raises ImportError saying how to build it."""
    import torch  # noqa: F401  (the extension is built by torch.utils.cpp_extension; load torch's libraries first)

    _preload(library_dir())
    try:
        from . import _C
    except ImportError as e:
        raise ImportError(f"opforge: the C++ extension opforge._C is not built or does not load ({e}).\n{BUILD_HINT}") from e
    return _C
