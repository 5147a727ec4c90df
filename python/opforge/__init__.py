"""opforge: custom GPU operators defined once in C++.

`import opforge` loads libopforge (the engine) through the extension opforge._C, loads the contrib
op library libopforge_ops.so (OPFORGE_OPS_LIBRARY overrides the path; "none" skips it), and
registers every op of the loaded op libraries with PyTorch as torch.ops.<namespace>.<name>.

    opforge.load_library(path)          another op library (its ops become torch ops too)
    opforge.load_plugins("my_module")   a Python module defining ops with opforge.plugin (import
                                        opforge.plugin as ofp: @ofp.register / @ofp.impl / @ofp.autotune)
    opforge.ops()                       {key: OpDef} of the loaded op libraries
    opforge.torch.<op>(...)             seed-style wrappers (usable like MyOpFunction.apply)
    opforge.onnx.export(model, args, path, dynamo=True|False)
    opforge.Engine.build(onnx_path, plugins=[...], profiles=..., fp16=..., device=...)
    opforge.Network() / net.add_input / net.add_op / net.add_plugin / net.mark_output -> Engine.build(net, ...)
    opforge.Engine.load(plan) / engine.run({name: array}) / engine.save(path)
    opforge.cmake_prefix_path           the wheel's install prefix (CMAKE_PREFIX_PATH for
                                        find_package(opforge)); None in the development install
"""
import os as _os

from ._errors import (CorruptError, DeviceError, DTypeError, InternalError, InvalidArgumentError, IoError,  # noqa: F401
                      KernelError, NotFoundError, OpforgeError, OutOfRangeError, UnsupportedError, VersionError)
from ._native import build_dir, default_ops_library, library_dir  # noqa: F401
from ._native import cmake_prefix_path as _cmake_prefix_path
from ._ops import _C, OpDef, find, libraries, load_library, load_plugins, ops  # noqa: F401

__version__ = _C.version
cmake_prefix_path = _cmake_prefix_path()


def _load_default_ops():
    spec = _os.environ.get("OPFORGE_OPS_LIBRARY")
    if spec is not None and spec.lower() in ("", "none"):
        return
    path = spec or str(default_ops_library())
    if not _os.path.exists(path):
        raise ImportError(f"opforge: the contrib op library {path} does not exist. Build it (scripts/build.sh, or "
                          f"ninja -C <build> opforge_ops), point OPFORGE_BUILD_DIR at the build tree, or set "
                          f"OPFORGE_OPS_LIBRARY=none to start without it.")
    _C.load_library(path)


_load_default_ops()

from . import torch  # noqa: E402  (registers the ops with PyTorch)
from .engine import Engine  # noqa: E402
from .network import Network  # noqa: E402
from . import onnx  # noqa: E402

__all__ = ["Engine", "Network", "load_library", "load_plugins", "ops", "find", "libraries", "torch", "onnx", "OpDef", "OpforgeError",
           "InvalidArgumentError", "NotFoundError", "UnsupportedError", "IoError", "CorruptError", "VersionError",
           "OutOfRangeError", "KernelError", "InternalError", "DTypeError", "DeviceError", "build_dir", "cmake_prefix_path"]
