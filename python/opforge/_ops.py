"""The ops of the loaded op libraries, as Python objects (schema, attribute checks, symbolic shapes,
kernels). Everything here comes from the C++ definitions through opforge._C; nothing is restated.
"""
import os
import threading

from . import _errors, _shapes
from ._naming import torch_namespace
from ._native import load_extension

_C = load_extension()
_C._set_error_types(_errors.BY_CODE)

_LOCK = threading.RLock()
_OPS = {}            # key -> OpDef (plugin ops of the loaded libraries)
PROBLEMS = {}        # "key vN" -> why this op is not available from Python
_LOAD_HOOKS = []     # called with the list of new OpDefs after a library is loaded
_COMMIT_HOOKS = []   # register pending ops defined in Python (opforge.plugin.commit)


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def attrs_key(attrs):
    """A hashable key of an attribute dict (lists become tuples; None values are left out)."""
    return tuple(sorted((k, _freeze(v)) for k, v in attrs.items() if v is not None))


class OpDef:
    """One op of a loaded op library: its schema and its C++ shape rule and kernels."""

    def __init__(self, c_op):
        self._c = c_op
        info = c_op.info()
        self.namespace = info["namespace"]
        self.name = info["name"]
        self.version = info["version"]
        self.key = info["key"]
        self.doc = info["doc"]
        self.backward = info["backward"]
        self.aliases = list(info["aliases"])
        self.elementwise = info["elementwise"]
        self.kind = info["kind"]  # the layer kind profiles group time by ("conv", "gemm", ..., "other")
        self.library = info["library"]
        self.inputs = info["inputs"]
        self.outputs = info["outputs"]
        self.attrs = info["attrs"]
        self.tactics = [tuple(t) for t in info["tactics"]]  # (id, name, "cpu" | "cuda")
        self.tf32_tactics = list(info["tf32_tactics"])  # ids of the tactics that may use TF32
        self.combos = info["combos"]
        self._kernels = {}

    def __repr__(self):
        return f"<opforge op {self.key} v{self.version} from {self.library}>"

    @property
    def has_cuda_tactics(self):
        return any(t[2] == "cuda" for t in self.tactics)

    def node_name(self):
        """The name messages give a call from Python: torch.ops.<namespace>.<name>."""
        return f"torch.ops.{torch_namespace(self.namespace)}.{self.name}"

    def validate_attrs(self, attrs):
        """Checked attributes with defaults filled in; InvalidArgumentError names the attribute."""
        return self._c.validate_attrs(dict(attrs), self.node_name())

    def infer(self, attrs, inputs, prefix="", check_combos=True, node=None):
        """The shape rule on symbolic inputs: inputs are None or (dtype code, dims), each dim an
        int, a symbol name or an expression tuple. Returns outputs (dtype, dims expressions, alias,
        size_tensor), size tensors, assertions, and with check_combos the matching combination."""
        return self._c.infer(dict(attrs), list(inputs), node or self.node_name(), prefix or (self.node_name() + "#"),
                             check_combos)

    def kernel(self, attrs):
        """A kernel instance for these attributes (cached)."""
        k = attrs_key(attrs)
        kern = self._kernels.get(k)
        if kern is None:
            with _LOCK:
                kern = self._kernels.get(k)
                if kern is None:
                    kern = self._c.kernel({n: v for n, v in attrs.items() if v is not None}, self.node_name())
                    if len(self._kernels) > 512:
                        self._kernels.clear()
                    self._kernels[k] = kern
        return kern

    def accepted_types(self):
        """Human-readable list of the accepted type combinations."""
        return " | ".join(c["text"] for c in self.combos) or "any type the shape rule gives"


def _refresh():
    new = []
    with _LOCK:
        for c_op in _C.ops(False):
            key = c_op.key
            if key not in _OPS:
                _OPS[key] = OpDef(c_op)
                new.append(_OPS[key])
            else:
                version = c_op.info()["version"]
                if version != _OPS[key].version:
                    PROBLEMS[f"{key} v{version}"] = (f"not available from Python: {key} v{_OPS[key].version} "
                                                     f"(from {_OPS[key].library}) already has the name")
    return new


def load_library(path):
    """Loads an op library (like `opforge exec --plugins=PATH`) and registers its ops with PyTorch.
    Loading the same file twice is a no-op. Errors (missing file, not an op library, ABI version,
    duplicate op) raise an OpforgeError subclass with the engine's message."""
    _C.load_library(str(path))
    new = _refresh()
    for hook in list(_LOAD_HOOKS):
        hook(new)
    return [op.key for op in new]


def commit_pending():
    """Registers the ops defined in Python that are not registered yet (opforge.plugin)."""
    for hook in list(_COMMIT_HOOKS):
        hook()


def ops():
    """Every op of the loaded op libraries and of Python modules (built-in ONNX ops excluded), by
    key."""
    commit_pending()
    _refresh()
    return dict(_OPS)


def find(key):
    """The op with key "ns::name" (or an alias), or None."""
    commit_pending()
    _refresh()
    if key in _OPS:
        return _OPS[key]
    for op in _OPS.values():
        if key in op.aliases:
            return op
    return None


def libraries():
    """The loaded op libraries: [{path, name, version, num_ops}] (Python modules as
    "python:<module>")."""
    commit_pending()
    return _C.libraries()


def _is_library(p):
    """A path (an op library) rather than a module name."""
    s = os.fspath(p)
    return not isinstance(p, str) or s.endswith(".so") or ".so." in s or os.sep in s or os.path.isfile(s)


def load_plugins(*names):
    """Loads op libraries (paths: like load_library) and Python modules that define ops with
    opforge.plugin (module names: imported, and their ops registered). Returns the new op keys.
    An import failure raises NotFoundError naming the module."""
    keys = []
    for n in names:
        if isinstance(n, (list, tuple)):
            keys += load_plugins(*n)
        elif _is_library(n):
            keys += load_library(os.fspath(n))
        else:
            import_module(n, "")
            before = set(_OPS)
            commit_pending()
            _refresh()
            keys += [k for k in _OPS if k not in before]
    return keys


def import_module(name, why):
    """Imports the Python module `name` (a module defining ops); NotFoundError on failure."""
    import importlib
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - reported with the module's name
        raise _errors.NotFoundError(f"{why}cannot import Python module {name!r} ({type(e).__name__}: {e}); it "
                                    f"defines ops with opforge.plugin: put it on sys.path (PYTHONPATH)") from e


def dtype_name(code):
    return _shapes.dtype_name(code)
