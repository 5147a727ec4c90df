"""Lowering of Python ops to opforge::AotKernel (ops/core/aot_kernel/README.md).

Before a build, every node of a Python op that runs ahead of time is replaced by an
opforge::AotKernel node: its aot_impl is called with TensorDescs whose dynamic dimensions are the
node's own symbols in<k>.<d> (input k, axis d; static dimensions stay numbers), and what it returns
(kernel name, PTX or cubin, KernelLaunchParams, extra args) becomes the layer's attributes: the
images, the launches (grid, block, shared memory and arguments as expressions of in<k>.<d>) and the
outputs (the register function's answer in the same symbols). The plan then holds only engine ops;
the C++ runtime launches the kernels with no Python.

JIT or AOT, as TensorRT's ONNX parser decides: a node attribute `aot` (0/1) forces one; else the
build's `prefer_aot`; an op with both an impl and an aot_impl and no preference is an error. A CPU
build runs the impl (JIT) where there is one; an op with only an aot_impl cannot be built for the
CPU.
"""
import re
import struct

import numpy as np

from .. import _errors
from ._types import (DimExpr, KernelLaunchParams, SymFloat32, SymFloat64, SymInt32, SymInt64, TensorDesc,
                     _Scratch, _is_int, _STATE)

AOT_OP = "opforge::AotKernel"
# The engine's dtype names (opforge/tensor.h, parseDataType).
_DTYPE_NAMES = {1: "FP32", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64", 9: "BOOL",
                10: "FP16", 11: "FP64", 12: "UINT32", 13: "UINT64", 16: "BF16"}
_EM_CUDA = 190


class _NoContext:
    """The shape context of a register function called for lowering: no data-dependent sizes."""

    def __init__(self, descs):
        self._descs = descs

    def input(self, i):
        return self._descs[i] if i < len(self._descs) else None

    def size_tensor(self, *args):
        raise _errors.UnsupportedError("size_tensor(): an op with data-dependent output sizes cannot run ahead of "
                                       "time (AOT); give it an impl (JIT)")


def fnv1a64(data):
    """The image_hash attribute: FNV-1a, 64 bits, as a signed int64."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h - (1 << 64) if h >= 1 << 63 else h


def arch_number(arch):
    m = re.fullmatch(r"(?:sm_)?(\d)(\d+)a?", str(arch))
    if not m:
        raise _errors.InvalidArgumentError(f"AOT architecture {arch!r} is not of the form sm_XY")
    return int(m.group(1) + m.group(2))


def default_arch():
    """The current CUDA device's SM where PyTorch sees one, else 90 (sm_90)."""
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return major * 10 + minor
    except Exception:  # noqa: BLE001 - no torch or no driver: the default target
        pass
    return 90


def current_arch():
    """The SM the running aot_impl compiles for (the build's target); 90 outside a lowering."""
    return getattr(_STATE, "aot_arch", None) or 90


def _elf_sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    if shentsize < 64 or shoff + shnum * shentsize > len(b) or shstrndx >= shnum:
        raise ValueError("its section table is out of bounds")
    heads = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    str_off, str_size = heads[shstrndx][4], heads[shstrndx][5]
    out = {}
    for name, _type, _flags, _addr, off, size in heads:
        end = b.find(b"\0", str_off + name, str_off + str_size)
        out[b[str_off + name:end].decode("latin-1")] = (off, size)
    return out


def image_info(image):
    """(kind, sm, kernel names) of a PTX text or cubin; ValueError says why it is neither."""
    if isinstance(image, (bytes, bytearray, memoryview)) and bytes(image[:4]) == b"\x7fELF":
        b = bytes(image)
        if len(b) < 64 or b[4] != 2 or b[5] != 1:
            raise ValueError("the cubin is not a 64-bit little-endian ELF file")
        machine, = struct.unpack_from("<H", b, 18)
        if machine != _EM_CUDA:
            raise ValueError(f"the ELF image is for machine {machine}, not CUDA ({_EM_CUDA}): not a cubin")
        flags, = struct.unpack_from("<I", b, 48)
        sm = (flags >> 8) & 0xFF if b[8] >= 8 else flags & 0xFF
        try:
            secs = _elf_sections(b)
        except (ValueError, struct.error) as e:
            raise ValueError(f"the cubin is not a valid ELF file: {e}") from None
        names = {n[len(".text."):] for n in secs if n.startswith(".text.")}
        return "cubin", sm, names
    text = image.decode("latin-1") if isinstance(image, (bytes, bytearray, memoryview)) else image
    if not isinstance(text, str):
        raise ValueError(f"a kernel image is PTX text (str or bytes) or a cubin (bytes), got {type(image).__name__}")
    m = re.search(r"\.target\s+sm_(\d+)", text)
    if not m or ".version" not in text:
        raise ValueError("the image is neither a cubin (an ELF file) nor PTX text (with .version and .target sm_XY)")
    return "ptx", int(m.group(1)), set(re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", text))


def _ptx_param_count(text, name):
    m = re.search(r"\.entry\s+" + re.escape(name) + r"\s*\(([^)]*)\)", text)
    return None if m is None else len([p for p in m.group(1).split(",") if p.strip()])


def _cubin_param_count(b, name):
    secs = _elf_sections(b)
    if ".nv.info." + name not in secs:
        return None
    off, size = secs[".nv.info." + name]
    p, n = off, 0
    while p + 4 <= off + size:
        fmt, attr, v = struct.unpack_from("<BBH", b, p)
        if fmt != 4:
            p += 4
            continue
        n += attr == 0x17  # EIATTR_KPARAM_INFO: one per parameter
        p += 4 + v
    return n


def param_count(image, name):
    """How many parameters kernel `name` of an image takes (None when the image does not say)."""
    if isinstance(image, (bytes, bytearray)) and bytes(image[:4]) == b"\x7fELF":
        return _cubin_param_count(bytes(image), name)
    text = image.decode("latin-1") if isinstance(image, (bytes, bytearray)) else image
    return _ptx_param_count(text, name)


def _expr_text(v, what):
    if isinstance(v, DimExpr):
        return str(v)
    if _is_int(v):
        return str(int(v))
    raise _errors.InvalidArgumentError(f"{what} must be an int or a shape expression, got {type(v).__name__} {v!r}")


def _scalar_arg(x, what):
    if isinstance(x, _Scratch):
        return f"scratch:{_expr_text(x.value, what)}:{x.align}"
    if isinstance(x, (SymInt32, SymInt64)):
        return f"{x.kind}:{_expr_text(x.value, what)}"
    if isinstance(x, (SymFloat32, SymFloat64)):
        return f"{x.kind}:{x.value!r}"
    if x is None:
        raise _errors.InvalidArgumentError(f"{what} is None (an SymExprs slot never set)")
    if isinstance(x, bool):
        raise _errors.InvalidArgumentError(f"{what} is a bool; give ofp.SymInt32(0/1)")
    if isinstance(x, DimExpr) or _is_int(x):
        return f"i32:{_expr_text(x, what)}"
    if isinstance(x, (float, np.floating)):
        return f"f32:{float(np.float32(x))!r}"
    raise _errors.InvalidArgumentError(f"{what} is {type(x).__name__} {x!r}: an extra argument is an int, a float, a "
                                       f"shape expression, or ofp.SymInt32/SymInt64/SymFloat32/SymFloat64")


def _launches_of(res, where):
    """The aot_impl's answer as a list of (name, image, params, extra args)."""
    def one(t, k):
        if not isinstance(t, (tuple, list)) or len(t) != 4:
            raise _errors.InvalidArgumentError(
                f"{where} returned {type(t).__name__} {t!r:.200}{'' if k is None else f' at index {k}'}: an aot_impl "
                f"returns (kernel name, PTX or cubin, ofp.KernelLaunchParams, extra args), or a list of those")
        return tuple(t)

    if isinstance(res, tuple) and len(res) == 4 and isinstance(res[0], (str, bytes)):
        return [one(res, None)]
    if isinstance(res, list) and res:
        return [one(t, k) for k, t in enumerate(res)]
    return [one(res, None)]


MAX_VARIANTS = 8  # ops/core/aot_kernel/aot_spec.h: kMaxVariants


def lower_node(net, index, op, arch, tactics=(0,)):
    """Replaces node `index` (of Python op `op`) by an opforge::AotKernel holding the aot_impl's
    answer for each of `tactics` (the op's autotune tactics, in order) as one variant of launches:
    the builder times the variants (AotKernel tactics 1, 2, ...) and keeps the fastest."""
    tactics = list(dict.fromkeys(int(t) for t in tactics)) or [0]
    info = net._n.node(index)
    where_fn = f"op {op.key} (node '{info['name']}'): aot_impl function {_where(op.aot_fn)}"
    ins = info["inputs"]
    if any(t is None for t in ins):
        raise _errors.UnsupportedError(f"{where_fn}: an omitted optional input cannot be lowered")
    dtypes, ranks, descs = [], [], []
    for k, t in enumerate(ins):
        dt = int(net._n.dtype_of(t))
        dims = []
        for d, e in enumerate(net._n.dims_of(t)):
            dims.append(e if e.is_constant else DimExpr.symbol(f"in{k}.{d}"))
        dtypes.append(dt)
        ranks.append(len(dims))
        descs.append((dt, dims, k))
    # The register function in the node's own symbols gives the outputs.
    try:
        answer = op.shape(_NoContext(descs), info["attrs"])
    except _errors.OpforgeError as e:
        raise type(e)(f"op {op.key} (node '{info['name']}'): lowering to AOT: {e}") from None
    out_descs, out_lines = [], []
    for k, (dt, dims, alias, size_index) in enumerate(answer):
        if size_index >= 0:
            raise _errors.UnsupportedError(f"op {op.key} (node '{info['name']}'): output {k} is a size tensor: an op "
                                           f"with data-dependent output sizes cannot run ahead of time (AOT)")
        dims = [d if isinstance(d, DimExpr) else DimExpr(int(d)) for d in dims]
        out_descs.append(TensorDesc(dt, dims))
        line = f"{_DTYPE_NAMES.get(int(dt), str(int(dt)))}[{', '.join(str(d) for d in dims)}]"
        out_lines.append(line + (f" alias={alias}" if alias >= 0 else ""))
    in_descs = []
    for dt, dims, k in descs:
        d = TensorDesc(dt, dims, _source=k)
        in_descs.append(d)
    if len(tactics) > MAX_VARIANTS:
        raise _errors.UnsupportedError(
            f"op {op.key} (node '{info['name']}'): its autotune declares {len(tactics)} tactics ({tactics}); an AOT "
            f"layer holds at most {MAX_VARIANTS} variants to time: declare fewer tactics")
    attrs = info["attrs"]
    images, launches = [], []
    for variant, tactic in enumerate(tactics):
        wt = where_fn if len(tactics) == 1 else f"{where_fn} (tactic {tactic})"
        prefix = "" if len(tactics) == 1 else f"variant={variant}; "
        prev = getattr(_STATE, "ctx", None), getattr(_STATE, "aot_arch", None)
        _STATE.ctx, _STATE.aot_arch = None, arch
        try:
            res = op.aot_fn(*op._call_args(op.aot_params, in_descs, attrs, {"outputs": tuple(out_descs),
                                                                             "tactic": tactic}))
        except Exception as e:  # noqa: BLE001 - user code: every failure becomes an opforge error
            raise _errors.InvalidArgumentError(f"{wt} raised {type(e).__name__}: {e}") from e
        finally:
            _STATE.ctx, _STATE.aot_arch = prev
        launches += [prefix + line for line in _variant_launches(res, wt, arch, ins, answer, images)]
    data = b"".join(images)
    new_attrs = {
        "op": op.key, "origin": f"python:{op.module}", "images": data,
        "image_sizes": np.array([len(b) for b in images], np.int64), "image_hash": fnv1a64(data), "arch": int(arch),
        "input_dtypes": np.array(dtypes, np.int32), "input_ranks": np.array(ranks, np.int32),
        "outputs": "\n".join(out_lines), "launches": "\n".join(launches),
    }
    if len(tactics) > 1:
        new_attrs["variant_tactics"] = np.array(tactics, np.int64)
    try:
        net._n.replace_node(index, AOT_OP, new_attrs)
    except _errors.OpforgeError as e:
        raise type(e)(f"{where_fn}: its answer is refused: {e}") from None


def _variant_launches(res, where_fn, arch, ins, answer, images):
    """The launch lines of one aot_impl answer; its images join `images` (shared, deduplicated)."""
    launches = []
    for li, (name, image, params, extra) in enumerate(_launches_of(res, where_fn)):
        lw = f"{where_fn}: launch {li}"
        if isinstance(name, bytes):
            name = name.decode("latin-1")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            raise _errors.InvalidArgumentError(f"{lw}: the kernel name is {name!r}, not an identifier (str)")
        if isinstance(image, (bytearray, memoryview)):
            image = bytes(image)
        try:
            kind, sm, names = image_info(image)
        except (ValueError, struct.error) as e:
            raise _errors.InvalidArgumentError(f"{lw} (kernel '{name}'): bad kernel image: {e}") from None
        if (kind == "cubin" and sm != arch) or (kind == "ptx" and sm > arch):
            raise _errors.InvalidArgumentError(
                f"{lw} (kernel '{name}'): the image is {'a cubin' if kind == 'cubin' else 'PTX'} for sm_{sm}, but the "
                f"build targets sm_{arch} (compile the kernel for sm_{arch}, or build with aot_arch='sm_{sm}')")
        if name not in names:
            raise _errors.InvalidArgumentError(f"{lw}: the {kind} has no kernel named '{name}' (it has: "
                                               f"{', '.join(sorted(names)) or 'none'})")
        if not isinstance(params, KernelLaunchParams):
            raise _errors.InvalidArgumentError(f"{lw} (kernel '{name}'): the launch parameters are "
                                               f"{type(params).__name__} {params!r:.100}, not ofp.KernelLaunchParams")
        if extra is None:
            extra = []
        if not isinstance(extra, (list, tuple)):
            raise _errors.InvalidArgumentError(f"{lw} (kernel '{name}'): the extra arguments are "
                                               f"{type(extra).__name__} {extra!r:.100}, not ofp.SymExprs (a list)")
        blob = image.encode("latin-1") if isinstance(image, str) else image
        if blob not in images:
            images.append(blob)
        args = [f"in{k}" for k in range(len(ins))]
        args += [_scalar_arg(x, f"{lw} (kernel '{name}'): extra argument {j}") for j, x in enumerate(extra)]
        args += [f"out{k}" for k in range(len(answer))]
        trailing = list(getattr(params, "trailing_args", []) or [])
        args += [_scalar_arg(x, f"{lw} (kernel '{name}'): trailing argument {j}") if x is not None else "null"
                 for j, x in enumerate(trailing)]
        if not trailing:
            # A Triton 3.x kernel compiled by the user takes one or two more pointers (global and
            # profile scratch); with no scratch sizes known, they are null (kernels needing global scratch
            # go through opforge.plugin.triton.launch, which sizes it from the metadata).
            try:
                count = param_count(blob, name)
            except (ValueError, struct.error):
                count = None
            if count is not None and 1 <= count - len(args) <= 2:
                args += ["null"] * (count - len(args))
        g = [_expr_text(getattr(params, f), f"{lw}: KernelLaunchParams.{f}") for f in KernelLaunchParams._FIELDS]
        launches.append(f"kernel={name}; image={images.index(blob)}; grid={g[0]}, {g[1]}, {g[2]}; "
                        f"block={g[3]}, {g[4]}, {g[5]}; shared={g[6]}; args={', '.join(args)}")
    return launches


def _where(fn):
    from . import _where as w
    return w(fn)


def lower_network(network, device="cuda", prefer_aot=None, arch=None, choices=None, log=None):
    """A copy of `network` with its AOT nodes lowered (or `network` itself when none is).
    choices: {node index: bool} from the nodes' `aot` attributes / add_plugin(aot=...)."""
    from . import _COMMITTED, commit
    from ..network import Network
    commit()
    merged = dict(getattr(network, "_aot", {}) or {})
    merged.update(choices or {})
    choices = merged
    arch = arch_number(arch) if arch is not None else default_arch()
    if prefer_aot is not None and not isinstance(prefer_aot, bool):
        raise _errors.InvalidArgumentError(f"prefer_aot is True, False or None, got {prefer_aot!r}")
    todo = []
    for i in range(network._n.num_nodes()):
        info = network._n.node(i)
        if not info["library"].startswith("python:") or info["op"] not in _COMMITTED:
            continue
        op = _COMMITTED[info["op"]]
        has_jit, has_aot = op.impl_fn is not None, op.aot_fn is not None
        choice = choices.get(i)
        label = f"node '{info['name']}' (op {op.key})"
        if choice is None:
            if device == "cpu":
                choice = not has_jit
            elif has_jit and has_aot:
                if prefer_aot is None:
                    raise _errors.InvalidArgumentError(
                        f"{label} has both an impl (JIT: {_where(op.impl_fn)}) and an aot_impl (AOT: "
                        f"{_where(op.aot_fn)}): choose with Engine.build(..., prefer_aot=True or False), or per node "
                        f"with the node attribute aot=1 / aot=0 (add_plugin(..., aot=True/False))")
                choice = prefer_aot
            else:
                choice = has_aot
        if choice and not has_aot:
            raise _errors.InvalidArgumentError(f"{label}: AOT is asked for (aot=1) but the op has no aot_impl "
                                               f"(define @ofp.aot_impl({op.key!r}))")
        if not choice and not has_jit:
            raise _errors.InvalidArgumentError(f"{label}: JIT is asked for (aot=0) but the op has no impl, only an "
                                               f"aot_impl (define @ofp.impl({op.key!r}))")
        if choice and device == "cpu":
            if has_jit:
                if log is not None:
                    log.append(f"{label}: AOT asked for, but a CPU build runs the impl (JIT)")
                continue
            raise _errors.UnsupportedError(
                f"{label}: the op has only an aot_impl ({_where(op.aot_fn)}), whose kernels run only on CUDA, and this "
                f"is a CPU build: build with device='cuda', or define an @ofp.impl({op.key!r}) for the CPU")
        if choice:
            todo.append((i, op))
    if not todo:
        return network
    out = Network.__new__(Network)
    out._n = network._n.clone()
    out._aot = {}
    for i, op in todo:
        tactics = [t for _, ts in op.combinations() for t in ts]
        lower_node(out, i, op, arch, tactics or [0])
    return out


def onnx_choices(path, network):
    """{node index: bool} from the `aot` attributes of an ONNX file's plugin nodes (matched by
    their first output's name)."""
    if not any(network._n.node(i)["library"].startswith("python:") for i in range(network._n.num_nodes())):
        return {}  # no op defined in Python: nothing to choose
    try:
        import onnx
    except ImportError:
        return {}
    model = onnx.load(str(path), load_external_data=False)
    by_output = {}
    for n in model.graph.node:
        for a in n.attribute:
            if a.name == "aot" and n.output:
                by_output[n.output[0]] = bool(onnx.helper.get_attribute_value(a))
    if not by_output:
        return {}
    out = {}
    for i in range(network._n.num_nodes()):
        info = network._n.node(i)
        if info["outputs"]:
            name = network._n.tensor_name(info["outputs"][0])
            if name in by_output:
                out[i] = by_output[name]
    return out
