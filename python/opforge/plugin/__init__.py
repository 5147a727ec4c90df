"""opforge.plugin: ops defined in Python, with the decorators of TensorRT's tensorrt.plugin.

    import numpy as np, numpy.typing as npt
    import opforge.plugin as ofp

    @ofp.register("pyexample::circ_pad_plugin")
    def circ_pad_desc(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
        out = inp0.like()
        for i in range(np.size(pads) // 2):
            out.shape_expr[inp0.ndim - i - 1] += int(pads[2 * i] + pads[2 * i + 1])
        return out

    @ofp.impl("pyexample::circ_pad_plugin")
    def circ_pad_impl(inp0: ofp.Tensor, pads: npt.NDArray[np.int32], outputs, stream) -> None:
        x = torch.as_tensor(inp0)                       # zero-copy (host or CUDA memory)
        torch.as_tensor(outputs[0]).copy_(torch.nn.functional.pad(x, pads.tolist(), mode="circular"))

An op is an opforge OpDef like the C++ ones: its shape rule is the register function computing
with opforge's DimExpr, its CPU tactic 0 (and, on CUDA, a CUDA tactic) is the impl, autotune
gives its type/format combinations (parsed by the engine's own combination parser) and its
tactics. It joins the registry, from the module that defines it ("python:<module>", the library
a plan records), when first needed: opforge.ops(), opforge.find(), Engine.build / Engine.load,
opforge.load_plugins(), or commit(). Decorating an op after that raises. Then it is
torch.ops.<ns>.<name>, and ONNX nodes with op_type <name> and domain (or attribute
plugin_namespace) <ns> import as it.

Attributes are typed by annotation: int, float, str, bool, bytes, and 1-D npt.NDArray[dtype]
for int8/16/32/64, float16/32/64 and bool. Lists and tuples are not supported (as in TensorRT):
use an NDArray. The autotune function is called once, when the op is committed, with symbolic
input descriptions and the attributes' defaults (None where there is none): its combinations
may not depend on shapes or attribute values.
"""
import inspect
import threading
import typing

import numpy as np

from .. import _errors, _ops
from .._ops import _C
from ._types import (AutoTuneCombination, DataType, DimExpr, KernelLaunchParams, ShapeExprs, SizeTensorDesc, SymExprs,
                     SymFloat32, SymFloat64, SymInt32, SymInt64, SymIntExprs, Tensor, TensorDesc, _STATE, cdiv, dtype_of,
                     from_shape_expr, max, min, size_tensor)

from ..network import op  # noqa: E402  (ofp.op.<ns>.<name>(...) for Network.add_plugin)

__all__ = ["op", "register", "impl", "aot_impl", "autotune", "commit", "TensorDesc", "Tensor", "SizeTensorDesc",
           "ShapeExprs", "DimExpr", "DataType", "AutoTuneCombination", "KernelLaunchParams", "SymExprs", "SymIntExprs",
           "SymInt32", "SymInt64", "SymFloat32", "SymFloat64", "cdiv", "max", "min", "from_shape_expr", "size_tensor",
           "registered", "torch_stream", "lower"]

_SCALARS = {int: 1, float: 2, str: 3, bool: 4, bytes: 5}
_ARRAYS = {np.int8: 6, np.int16: 7, np.int32: 8, np.int64: 9, np.float16: 10, np.float32: 11, np.float64: 12,
           np.bool_: 13}
_ARRAY_DTYPES = {v: k for k, v in _ARRAYS.items()}
_SUPPORTED = ("int, float, str, bool, bytes, or a 1-D npt.NDArray[dtype] with dtype one of np.int8, np.int16, "
              "np.int32, np.int64, np.float16, np.float32, np.float64, np.bool_")

_LOCK = threading.RLock()
_PENDING = []  # _Op not yet in the registry, in definition order
_COMMITTED = {}  # key -> _Op in the registry


def _where(fn):
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"{getattr(fn, '__qualname__', repr(fn))}{where}"


def _hints(fn, what):
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable string annotations: take them as written
        return dict(getattr(fn, "__annotations__", {}))


def _array_dtype(ann):
    """The NumPy scalar type of npt.NDArray[dtype], or None."""
    origin = typing.get_origin(ann)
    if origin is not np.ndarray:
        # Newer NumPy: NDArray is a type alias (`type NDArray[T] = ndarray[..., dtype[T]]`).
        if getattr(origin, "__name__", None) == "NDArray" and hasattr(origin, "__value__"):
            args = typing.get_args(ann)
            return args[0] if len(args) == 1 and args[0] in _ARRAYS else False
        return None
    args = typing.get_args(ann)
    if len(args) == 2:
        inner = typing.get_args(args[1])
        if inner and inner[0] in _ARRAYS:
            return inner[0]
    return False


class _Attr:
    def __init__(self, op_key, fn, param, ann):
        self.name = param.name
        self.annotation = ann
        where = f"op {op_key}: register function {_where(fn)}: attribute '{param.name}'"
        if ann is inspect.Parameter.empty:
            raise _errors.InvalidArgumentError(f"{where} has no annotation; annotate inputs with ofp.TensorDesc and "
                                               f"attributes with {_SUPPORTED}")
        origin = typing.get_origin(ann)
        if ann in (list, tuple) or origin in (list, tuple) or origin is typing.Union:
            raise _errors.UnsupportedError(f"{where} is annotated {ann!r}: list and tuple attributes are not "
                                           f"supported (as in TensorRT); use a 1-D npt.NDArray[dtype], e.g. "
                                           f"npt.NDArray[np.int32]")
        arr = _array_dtype(ann)
        if arr is False:
            raise _errors.UnsupportedError(f"{where} is annotated {ann!r}: an NDArray attribute needs a dtype among "
                                           f"np.int8/16/32/64, np.float16/32/64, np.bool_ (npt.NDArray[np.int32])")
        if arr is not None:
            self.type_id, self.np_dtype = _ARRAYS[arr], np.dtype(arr)
        elif ann in _SCALARS and isinstance(ann, type):
            self.type_id, self.np_dtype = _SCALARS[ann], None
        else:
            raise _errors.UnsupportedError(f"{where} is annotated {ann!r}, which is not an attribute type; "
                                           f"supported: {_SUPPORTED}")
        self.has_default = param.default is not inspect.Parameter.empty
        self.default = param.default if self.has_default else None
        if self.has_default and self.np_dtype is not None:
            self.default = np.asarray(self.default, dtype=self.np_dtype).reshape(-1).tolist()

    def value(self, v):
        """The value a user function gets: NumPy arrays for array attributes."""
        if self.np_dtype is not None:
            return np.asarray(v if v is not None else [], dtype=self.np_dtype).reshape(-1)
        if v is not None and self.type_id == 5 and isinstance(v, str):
            return v.encode("latin-1")
        return v

    def spec(self):
        return (self.name, self.type_id, self.has_default, self.default, "")


def _split_key(key, what):
    if not isinstance(key, str) or "::" not in key or not key.rsplit("::", 1)[0] or not key.rsplit("::", 1)[1]:
        raise _errors.InvalidArgumentError(f"{what}: the op key is \"namespace::name\" (e.g. \"example::circ_pad\"), "
                                           f"got {key!r}")
    return key.rsplit("::", 1)


class _Op:
    """One op defined in Python: its functions and what their signatures declare."""

    def __init__(self, key, fn):
        self.key = key
        self.namespace, self.name = _split_key(key, f"register function {_where(fn)}")
        self.register_fn = fn
        self.module = getattr(fn, "__module__", None) or "__main__"
        self.impl_fn = None
        self.aot_fn = None
        self.autotune_fn = None
        self.committed = False
        hints = _hints(fn, "register")
        self.inputs, self.attrs, self.params = [], [], []
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise _errors.UnsupportedError(f"op {key}: register function {_where(fn)}: parameter '{p.name}' is "
                                               f"variadic; declare each input and attribute by name")
            ann = hints.get(p.name, p.annotation)
            if ann is TensorDesc:
                self.inputs.append(p.name)
                self.params.append(("input", p.name))
            else:
                self.attrs.append(_Attr(key, fn, p, ann))
                self.params.append(("attr", p.name))
        if not self.inputs:
            raise _errors.InvalidArgumentError(f"op {key}: register function {_where(fn)} declares no input (a "
                                               f"parameter annotated ofp.TensorDesc)")
        self.attr_by_name = {a.name: a for a in self.attrs}
        ret = hints.get("return", inspect.Parameter.empty)
        if ret is TensorDesc or ret is SizeTensorDesc:
            self.num_outputs = 1
        elif typing.get_origin(ret) is tuple and typing.get_args(ret) and Ellipsis not in typing.get_args(ret) and \
                all(a in (TensorDesc, SizeTensorDesc) for a in typing.get_args(ret)):
            self.num_outputs = len(typing.get_args(ret))
        else:
            raise _errors.InvalidArgumentError(f"op {key}: register function {_where(fn)} must be annotated to return "
                                               f"ofp.TensorDesc or Tuple[ofp.TensorDesc, ...] with one entry per "
                                               f"output (got {ret!r})")

    # ---- the functions the engine calls (from C++, with the GIL) ------------------------------------
    def _call_args(self, params, inputs, attrs, extra):
        args, it = [], iter(inputs)
        for kind, name in params:
            if kind == "input":
                args.append(next(it))
            elif kind == "attr":
                args.append(self.attr_by_name[name].value(attrs.get(name)))
            else:
                args.append(extra[kind])
        return args

    def shape(self, ctx, attrs):
        prev = getattr(_STATE, "ctx", None)
        _STATE.ctx = ctx
        fn = self.register_fn
        try:
            descs = []
            for i in range(len(self.inputs)):
                t = ctx.input(i)
                if t is None:
                    raise _errors.InvalidArgumentError(f"input {i} ('{self.inputs[i]}') is missing")
                code, dims, source = t
                try:
                    dtype = DataType(code)
                except ValueError:
                    dtype = DataType.FLOAT32 if code == 0 else code
                descs.append(TensorDesc(dtype, dims, _source=source))
            res = fn(*self._call_args(self.params, descs, attrs, {}))
        except Exception as e:  # noqa: BLE001 - every failure of user code becomes an opforge error
            cls = type(e) if isinstance(e, _errors.OpforgeError) else _errors.InvalidArgumentError
            raise cls(f"register function {_where(fn)} raised {type(e).__name__}: {e}") from e
        finally:
            _STATE.ctx = prev
        outs = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        if len(outs) != self.num_outputs:
            raise _errors.InvalidArgumentError(f"register function {_where(fn)} returned {len(outs)} output(s); its "
                                               f"return annotation declares {self.num_outputs}")
        answer = []
        for k, o in enumerate(outs):
            if not isinstance(o, (TensorDesc, SizeTensorDesc)):
                raise _errors.InvalidArgumentError(f"register function {_where(fn)}: output {k} is "
                                                   f"{type(o).__name__}, not an ofp.TensorDesc")
            answer.append(o._answer())
        return answer

    def run(self, tactic, ins, outs, attrs, stream):
        fn = self.impl_fn
        if fn is None:
            raise _errors.UnsupportedError(
                f"op {self.key} has only an aot_impl ({_where(self.aot_fn)}): its kernels run only in a CUDA plan, "
                f"where opforge.Engine.build replaces the node by an opforge::AotKernel layer; define an "
                f"@ofp.impl({self.key!r}) to run it on the CPU or through torch.ops")
        try:
            inputs = [None if t is None else Tensor(*t) for t in ins]
            outputs = tuple(Tensor(*t) for t in outs)
            fn(*self._call_args(self.impl_params, inputs, attrs,
                                {"outputs": outputs, "stream": int(stream), "tactic": int(tactic)}))
        except Exception as e:  # noqa: BLE001 - every failure of user code becomes an opforge error
            raise _errors.KernelError(f"impl function {_where(fn)} of op {self.key} raised {type(e).__name__}: "
                                      f"{e}") from e

    # ---- impl and autotune -----------------------------------------------------------------------------
    def set_impl(self, fn):
        hints = _hints(fn, "impl")
        params, n_in = [], 0
        for p in inspect.signature(fn).parameters.values():
            ann = hints.get(p.name, p.annotation)
            if p.name in ("outputs", "stream", "tactic"):
                params.append((p.name, p.name))
            elif ann is Tensor:
                params.append(("input", p.name))
                n_in += 1
            elif p.name in self.attr_by_name:
                declared = self.attr_by_name[p.name]
                if ann is not inspect.Parameter.empty and _Attr(self.key, fn, p, ann).type_id != declared.type_id:
                    raise _errors.InvalidArgumentError(
                        f"op {self.key}: impl function {_where(fn)}: attribute '{p.name}' is annotated {ann!r}, but "
                        f"register function {_where(self.register_fn)} declares it {declared.annotation!r}")
                params.append(("attr", p.name))
            else:
                raise _errors.InvalidArgumentError(
                    f"op {self.key}: impl function {_where(fn)}: parameter '{p.name}' is neither an input (annotated "
                    f"ofp.Tensor), an attribute that register function {_where(self.register_fn)} declares "
                    f"({', '.join(a.name for a in self.attrs) or 'none'}), nor outputs, stream or tactic")
        if n_in != len(self.inputs):
            raise _errors.InvalidArgumentError(f"op {self.key}: impl function {_where(fn)} takes {n_in} input(s) "
                                               f"(parameters annotated ofp.Tensor); the register function declares "
                                               f"{len(self.inputs)} ({', '.join(self.inputs)})")
        if not any(k == "outputs" for k, _ in params):
            raise _errors.InvalidArgumentError(f"op {self.key}: impl function {_where(fn)} has no parameter 'outputs' "
                                               f"(the tuple of output tensors it writes)")
        self.impl_fn, self.impl_params = fn, params
        self.impl_attrs = [n for k, n in params if k == "attr"]

    def set_aot_impl(self, fn):
        """(input TensorDescs..., attributes..., outputs, tactic) -> (kernel name, PTX or cubin,
        KernelLaunchParams, extra args), or a list of such tuples (launches in order)."""
        hints = _hints(fn, "aot_impl")
        params, n_in = [], 0
        for p in inspect.signature(fn).parameters.values():
            ann = hints.get(p.name, p.annotation)
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise _errors.InvalidArgumentError(f"op {self.key}: aot_impl function {_where(fn)}: parameter "
                                                   f"'{p.name}' is variadic; declare each input and attribute by name")
            if p.name in ("outputs", "tactic"):
                params.append((p.name, p.name))
            elif ann is TensorDesc:
                params.append(("input", p.name))
                n_in += 1
            elif p.name in self.attr_by_name:
                declared = self.attr_by_name[p.name]
                if ann is not inspect.Parameter.empty and _Attr(self.key, fn, p, ann).type_id != declared.type_id:
                    raise _errors.InvalidArgumentError(
                        f"op {self.key}: aot_impl function {_where(fn)}: attribute '{p.name}' is annotated {ann!r}, "
                        f"but register function {_where(self.register_fn)} declares it {declared.annotation!r}")
                params.append(("attr", p.name))
            else:
                raise _errors.InvalidArgumentError(
                    f"op {self.key}: aot_impl function {_where(fn)}: parameter '{p.name}' is neither an input "
                    f"(annotated ofp.TensorDesc), an attribute that register function {_where(self.register_fn)} "
                    f"declares ({', '.join(a.name for a in self.attrs) or 'none'}), nor outputs or tactic")
        if n_in != len(self.inputs):
            raise _errors.InvalidArgumentError(f"op {self.key}: aot_impl function {_where(fn)} takes {n_in} input(s) "
                                               f"(parameters annotated ofp.TensorDesc); the register function "
                                               f"declares {len(self.inputs)} ({', '.join(self.inputs)})")
        if not any(k == "outputs" for k, _ in params):
            raise _errors.InvalidArgumentError(f"op {self.key}: aot_impl function {_where(fn)} has no parameter "
                                               f"'outputs' (the output TensorDescs)")
        self.aot_fn, self.aot_params = fn, params

    def combinations(self):
        """[(combo tuple for C++, user tactics)] from the autotune function, checked by the C++ parser."""
        if self.autotune_fn is None:
            return []
        fn = self.autotune_fn
        placeholders = [TensorDesc(DataType.FLOAT32, (), _source=i) for i in range(len(self.inputs))]
        extra = {"outputs": tuple(TensorDesc() for _ in range(self.num_outputs))}
        params = []
        for p in inspect.signature(fn).parameters.values():
            if p.name == "outputs":
                params.append(("outputs", p.name))
            elif p.name in self.attr_by_name:
                params.append(("attr", p.name))
            else:
                params.append(("input", p.name))
        defaults = {a.name: a.default for a in self.attrs}
        try:
            res = fn(*self._call_args(params, placeholders, defaults, extra))
        except Exception as e:  # noqa: BLE001
            raise _errors.InvalidArgumentError(f"op {self.key}: autotune function {_where(fn)} raised "
                                               f"{type(e).__name__}: {e}") from e
        res = [res] if isinstance(res, AutoTuneCombination) else list(res or [])
        positions = len(self.inputs) + self.num_outputs
        out = []
        for k, c in enumerate(res):
            if not isinstance(c, AutoTuneCombination):
                raise _errors.InvalidArgumentError(f"op {self.key}: autotune function {_where(fn)} returned "
                                                   f"{type(c).__name__} at index {k}, not an ofp.AutoTuneCombination")
            combo = (c.io_types, c.layouts or ("LINEAR" if c.io_types else ""), c._pos_types, c._pos_layouts, [])
            try:
                _C.expand_combo(combo, positions)
            except _errors.OpforgeError as e:
                raise type(e)(f"op {self.key}: autotune function {_where(fn)}: combination {k} ({c!r}) for "
                              f"{positions} positions ({len(self.inputs)} inputs, then {self.num_outputs} outputs): "
                              f"{e}") from None
            out.append((combo, list(c._tactics)))
        return out

    def spec(self):
        if self.impl_fn is None and self.aot_fn is None:
            raise _errors.InvalidArgumentError(f"op {self.key}: register function {_where(self.register_fn)} has no "
                                               f"impl and no aot_impl: define one with @ofp.impl({self.key!r}) (JIT) "
                                               f"or @ofp.aot_impl({self.key!r}) (AOT)")
        combos = self.combinations()
        user = []
        for _, ts in combos:
            user += [t for t in ts if t not in user]
        base = _C.cpu_tactic_base

        def engine_ids(ts):
            ids = []
            for u in ts:
                ids += [0 if u == user[0] else base + u, u]
            return ids

        if self.impl_fn is None:
            # AOT only: a CPU reference is mandatory, and this one says why it cannot run.
            tactics = [(0, "python.aot_only", 0)]
            combos = [(c, []) for c, ts in combos]
        elif user:
            tactics = [(0 if u == user[0] else base + u, f"python.impl(tactic={u})", u) for u in user]
            tactics += [(u, f"python.cuda(tactic={u})", u) for u in user]
        else:
            tactics = [(0, "python.impl", 0), (1, "python.cuda", 0)]
        self.tactics = tactics
        doc = (inspect.getdoc(self.register_fn) or "").strip().split("\n")[0]
        return {
            "key": self.key, "version": "1", "doc": doc or f"defined in Python ({self.module})",
            "inputs": list(self.inputs),
            "outputs": ["output"] if self.num_outputs == 1 else [f"output{k}" for k in range(self.num_outputs)],
            "attrs": [a.spec() for a in self.attrs],
            "combos": [c[:4] + (engine_ids(ts),) for c, ts in combos],
            "tactics": tactics, "shape": self.shape, "run": self.run,
            # JIT plans keep only what the impl reads (TensorRT's rule); the register function's
            # other attributes serve the build. An AOT-only op's nodes become AotKernel layers.
            "plan_attrs": list(self.impl_attrs) if self.impl_fn is not None else None,
        }


def _pending(key, what):
    with _LOCK:
        if key in _COMMITTED and not any(o.key == key for o in _PENDING):
            raise _errors.InvalidArgumentError(f"{what} for op {key}: the op is already in the registry (from python:"
                                               f"{_COMMITTED[key].module}); define impl and autotune before its first "
                                               f"use (opforge.ops(), Engine.build, ofp.commit())")
        for o in reversed(_PENDING):
            if o.key == key:
                return o
    raise _errors.NotFoundError(f"{what} for op {key}: no register function defines it (decorate one with "
                                f"@ofp.register({key!r}) first)")


def register(key):
    """Declares op `key` ("namespace::name"): the function's parameters annotated TensorDesc are its
    inputs, the others its attributes; it returns the outputs' TensorDescs (its shape rule)."""
    def deco(fn):
        op = _Op(key, fn)
        with _LOCK:
            _PENDING.append(op)
        return fn
    return deco


def impl(key):
    """The op's kernel: (inputs: Tensor..., attributes..., outputs, stream, tactic=0) -> None."""
    def deco(fn):
        _pending(key, f"impl function {_where(fn)}").set_impl(fn)
        return fn
    return deco


def aot_impl(key):
    """The op's ahead-of-time kernels: (input TensorDescs..., attributes..., outputs, tactic) ->
    (kernel name, PTX or cubin, KernelLaunchParams, extra args). A CUDA build replaces the node by
    an opforge::AotKernel layer that the C++ runtime launches with no Python (see lower())."""
    def deco(fn):
        _pending(key, f"aot_impl function {_where(fn)}").set_aot_impl(fn)
        return fn
    return deco


def autotune(key):
    """The op's combinations: a function returning a list of AutoTuneCombination."""
    def deco(fn):
        _pending(key, f"autotune function {_where(fn)}").autotune_fn = fn
        return fn
    return deco


def commit():
    """Registers every op defined since the last commit, with its module as origin; returns their
    keys. A problem with one op (no impl, a bad combination, a duplicate) raises after the other
    ops are registered."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
        if not pending:
            return []
        errors, by_module = [], {}
        for op in pending:
            try:
                by_module.setdefault(op.module, []).append((op, op.spec()))
            except _errors.OpforgeError as e:
                errors.append(e)
        done = []
        for module, items in by_module.items():
            try:
                _C.register_python_ops(f"python:{module}", [s for _, s in items])
            except _errors.OpforgeError as e:
                errors.append(e)
                continue
            for op, _ in items:
                op.committed = True
                _COMMITTED[op.key] = op
                done.append(op.key)
    new = _ops._refresh()
    for hook in list(_ops._LOAD_HOOKS):
        hook(new)
    if errors:
        raise errors[0]
    return done


def torch_stream(stream, device="cuda"):
    """A context in which PyTorch work runs on the engine's stream: torch.cuda.ExternalStream(stream)
    for a CUDA tensor's impl (pass the tensor's .device), nothing on the CPU backend."""
    import contextlib
    if device == "cpu" or not stream:
        return contextlib.nullcontext()
    import torch
    return torch.cuda.stream(torch.cuda.ExternalStream(int(stream)))


def registered():
    """{key: module} of the Python ops in the registry."""
    return {k: o.module for k, o in _COMMITTED.items()}


def lower(network, device="cuda", prefer_aot=None, arch=None):
    """A copy of `network` (an opforge.Network) in which the nodes of Python ops that run ahead of
    time are opforge::AotKernel layers (what Engine.build does before a build). See _aot.lower."""
    from . import _aot
    return _aot.lower_network(network, device=device, prefer_aot=prefer_aot, arch=arch)


_ops._COMMIT_HOOKS.append(commit)
