"""Every op of the loaded op libraries as a PyTorch op, torch.ops.<namespace>.<name>, registered with
torch.library from its C++ definition:

- schema: the op's inputs (Tensor, Tensor? for optional, Tensor[] for variadic), then its
  attributes as keyword-only typed arguments (int, float, str, bool, int[], float[], bool[]) with
  their defaults; an output that aliases input 0 (an in-place op) is declared `Tensor(a!)` on both
  sides and tagged torch.Tag.inplace (PyTorch >= 2.13; older PyTorch cannot functionalize a custom
  op that returns its mutated input, so there the schema is `(Tensor(a!) x, ...) -> ()` and
  opforge.torch.<name> returns x);
- CPU kernel: the op's CPU reference (tactic 0); CUDA kernel: a CUDA tactic (the fastest
  applicable one, timed once per shape, or the one use_tactic() forces), on the current stream;
- fake kernel: the C++ shape rule evaluated on symbolic dimensions (DimExpr -> SymInt arithmetic),
  its assertions as torch._check, data-dependent sizes from new_dynamic_size();
- autograd: for ops that declare a backward op, the backward op (matched by name, see
  `_GradMapping`); other ops raise a clear error when a gradient would flow through them.

`opforge.torch.<name>` (and `opforge.torch.<namespace>.<name>`) are seed-style callables, usable
like `MyOpFunction.apply`: positional inputs, then attributes positionally or by keyword.
"""
import contextlib
import os
import sys
import threading
import types

import torch

from .. import _errors, _ops, _shapes
from .._naming import ident as _ident, torch_namespace

__all__ = ["OpFunction", "registered", "use_tactic", "registration_problems", "function", "register_op"]

# torch.Tag.inplace (PyTorch >= 2.13) lets an in-place custom op return its input through
# torch.compile / torch.export; OPFORGE_TORCH_INPLACE_TAG=0 selects the older form (for tests).
INPLACE_RETURNS = hasattr(torch.Tag, "inplace") and os.environ.get("OPFORGE_TORCH_INPLACE_TAG", "1") != "0"

_LIBS = {}            # torch namespace -> torch.library.Library
_REGISTERED = {}      # op key -> TorchOp
_PROBLEMS = {}        # op key -> why it is not (fully) registered
_LOCK = threading.RLock()
_FORCED = threading.local()

_ATTR_TYPES = {
    "int": "int", "float": "float", "string": "str", "bool": "bool", "bytes": "str",
    "int8[]": "int[]", "int16[]": "int[]", "int32[]": "int[]", "int64[]": "int[]",
    "float16[]": "float[]", "float32[]": "float[]", "float64[]": "float[]", "bool[]": "bool[]",
}


def _default_text(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("non-finite float default")
        return repr(float(v))
    if isinstance(v, str):
        if '"' in v or "\\" in v:
            raise ValueError("string default with quotes")
        return f'"{v}"'
    if isinstance(v, bytes):
        return _default_text(v.decode("latin-1"))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_default_text(x) for x in v) + "]"
    raise ValueError(f"default {v!r}")


def _probe_values(type_name):
    return {
        "int": [1, 0, 2], "float": [1.0, 0.5], "string": ["", "none"], "bool": [False, True], "bytes": [b""],
        "bool[]": [[False]], "float16[]": [[1.0], []], "float32[]": [[1.0], []], "float64[]": [[1.0], []],
    }.get(type_name, [[1, 1], [1], [0, 0], [1, 1, 1, 1], []])


def _probe_aliases(op):
    """Which outputs alias which inputs. The alias is part of the shape rule's answer (SymDesc
    `aliased()`), not of the schema, so ask the rule on symbolic inputs of each accepted type and a
    few ranks, with default or simple attribute values. Returns {output: input}, or None when no
    probe was accepted (then the op is registered as functional, and a kernel that turns out to
    write in place gets a copy of its input: still correct)."""
    types_ = [[c["types"][min(i, len(op.inputs) - 1)] for i in range(len(op.inputs))] for c in op.combos] or \
        [[1] * len(op.inputs)]
    required = [a for a in op.attrs if a["required"]]
    attr_sets = []
    for j in range(4):
        attrs = {a["name"]: a["default"] for a in op.attrs if a["has_default"]}
        for a in required:
            vals = _probe_values(a["type"])
            attrs[a["name"]] = vals[j % len(vals)]
        attr_sets.append(attrs)
    for tys in types_:
        for rank in (1, 2, 3, 4, 5, 6, 0):
            inputs = []
            for i, io in enumerate(op.inputs):
                if io["optional"]:
                    inputs.append(None)
                else:
                    inputs.append((tys[i], [f"probe{i}.{d}" for d in range(rank)]))
            for attrs in attr_sets:
                try:
                    res = op.infer(attrs, inputs, check_combos=False, node="probe")
                except (_errors.OpforgeError, TypeError, ValueError):
                    continue
                return {o: out["alias"] for o, out in enumerate(res["outputs"][:res["num_declared"]])
                        if out["alias"] >= 0}
    return None


class _GradMapping:
    """How the backward op's arguments map onto the forward op (by name, documented in
    python/README.md): a backward input named like a forward input or output gets that tensor;
    one named d<out> or grad_<out> gets the gradient of forward output <out>; a backward output
    named d<in> or grad_<in> is the gradient of forward input <in>; attributes pass by name."""

    def __init__(self, fwd, bwd):
        fin = [i["name"] for i in fwd.inputs]
        fout = [o["name"] for o in fwd.outputs]
        self.sources = []  # ("input", i) | ("output", o) | ("grad", o)
        for io in bwd.inputs:
            n = io["name"]
            if n in fin:
                self.sources.append(("input", fin.index(n)))
            elif n in fout:
                self.sources.append(("output", fout.index(n)))
            else:
                g = self._strip(n, fout)
                if g is None:
                    raise ValueError(f"backward op {bwd.key} input '{n}' is neither a forward input ({', '.join(fin)}), "
                                     f"a forward output ({', '.join(fout)}), nor the gradient of one (d<name> or "
                                     f"grad_<name>)")
                self.sources.append(("grad", g))
        self.targets = []  # forward input index for each backward output
        for io in bwd.outputs:
            t = self._strip(io["name"], fin)
            if t is None:
                raise ValueError(f"backward op {bwd.key} output '{io['name']}' does not name the gradient of a forward "
                                 f"input (d<name> or grad_<name>, inputs: {', '.join(fin)})")
            self.targets.append(t)
        fattrs = {a["name"] for a in fwd.attrs}
        self.attrs = [a["name"] for a in bwd.attrs]
        missing = [a for a in self.attrs if a not in fattrs]
        if missing:
            raise ValueError(f"backward op {bwd.key} has attributes {missing} that {fwd.key} does not have")
        self.saved_inputs = sorted({i for k, i in self.sources if k == "input"})
        self.saved_outputs = sorted({o for k, o in self.sources if k == "output"})

    @staticmethod
    def _strip(name, names):
        for prefix in ("grad_", "d"):
            if name.startswith(prefix) and name[len(prefix):] in names:
                return names.index(name[len(prefix):])
        return None


class TorchOp:
    """The PyTorch registration of one opforge op."""

    def __init__(self, op, functional_of=None):
        self.op = op
        self.ns = torch_namespace(op.namespace)
        self.arg_names = [_ident(i["name"]) for i in op.inputs]
        # An attribute named like an input (ONNX Clip's min/max of old opsets) gets a suffix.
        self.attr_names = [_ident(a["name"]) + ("_attr" if _ident(a["name"]) in self.arg_names else "")
                           for a in op.attrs]
        self._attr_by_arg = dict(zip(self.attr_names, [a["name"] for a in op.attrs]))
        if functional_of is None:
            self.name = _ident(op.name)
            self.aliases = _probe_aliases(op) or {}
        else:
            # The out-of-place twin of an in-place op: same kernel, run on a copy of the input.
            self.name = functional_of.name + "_functional"
            self.aliases = {}
        self.functional_of = functional_of
        self.qualname = f"{self.ns}::{self.name}"
        # In place (torch.Tag.inplace): one output, aliasing input 0.
        self.inplace = len(op.outputs) == 1 and self.aliases == {0: 0}
        if self.aliases and not self.inplace:
            self.aliases = {}  # other aliasing patterns run functionally (a copy of the input)
        self.functional = None  # TorchOp of the out-of-place twin (in-place ops)
        self.schema = self._schema()
        self.grad = None
        self._prepared = {}
        self._tactic_cache = {}

    # ---- schema --------------------------------------------------------------------------
    def _schema(self):
        op = self.op
        args = []
        n = len(op.inputs)
        for i, io in enumerate(op.inputs):
            t = "Tensor[]" if io["variadic"] else ("Tensor?" if io["optional"] else "Tensor")
            if self.inplace and i == 0:
                t = "Tensor(a!)"
            default = "=None" if io["optional"] and all(x["optional"] for x in op.inputs[i:n]) else ""
            args.append(f"{t} {self.arg_names[i]}{default}")
        kw = []
        for a, name in zip(op.attrs, self.attr_names):
            t = _ATTR_TYPES.get(a["type"])
            if t is None:
                raise ValueError(f"attribute '{a['name']}' has type {a['type']}, which a PyTorch schema cannot carry")
            if a["has_default"]:
                kw.append(f"{t} {name}={_default_text(a['default'])}")
            elif a["optional"]:
                kw.append(f"{t}? {name}=None")
            else:
                kw.append(f"{t} {name}")
        params = ", ".join(args + (["*"] + kw if kw else []))
        outs = []
        for o, io in enumerate(op.outputs):
            outs.append("Tensor[]" if io["variadic"] else ("Tensor(a!)" if self.inplace else "Tensor"))
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        if self.inplace and not INPLACE_RETURNS:
            ret = "()"
        return f"{self.name}({params}) -> {ret}"

    # ---- argument handling -----------------------------------------------------------------
    def split(self, args, kwargs):
        """(inputs aligned with the op's inputs, attributes by opforge name)."""
        n = len(self.arg_names)
        args = list(args)
        inputs = args[:n] + [None] * (n - min(len(args), n))
        for i, name in enumerate(self.arg_names):
            if name in kwargs:
                inputs[i] = kwargs[name]
        attrs = {}
        for name in self.attr_names:
            if name in kwargs and kwargs[name] is not None:
                attrs[self._attr_by_arg[name]] = kwargs[name]
        return inputs, attrs

    def _flat(self, inputs):
        """[(position label, tensor or None)] with variadic lists expanded."""
        out = []
        for io, t in zip(self.op.inputs, inputs):
            if io["variadic"]:
                for k, x in enumerate(t or []):
                    out.append((f"{io['name']}[{k}]", x))
            else:
                out.append((io["name"], t))
        return out

    def _check(self, flat, device_kind=None):
        """Same device for every tensor, dtypes opforge knows. Returns the device."""
        dev = None
        first = None
        for label, t in flat:
            if t is None:
                continue
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{self.op.key}: input '{label}' must be a torch.Tensor, got {type(t).__name__}")
            if _shapes.code_of_torch(t.dtype) is None:
                raise _errors.DTypeError(f"{self.op.key}: input '{label}' has dtype {t.dtype}, which opforge does not "
                                         f"support; the op accepts {self.op.accepted_types()}")
            if dev is None:
                dev, first = t.device, label
            elif t.device != dev:
                raise _errors.DeviceError(f"{self.op.key}: input '{label}' is on {t.device} but input '{first}' is on "
                                          f"{dev}; every input of an opforge op must be on one device "
                                          f"(move it with .to('{dev}'))")
        if device_kind is not None and dev is not None and dev.type != device_kind:
            raise _errors.DeviceError(f"{self.op.key}: the inputs are on {dev}, which opforge cannot run on "
                                      f"(cpu or cuda)")
        return dev

    # ---- kernels ------------------------------------------------------------------------------
    def _value_flags(self, inputs):
        """For each flat input (variadic lists expanded, as _flat): is it a value input (one whose
        values the shape rule may read)?"""
        flags = []
        for io, t in zip(self.op.inputs, inputs):
            flags += [io["value"]] * (len(t or []) if io["variadic"] else 1)
        return flags

    @staticmethod
    def _values(t):
        return t.detach().reshape(-1).contiguous().view(torch.uint8).cpu().numpy().tobytes()

    def _prepare(self, kernel, akey, flat, flags, backend, with_values=None):
        """Concrete shapes, combination and applicable tactics for these inputs (cached). Value inputs
        carry their values on the CPU (cheap); on the GPU only when the shape rule needs them (a
        device-to-host copy)."""
        if with_values is None:
            with_values = backend == 0
        vals = [self._values(t) if (f and with_values and t is not None) else None for f, (_, t) in zip(flags, flat)]
        sig = (akey, backend, tuple(None if t is None else (_shapes.code_of_torch(t.dtype), tuple(t.shape), v)
                                    for (_, t), v in zip(flat, vals)))
        p = self._prepared.get(sig)
        if p is None:
            specs = [None if t is None else (_shapes.code_of_torch(t.dtype), list(t.shape), v)
                     for (_, t), v in zip(flat, vals)]
            try:
                p = kernel.prepare(specs, backend)
            except _errors.UnsupportedError as e:
                if "no type combination" in str(e):
                    raise _errors.DTypeError(str(e)) from None
                raise
            except _errors.InvalidArgumentError as e:
                if not with_values and any(flags) and "must be known" in str(e):
                    return self._prepare(kernel, akey, flat, flags, backend, with_values=True)
                raise
            if len(self._prepared) > 1024:
                self._prepared.clear()
            self._prepared[sig] = p
        return sig, p

    def _choose_tactic(self, sig, prep, device, run_once):
        tactics = prep["tactics"]
        forced = getattr(_FORCED, "tactics", {}).get(self.op.key)
        if forced is not None:
            for t in tactics:
                if t[0] == forced:
                    return t
            raise _errors.UnsupportedError(f"{self.op.key}: tactic {forced} (forced by use_tactic) does not apply to "
                                           f"these inputs; applicable: {[t[0] for t in tactics]}")
        if len(tactics) == 1 or device.type != "cuda" or self.aliases or \
                torch.cuda.is_current_stream_capturing():
            return tactics[0]
        key = (sig, device.index)
        t = self._tactic_cache.get(key)
        if t is None:
            t = _time_tactics(tactics, run_once, device)
            if len(self._tactic_cache) > 1024:
                self._tactic_cache.clear()
            self._tactic_cache[key] = t
        return t

    def run(self, device_kind, args, kwargs):
        inputs, attrs = self.split(args, kwargs)
        flat = self._flat(inputs)
        device = self._check(flat, device_kind)
        op = self.op
        akey = _ops.attrs_key(attrs)
        kernel = op.kernel(attrs)
        # Contiguous copies where needed (a copy of the same cost as the op itself; strides are not
        # passed to opforge kernels). The in-place input is written back at the end.
        cont = [(label, None if t is None else (t if t.is_contiguous() else t.contiguous())) for label, t in flat]
        backend = 1 if device_kind == "cuda" else 0
        sig, prep = self._prepare(kernel, akey, cont, self._value_flags(inputs), backend)
        if not prep["tactics"]:
            names = ", ".join(f"{t[0]} {t[1]} ({t[2].upper()})" for t in op.tactics)
            specs = ", ".join(f"{lbl}: {_shapes.dtype_name(_shapes.code_of_torch(t.dtype))}{list(t.shape)}"
                              for lbl, t in cont if t is not None)
            where = "CUDA" if backend else "CPU"
            hint = "" if (backend == 0 or op.has_cuda_tactics) else \
                " (the op has no CUDA tactic: was the op library built without CUDA? run it on the CPU)"
            raise _errors.UnsupportedError(f"{op.key}: no {where} tactic applies to ({specs}) with combination "
                                           f"{prep['combo'] or 'any'}; the op's tactics: {names}{hint}")
        outs = []
        in_bufs = [t for _, t in cont]
        for o, (dtype, dims, alias, size_tensor, _exprs) in enumerate(prep["outputs"]):
            if alias >= 0:
                src = in_bufs[alias]
                if self.inplace and o == 0 and alias == 0:
                    outs.append(src)  # written in place (src is the input, or its contiguous copy)
                else:
                    clone = src.clone(memory_format=torch.contiguous_format)
                    in_bufs[alias] = clone
                    outs.append(clone)
            else:
                outs.append(torch.empty(dims, dtype=_shapes.torch_dtype(dtype), device=device))
        in_specs = [None if t is None else (t.data_ptr(), _shapes.code_of_torch(t.dtype), list(t.shape))
                    for t in in_bufs]
        out_specs = [(t.data_ptr(), _shapes.code_of_torch(t.dtype), list(t.shape)) for t in outs]
        dev_guard = torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()
        with dev_guard:
            stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0

            def run_once(tactic):
                ws_size = tactic[2]
                ws = torch.empty(ws_size, dtype=torch.uint8, device=device) if ws_size else None
                kernel.run(tactic[0], in_specs, out_specs, ws.data_ptr() if ws is not None else 0, ws_size, stream,
                           backend)
                return ws  # keep the workspace alive until the stream is done with it (caching allocator)

            tactic = self._choose_tactic(sig, prep, device, run_once)
            run_once(tactic)
        # Data-dependent sizes: the kernel wrote them into the size-tensor outputs.
        if prep["size_tensors"]:
            values = {sym: int(outs[idx].item()) for idx, sym, _upper in prep["size_tensors"]}
            for o, (dtype, dims, alias, size_tensor, exprs) in enumerate(prep["outputs"]):
                real = [_shapes.to_int_or_none(e, values) for e in exprs]
                if None in real or list(real) == list(dims):
                    continue
                numel = 1
                for d in real:
                    numel *= d
                outs[o] = outs[o].view(-1)[:numel].view(real)
        if self.inplace:
            x = flat[0][1]
            if outs[0] is not x:
                x.copy_(outs[0])
            return x if INPLACE_RETURNS else None
        declared = outs[:prep["num_declared"]]
        if op.outputs and op.outputs[-1]["variadic"]:
            fixed = len(op.outputs) - 1
            declared = declared[:fixed] + [list(declared[fixed:])]
        return declared[0] if len(declared) == 1 else tuple(declared)

    # ---- fake kernel ---------------------------------------------------------------------------
    def fake(self, args, kwargs):
        inputs, attrs = self.split(args, kwargs)
        flat = self._flat(inputs)
        device = self._check(flat)
        symbols = {}
        specs = []
        for k, (_, t) in enumerate(flat):
            if t is None:
                specs.append(None)
                continue
            dims = []
            for j, d in enumerate(t.shape):
                if isinstance(d, int):
                    dims.append(d)
                else:
                    name = f"in{k}.{j}"
                    symbols[name] = d
                    dims.append(name)
            specs.append((_shapes.code_of_torch(t.dtype), dims))
        try:
            res = self.op.infer(attrs, specs, prefix=f"{self.op.node_name()}#")
        except _errors.UnsupportedError as e:
            if "no type combination" in str(e):
                raise _errors.DTypeError(str(e)) from None
            raise
        for lhs, rel, rhs, msg in res["assertions"]:
            try:
                a, b = _shapes.to_symint(lhs, symbols), _shapes.to_symint(rhs, symbols)
            except KeyError:
                continue  # involves a data-dependent size
            text = f"{self.op.key}: {msg}"
            if rel == "eq":
                torch._check(a == b, lambda text=text: text)
            elif rel == "le":
                torch._check(a <= b, lambda text=text: text)
            else:
                torch._check((a == b) | (a == 1) | (b == 1) if not (isinstance(a, int) and isinstance(b, int))
                             else (a == b or a == 1 or b == 1), lambda text=text: text)
        if res["size_tensors"]:
            ctx = torch.library.get_ctx()
            for s in res["size_tensors"]:
                upper = _shapes.to_symint(s["upper"], symbols)
                if isinstance(upper, int):
                    u = ctx.new_dynamic_size(min=0, max=upper)
                else:
                    u = ctx.new_dynamic_size(min=0)
                    torch._check(u <= upper)
                symbols[s["symbol"]] = u
        outs = []
        for o, out in enumerate(res["outputs"]):
            if self.inplace and o == 0:
                outs.append(flat[0][1])
                continue
            shape = [_shapes.to_symint(e, symbols) for e in out["dims"]]
            outs.append(torch.empty(shape, dtype=_shapes.torch_dtype(out["dtype"]), device=device))
        if self.inplace:
            return outs[0] if INPLACE_RETURNS else None
        declared = outs[:res["num_declared"]]
        if self.op.outputs and self.op.outputs[-1]["variadic"]:
            fixed = len(self.op.outputs) - 1
            declared = declared[:fixed] + [list(declared[fixed:])]
        return declared[0] if len(declared) == 1 else tuple(declared)

    # ---- registration --------------------------------------------------------------------------
    def register(self):
        lib = _LIBS.get(self.ns)
        if lib is None:
            lib = _LIBS[self.ns] = torch.library.Library(self.ns, "FRAGMENT")
        tags = (torch.Tag.inplace,) if self.inplace and INPLACE_RETURNS else ()
        lib.define(self.schema, tags=tags)
        lib.impl(self.name, lambda *a, **k: self.run("cpu", a, k), "CPU")
        lib.impl(self.name, lambda *a, **k: self.run("cuda", a, k), "CUDA")
        torch.library.register_fake(self.qualname, lambda *a, **k: self.fake(a, k), lib=lib)
        self._register_autograd(lib)
        if self.inplace:
            # torch.export keeps the in-place call in its graph; opforge.onnx.export rewrites it to
            # this twin (functionalized graphs wrap mutations in auto_functionalized, which the ONNX
            # exporter cannot translate). Also usable directly: y = <name>_functional(x, ...).
            self.functional = TorchOp(self.op, functional_of=self)
            self.functional.register()

    def _register_autograd(self, lib):
        op = self.op
        if op.backward:
            try:
                bwd = _ops.find(op.backward)
                if bwd is None:
                    raise ValueError(f"backward op {op.backward} is not loaded")
                self.grad = _GradMapping(op, bwd)
                self.grad_op = bwd
            except ValueError as e:
                _PROBLEMS[op.key] = f"no autograd: {e}"
                self.grad = None
        if self.inplace or any(a >= 0 for a in self.aliases.values()):
            opname = self.name
            key = op.key

            def autograd_inplace(keyset, *args, **kwargs):
                if torch.is_grad_enabled():
                    for t in args:
                        if isinstance(t, torch.Tensor) and t.requires_grad:
                            raise _errors.UnsupportedError(
                                f"{key} writes its input in place and declares no backward: it cannot modify a tensor "
                                f"that requires grad (use torch.no_grad() or .detach())")
                with torch._C._AutoDispatchBelowAutograd():
                    out = getattr(getattr(torch.ops, self.ns), opname).default.redispatch(
                        keyset & torch._C._after_autograd_keyset, *args, **kwargs)
                torch.autograd.graph.increment_version(args[0])
                return out

            lib.impl(self.name, autograd_inplace, "Autograd", with_keyset=True)
            return
        if self.grad is not None:
            torch.library.register_autograd(self.qualname, self._backward, setup_context=self._setup_context, lib=lib)
        else:
            key = op.key
            why = _PROBLEMS.get(key, "it declares no backward op")

            def no_backward(ctx, *grads):
                raise _errors.UnsupportedError(f"{key} has no gradient: {why}")

            def setup(ctx, inputs, keyword_only_inputs=None, output=None):
                pass

            torch.library.register_autograd(self.qualname, no_backward, setup_context=setup, lib=lib)

    def _setup_context(self, ctx, inputs, keyword_only_inputs=None, output=None):
        g = self.grad
        outs = output if isinstance(output, (tuple, list)) else (output,)
        ctx.opforge_attrs = {self._attr_by_arg[k]: v for k, v in (keyword_only_inputs or {}).items()}
        ctx.save_for_backward(*[inputs[i] for i in g.saved_inputs], *[outs[o] for o in g.saved_outputs])
        ctx.opforge_outputs_meta = [(t.shape, t.dtype, t.device) for t in outs]

    def _backward(self, ctx, *grads):
        g = self.grad
        saved = ctx.saved_tensors
        ins = dict(zip(g.saved_inputs, saved[:len(g.saved_inputs)]))
        outs = dict(zip(g.saved_outputs, saved[len(g.saved_inputs):]))
        args = []
        for kind, idx in g.sources:
            if kind == "input":
                args.append(ins[idx])
            elif kind == "output":
                args.append(outs[idx])
            else:
                gr = grads[idx]
                if gr is None:
                    shape, dtype, device = ctx.opforge_outputs_meta[idx]
                    gr = torch.zeros(shape, dtype=dtype, device=device)
                args.append(gr)
        bwd = registered(self.grad_op.key)
        attrs = {bwd._arg_of(a): ctx.opforge_attrs[a] for a in g.attrs if a in ctx.opforge_attrs}
        res = bwd.callable()(*args, **attrs)
        res = res if isinstance(res, (tuple, list)) else (res,)
        out = [None] * len(self.arg_names)
        for r, target in zip(res, g.targets):
            out[target] = r
        return tuple(out)

    def _arg_of(self, attr):
        return self.attr_names[[a["name"] for a in self.op.attrs].index(attr)]

    def callable(self):
        return getattr(getattr(torch.ops, self.ns), self.name).default


def _time_tactics(tactics, run_once, device):
    """Runs each applicable tactic (1 warm-up + 3 timed runs on the current stream) and returns
    the fastest. The outputs are rewritten by the final run."""
    best, best_ms = tactics[0], None
    stream = torch.cuda.current_stream(device)
    for t in tactics:
        run_once(t)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(3):
            run_once(t)
        end.record(stream)
        end.synchronize()
        ms = start.elapsed_time(end) / 3
        if best_ms is None or ms < best_ms:
            best, best_ms = t, ms
    return best


# ---- public API -----------------------------------------------------------------------------------

class OpFunction:
    """A seed-style wrapper of one op: `f(x, pads)` or `f.apply(x, pads)` (like an
    autograd.Function's apply), attributes positionally after the inputs or by keyword."""

    def __init__(self, top):
        self._top = top
        op = top.op
        self.key = op.key
        self.__name__ = top.name
        self.__qualname__ = top.name
        ins = ", ".join(top.arg_names)
        attrs = ", ".join(f"{n}" for n in top.attr_names)
        self.__doc__ = (f"{op.key} (v{op.version}): {op.doc}\n\n"
                        f"Call: {top.name}({ins}{', ' if attrs else ''}{attrs}) -> torch.ops.{top.ns}.{top.name}\n"
                        f"Schema: {top.qualname}{top.schema[len(top.name):]}")

    @property
    def op(self):
        """The torch.ops overload (torch.ops.<ns>.<name>.default)."""
        return self._top.callable()

    def __call__(self, *args, **kwargs):
        top = self._top
        n = len(top.arg_names)
        if len(args) > n + len(top.attr_names):
            raise TypeError(f"{self.key} takes {n} inputs and {len(top.attr_names)} attributes "
                            f"({', '.join(top.arg_names + top.attr_names)}); got {len(args)} positional arguments")
        for name, v in zip(top.attr_names, args[n:]):
            if name in kwargs:
                raise TypeError(f"{self.key}: attribute '{name}' given twice")
            kwargs[name] = v
        if top.inplace:
            x = args[0] if args else kwargs[top.arg_names[0]]
            if torch.jit.is_tracing() and not INPLACE_RETURNS:
                # The op returns nothing (PyTorch < 2.13) and the TorchScript tracer (ONNX export
                # with dynamo=False) follows a mutation only through a returned value: record the
                # out-of-place twin and a copy_ into x (x must not be a graph input then: ONNX
                # cannot write into an input; the exporter refuses aten::copy).
                rest = args[1:n]
                kw = {k: v for k, v in kwargs.items() if k != top.arg_names[0]}
                x.copy_(top.functional.callable()(x, *rest, **kw))
                return x
            self.op(*args[:n], **kwargs)
            return x
        return self.op(*args[:n], **kwargs)

    def apply(self, *args, **kwargs):
        return self(*args, **kwargs)

    def __repr__(self):
        return f"<opforge.torch function {self.key}>"


def registered(key=None):
    """The TorchOp of an op key, or a dict of every registered op."""
    if key is None:
        return dict(_REGISTERED)
    return _REGISTERED[key]


def function(key):
    """The OpFunction of an op key ("ns::name")."""
    return OpFunction(_REGISTERED[key])


def register_op(key, version="1"):
    """Registers any op of the registry as a torch op, also one of opforge's built-in ONNX ops
    (not registered by default): register_op("ai.onnx::Split") gives torch.ops.ai_onnx.Split.
    Returns its TorchOp; registering twice returns the first."""
    with _LOCK:
        c = _ops._C.find_op(key, version)
        if c is None:
            raise _errors.NotFoundError(f"op {key} v{version} is not registered ({_ops._C.libraries_summary()})")
        if c.key in _REGISTERED:
            return _REGISTERED[c.key]
        top = TorchOp(_ops.OpDef(c))
        top.register()
        _REGISTERED[c.key] = top
        return top


def registration_problems():
    """{op key: why it is not registered, or registered without autograd}."""
    _ops.ops()
    return {**_ops.PROBLEMS, **_PROBLEMS}


@contextlib.contextmanager
def use_tactic(key, tactic):
    """Forces tactic `tactic` (an id) for op `key` in this thread (for tests and benchmarks);
    an error names the tactics that apply when it does not."""
    forced = getattr(_FORCED, "tactics", None)
    if forced is None:
        forced = _FORCED.tactics = {}
    prev = forced.get(key)
    forced[key] = tactic
    try:
        yield
    finally:
        if prev is None:
            forced.pop(key, None)
        else:
            forced[key] = prev


_module = sys.modules[__name__]


def _register(new_ops):
    with _LOCK:
        for op in sorted(new_ops, key=lambda o: o.key):
            if op.key in _REGISTERED:
                continue
            try:
                top = TorchOp(op)
                top.register()
            except Exception as e:  # noqa: BLE001 - reported, the other ops still register
                _PROBLEMS[op.key] = f"not registered with PyTorch: {e}"
                continue
            _REGISTERED[op.key] = top
            fn = OpFunction(top)
            nsmod = getattr(_module, top.ns, None)
            if not isinstance(nsmod, types.SimpleNamespace):
                nsmod = types.SimpleNamespace()
                if not hasattr(_module, top.ns):
                    setattr(_module, top.ns, nsmod)
            setattr(nsmod, top.name, fn)
            if not hasattr(_module, top.name):
                setattr(_module, top.name, fn)
            if top.functional is not None:
                twin = OpFunction(top.functional)
                setattr(nsmod, top.functional.name, twin)
                if not hasattr(_module, top.functional.name):
                    setattr(_module, top.functional.name, twin)


_ops._LOAD_HOOKS.append(_register)
_register(list(_ops.ops().values()))
