"""Finds the opforge build (libopforge.so, libopforge_ops.so) and loads the extension opforge._C.

Installed from the wheel (opforge/_wheel_info.py exists), the package folder is the install
prefix: opforge/lib, opforge/bin, opforge/include, opforge/lib/cmake/opforge; OPFORGE_BUILD_DIR is
not read, and the torch imported must be the one the extension was built against.
The development install (python/ in editable mode): the build tree is $OPFORGE_BUILD_DIR, else the
one recorded when the extension was built (opforge/_build_info.py), else <repository>/build.
lib/ may also hold copies of third-party libraries libopforge.so needs (libprotobuf.so.32,
libonnx_proto.so.1 on a machine without the Debian packages): versioned libraries there
(lib*.so.N) are loaded first, so the copy is used.
"""
import ctypes
import os
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent
REPO = PACKAGE.parents[1]


def wheel_info():
    """The module opforge._wheel_info (TORCH_VERSION, VERSION) when this package is the wheel, else None."""
    try:
        from . import _wheel_info  # written by the repository root's setup.py (the wheel)
    except ImportError:
        return None
    return _wheel_info


def cmake_prefix_path():
    """The install prefix inside the wheel (CMAKE_PREFIX_PATH for find_package(opforge)); None in the
    development install (there, `cmake --install build --prefix P` makes one)."""
    return str(PACKAGE) if wheel_info() is not None else None

BUILD_HINT = (
    "Build it from the repository root:\n"
    "    scripts/build.sh                     # libopforge.so and libopforge_ops.so in build/\n"
    "    OPFORGE_BUILD_DIR=build python3 -m pip install --no-build-isolation -e python/\n"
    "(OPFORGE_BUILD_DIR names the CMake build tree, or a copy of its bin/ and lib/; see python/README.md)")


def build_dir() -> pathlib.Path:
    """The folder holding lib/ and bin/: the package folder for the wheel, else the build tree."""
    if wheel_info() is not None:
        return PACKAGE
    env = os.environ.get("OPFORGE_BUILD_DIR")
    if env:
        return pathlib.Path(env).resolve()
    try:
        from . import _build_info  # written by setup.py
        return pathlib.Path(_build_info.BUILD_DIR)
    except ImportError:
        return REPO / "build"


def _hint() -> str:
    if wheel_info() is not None:
        return (f"(the opforge wheel installed at {PACKAGE} is incomplete or damaged; reinstall it: "
                f"python3 -m pip install --force-reinstall <the opforge wheel>)")
    return BUILD_HINT


def library_dir() -> pathlib.Path:
    return build_dir() / "lib"


def default_ops_library() -> pathlib.Path:
    return library_dir() / "libopforge_ops.so"


def _elf_needed_and_soname(path):
    """(DT_NEEDED names, DT_SONAME) of a 64-bit little-endian ELF shared object; ([], None) when the
    file is something else."""
    import struct
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError:
        return [], None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return [], None
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return [], None
    entries, strtab = [], None
    for off in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, val = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == 5:
            strtab = val
        entries.append((tag, val))
    if strtab is None:
        return [], None
    base = next((o + strtab - v for v, o, n in loads if v <= strtab < v + n), None)
    if base is None:
        return [], None

    def cstr(at):
        end = data.index(b"\0", base + at)
        return data[base + at:end].decode(errors="replace")

    return [cstr(v) for t, v in entries if t == 1], next((cstr(v) for t, v in entries if t == 14), None)


def _preload(libdir: pathlib.Path):
    core = libdir / "libopforge.so"
    if not core.exists():
        raise ImportError(f"opforge: {core} does not exist (build directory {libdir.parent}).\n{_hint()}")
    # Third-party libraries copied next to libopforge.so (versioned names) are loaded before it,
    # each after the copies it depends on, so that every one of them resolves to the copies (by
    # soname) rather than to another version elsewhere on the system.
    libs = {}
    for p in sorted(libdir.glob("lib*.so.*")):
        needed, soname = _elf_needed_and_soname(p)
        libs[soname or p.name] = (p, needed)
    loaded = set()

    def load(name, stack=()):
        if name in loaded or name not in libs or name in stack:
            return
        path, needed = libs[name]
        for dep in needed:
            load(dep, stack + (name,))
        loaded.add(name)
        try:
            ctypes.CDLL(str(path))
        except OSError:
            pass  # not loadable here; libopforge.so's own lookup reports what is missing

    for name in sorted(libs):
        load(name)
    try:
        ctypes.CDLL(str(core))
    except OSError as e:
        raise ImportError(f"opforge: cannot load {core}: {e}\n{_hint()}") from e


def _public_version(v: str) -> str:
    return v.split("+", 1)[0]


def check_torch_version(built: str, imported: str):
    """The wheel's opforge._C links libtorch of the version it was built against: another version
    (the local part, +cpu/+cu124, aside) is refused with both versions named, not a symbol lookup error."""
    if _public_version(built) != _public_version(imported):
        raise ImportError(
            f"opforge: this opforge wheel was built against torch {built}, but torch {imported} is imported; "
            f"its extension opforge._C does not load with another torch version. Install torch=={_public_version(built)}, "
            f"or rebuild the wheel against this torch (python3 -m pip wheel --no-build-isolation . in the "
            f"opforge repository).")


def load_extension():
    """Returns the module opforge._C, or raises ImportError saying how to build it."""
    import torch  # noqa: F401  (the extension is built by torch.utils.cpp_extension; load torch's libraries first)

    info = wheel_info()
    if info is not None:
        check_torch_version(info.TORCH_VERSION, torch.__version__)
    _preload(library_dir())
    try:
        from . import _C
    except ImportError as e:
        raise ImportError(f"opforge: the C++ extension opforge._C is not built or does not load ({e}).\n{_hint()}") from e
    return _C
