"""ONNX export of models that call opforge ops, with both PyTorch exporters, from the ops' C++
definitions.

Each op becomes one node: op_type = the op's name, domain = its namespace, its attributes (every
declared attribute, defaults filled in), plus `plugin_namespace` and `plugin_version` — TensorRT's
ONNX parser convention, so the same file loads in opforge (`opforge exec --onnx`, Engine.build) and
in TensorRT's parser. The output shapes and types written to value_info come from the op's shape rule.

- dynamo=True (torch.export): translation_table() maps every torch op to a function that emits the
  node (onnxscript); each op is also registered as an ONNX OpSchema (onnx.defs) in its domain.
- dynamo=False (TorchScript): register_torchscript_symbolics() registers a symbolic function per op
  (torch.onnx.register_custom_op_symbolic) that emits the node and sets its outputs' types.

export(model, args, path, ...) does both with the right defaults (custom opset imports, dynamic
axes, value_info from the shape rules, a check that every opforge node is well formed).
"""
import os

import onnx

from .. import _errors, _ops, _shapes
from .. import torch as _otorch

__all__ = ["export", "translation_table", "register_torchscript_symbolics", "custom_opsets", "add_value_info",
           "opforge_nodes", "register_onnx_schemas", "unregister_onnx_schemas", "prepare_exported_program"]

DOMAIN_VERSION = 1

_ONNX_ATTR = {
    "int": onnx.AttributeProto.INT, "float": onnx.AttributeProto.FLOAT, "string": onnx.AttributeProto.STRING,
    "bool": onnx.AttributeProto.INT, "bytes": onnx.AttributeProto.STRING,
    "int8[]": onnx.AttributeProto.INTS, "int16[]": onnx.AttributeProto.INTS, "int32[]": onnx.AttributeProto.INTS,
    "int64[]": onnx.AttributeProto.INTS, "float16[]": onnx.AttributeProto.FLOATS,
    "float32[]": onnx.AttributeProto.FLOATS, "float64[]": onnx.AttributeProto.FLOATS, "bool[]": onnx.AttributeProto.INTS,
}


def _ops_by_domain():
    return {top.op.namespace for top in _otorch.registered().values()}


def custom_opsets():
    """{domain: version} of every loaded op's namespace (for opset_imports / custom_opsets)."""
    return {ns: DOMAIN_VERSION for ns in _ops_by_domain() if ns}


def _onnx_attrs(op, attrs):
    """Every declared attribute (defaults filled in) as ONNX-ready Python values, plus the plugin fields."""
    full = op.validate_attrs(attrs)
    out = {}
    for a in op.attrs:
        v = full.get(a["name"])
        if v is None:
            continue
        if a["type"] == "bool":
            v = int(bool(v))
        elif a["type"] == "bool[]":
            v = [int(bool(x)) for x in v]
        elif a["type"] == "bytes" and isinstance(v, bytes):
            v = v.decode("latin-1")
        out[a["name"]] = v
    out["plugin_namespace"] = op.namespace
    out["plugin_version"] = op.version
    return out


# ---- ONNX schemas (onnx.defs) ------------------------------------------------------------------

_SCHEMAS_DONE = set()


def register_onnx_schemas():
    """Registers an onnx.defs.OpSchema for every loaded op (domain = namespace, since version 1), so
    onnxscript can emit the node and onnx.checker knows its inputs and attributes. Returns the keys
    registered by this call (see unregister_onnx_schemas)."""
    # onnx.reference builds its table of schemas once, on first import, and refuses two ops of one
    # name in different domains (example::circ_pad_plugin and a Python op pyexample::circ_pad_plugin):
    # have it built from the standard schemas only, before ours are added.
    import onnx.reference.op_run  # noqa: F401
    added = []
    for top in _otorch.registered().values():
        op = top.op
        if op.key in _SCHEMAS_DONE or not op.namespace:
            continue
        try:
            onnx.defs.get_schema(op.name, DOMAIN_VERSION, op.namespace)
            _SCHEMAS_DONE.add(op.key)
            continue
        except onnx.defs.SchemaError:
            pass
        P = onnx.defs.OpSchema.FormalParameter
        Opt = onnx.defs.OpSchema.FormalParameterOption
        ins = [P(i["name"], f"T{k}", i["doc"] or i["name"],
                 param_option=Opt.Variadic if i["variadic"] else (Opt.Optional if i["optional"] else Opt.Single),
                 is_homogeneous=True, min_arity=1) for k, i in enumerate(op.inputs)]
        outs = [P(o["name"], f"O{k}", o["doc"] or o["name"],
                  param_option=Opt.Variadic if o["variadic"] else Opt.Single, is_homogeneous=True, min_arity=1)
                for k, o in enumerate(op.outputs)]
        all_types = ["tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)", "tensor(int8)",
                     "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(uint8)", "tensor(uint16)",
                     "tensor(uint32)", "tensor(uint64)", "tensor(bool)"]
        constraints = [(f"T{k}", all_types, "any type the op's combinations accept") for k in range(len(op.inputs))]
        constraints += [(f"O{k}", all_types, "the type the shape rule gives") for k in range(len(op.outputs))]
        attrs = [onnx.defs.OpSchema.Attribute(a["name"], _ONNX_ATTR[a["type"]], a["doc"] or a["name"], required=False)
                 for a in op.attrs if a["type"] in _ONNX_ATTR]
        attrs += [onnx.defs.OpSchema.Attribute("plugin_namespace", onnx.AttributeProto.STRING,
                                                "TensorRT plugin namespace", required=False),
                  onnx.defs.OpSchema.Attribute("plugin_version", onnx.AttributeProto.STRING,
                                               "TensorRT plugin version", required=False)]
        schema = onnx.defs.OpSchema(op.name, op.namespace, DOMAIN_VERSION, doc=op.doc or op.key, inputs=ins,
                                    outputs=outs, type_constraints=constraints, attributes=attrs)
        onnx.defs.register_schema(schema)
        _SCHEMAS_DONE.add(op.key)
        added.append(op.key)
    return added


def unregister_onnx_schemas(keys):
    """Removes schemas register_onnx_schemas added. opforge.onnx.export does this after a dynamo
    export: a registered schema makes onnx.checker hold every file's nodes of that op to it (for
    example, the plugin guide's files give `pads` as a TENSOR attribute, which opforge accepts)."""
    for key in keys:
        op = _ops.find(key)
        if op is None or key not in _SCHEMAS_DONE:
            continue
        try:
            onnx.defs.deregister_schema(op.name, DOMAIN_VERSION, op.namespace)
        except Exception:  # noqa: BLE001 - already gone
            pass
        _SCHEMAS_DONE.discard(key)


# ---- dynamo exporter ----------------------------------------------------------------------------

def _translation(top):
    import onnxscript
    op = top.op
    opset = onnxscript.values.Opset(op.namespace, DOMAIN_VERSION)

    def translate(*args, **kwargs):
        inputs, attrs = top.split(args, kwargs)
        flat = []
        for io, t in zip(op.inputs, inputs):
            if io["variadic"]:
                flat.extend(t or [])
            else:
                flat.append(t)
        while flat and flat[-1] is None:
            flat.pop()
        onnx_op = getattr(opset, op.name)
        n_out = len(op.outputs)
        # Empty lists have no element type to convert: left out here, added typed (the declared
        # INTS / FLOATS) by _restore_ir_types after the export.
        res = onnx_op(*flat, **{k: v for k, v in _onnx_attrs(op, attrs).items() if not (isinstance(v, list) and not v)})
        outs = list(res) if isinstance(res, (tuple, list)) else [res]
        _set_ir_types(op, attrs, flat, outs)
        if n_out == 1:
            return outs[0]
        return outs

    translate.__name__ = f"opforge_{top.ns}_{top.name}"
    return translate


def _set_ir_types(op, attrs, inputs, outputs):
    """Gives the outputs of an exported node (onnx_ir values) the types of the shape rule (the
    exporter sets their shapes from the fake kernel, which is the same rule)."""
    specs = []
    for k, v in enumerate(inputs):
        if v is None:
            specs.append(None)
        elif getattr(v, "dtype", None) is None or getattr(v, "shape", None) is None:
            return
        else:
            specs.append((int(v.dtype), [d if isinstance(d, int) else f"in{k}.{j}" for j, d in enumerate(v.shape)]))
    try:
        info = op.infer(attrs, specs, check_combos=False)
    except _errors.OpforgeError:
        return
    from onnxscript import ir
    for val, o in zip(outputs, info["outputs"]):
        if val is not None and getattr(val, "dtype", None) is None:
            val.dtype = ir.DataType(o["dtype"])


def _restore_ir_types(model):
    """The exporter's optimizer runs ONNX inference on every node with a schema; for opforge nodes
    (schemas without an inference function) that drops the output types. Put them back."""
    for node in model.graph:
        if node.domain in ("", "ai.onnx"):
            continue
        op = _ops.find(f"{node.domain}::{node.op_type}")
        if op is None:
            continue
        attrs = {}
        for name, a in node.attributes.items():
            decl = next((x for x in op.attrs if x["name"] == name), None)
            if decl is None:
                continue
            v = a.value
            if decl["type"] == "bool":
                v = bool(v)
            elif decl["type"] == "bool[]":
                v = [bool(x) for x in v]
            elif isinstance(v, (list, tuple)):
                v = list(v)
            attrs[name] = v
        _set_ir_types(op, attrs, list(node.inputs), list(node.outputs))
        # Declared attributes the translation left out (empty lists), with their declared type.
        from onnxscript import ir
        try:
            full = op.validate_attrs(attrs)
        except _errors.OpforgeError:
            continue
        for a in op.attrs:
            v = full.get(a["name"])
            if a["name"] in node.attributes or v is None or not isinstance(v, list) or v:
                continue
            kind = _ONNX_ATTR.get(a["type"])
            typ = ir.AttributeType.FLOATS if kind == onnx.AttributeProto.FLOATS else ir.AttributeType.INTS
            node.attributes[a["name"]] = ir.Attr(a["name"], typ, [])


def translation_table():
    """{torch op overload: translation function} for torch.onnx.export(..., dynamo=True,
    custom_translation_table=...). Registers the ops' ONNX schemas (register_onnx_schemas), which
    the translation functions need, and leaves them registered."""
    register_onnx_schemas()
    return _translation_table()


def _translation_table():
    table = {}
    for top in _otorch.registered().values():
        if not top.op.namespace:
            continue
        table[top.callable()] = _translation(top)
        if top.functional is not None:
            table[top.functional.callable()] = _translation(top.functional)
    return table


def _is_view(target):
    schema = getattr(target, "_schema", None)
    return schema is not None and any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def prepare_exported_program(ep):
    """Rewrites calls of in-place opforge ops in a torch.export graph (ATen training IR, where the
    mutation is still a call) into their out-of-place twins (<name>_functional: same kernel, same
    ONNX node), and makes later readers of the mutated tensor read the twin's result. Without it
    the exporter's functionalization wraps the call in auto_functionalized, which it cannot
    translate. An in-place call on a view is refused (clone the view first)."""
    import torch
    inplace = {top.callable(): top for top in _otorch.registered().values() if top.inplace}
    if not inplace:
        return ep
    gm = ep.graph_module
    g = gm.graph
    order = {n: i for i, n in enumerate(g.nodes)}
    changed = False
    for node in list(g.nodes):
        if node.op != "call_function" or node.target not in inplace:
            continue
        top = inplace[node.target]
        x = node.args[0]
        if isinstance(x, torch.fx.Node) and x.op == "call_function" and _is_view(x.target):
            raise _errors.UnsupportedError(
                f"{top.op.key} writes in place into a view ({x.target}); ONNX has no views: call it on "
                f"a copy (.clone()) or use {top.functional.qualname}")
        with g.inserting_after(node):
            new = g.call_function(top.functional.callable(), tuple(node.args), dict(node.kwargs))
        new.meta = dict(node.meta)
        node.replace_all_uses_with(new)
        if isinstance(x, torch.fx.Node):
            for user in list(x.users):
                if user is not node and user is not new and order.get(user, -1) > order[node]:
                    user.replace_input_with(x, new)
        g.erase_node(node)
        changed = True
    if changed:
        out = next(n for n in g.nodes if n.op == "output")
        flat = torch.utils._pytree.tree_leaves(out.args[0])
        for spec, arg in zip(ep.graph_signature.output_specs, flat):
            if isinstance(arg, torch.fx.Node) and hasattr(spec.arg, "name"):
                spec.arg.name = arg.name
        g.lint()
        gm.recompile()
    return ep


# ---- TorchScript exporter ------------------------------------------------------------------------

_TS_DONE = set()
_TORCH_SCALAR_CODES = {"Float": 1, "Byte": 2, "Char": 3, "Short": 5, "Int": 6, "Long": 7, "Bool": 9, "Half": 10,
                       "Double": 11, "BFloat16": 16}


def _ts_const(v, type_name):
    from torch.onnx import symbolic_helper as sh
    if sh._is_none(v):
        return None
    desc = {"int": "i", "float": "f", "string": "s", "bool": "b", "bytes": "s"}.get(type_name)
    if desc is None:
        desc = "fs" if type_name.startswith("float") else "is"
    val = sh._maybe_get_const(v, desc)
    if hasattr(val, "node"):  # still a graph value: not a constant
        raise _errors.UnsupportedError(f"attribute of type {type_name} must be a constant for ONNX export")
    if hasattr(val, "tolist"):
        val = val.tolist()
    if type_name == "bool[]":
        val = [bool(x) for x in val]
    return val


def _ts_symbolic(top, refuse=None):
    op = top.op
    n = len(top.arg_names)

    def symbolic(g, *args):
        from torch.onnx import symbolic_helper as sh
        if refuse:
            raise _errors.UnsupportedError(refuse)
        inputs, attr_vals = list(args[:n]), args[n:]
        attrs = {}
        for a, v in zip(op.attrs, attr_vals):
            val = _ts_const(v, a["type"])
            if val is not None:
                attrs[a["name"]] = val
        flat = []
        for io, v in zip(op.inputs, inputs):
            if io["variadic"]:
                flat.extend(sh._unpack_list(v))
            else:
                flat.append(None if v is None or sh._is_none(v) else v)
        while flat and flat[-1] is None:
            flat.pop()
        if any(v is None for v in flat):
            raise _errors.UnsupportedError(f"{op.key}: an omitted optional input before a present one cannot be exported "
                                           f"by the TorchScript exporter; use dynamo=True")
        kw = {}
        for name, v in _onnx_attrs(op, attrs).items():
            a = next((x for x in op.attrs if x["name"] == name), None)
            t = a["type"] if a else "string"
            suffix = "s" if t in ("string", "bytes") else ("f" if t.startswith("float") else "i")
            kw[f"{name}_{suffix}"] = v
        # Output types from the shape rule: known dims as ints, dynamic ones as None.
        specs, symbols = [], {}
        for k, v in enumerate(flat):
            st = v.type().scalarType() if v.type().kind() == "TensorType" else None
            sizes = sh._get_tensor_sizes(v) if st is not None else None
            code = _TORCH_SCALAR_CODES.get(st)
            if code is None or sizes is None:
                specs = None
                break
            dims = []
            for j, d in enumerate(sizes):
                if d is None:
                    dims.append(f"in{k}.{j}")
                else:
                    dims.append(int(d))
            specs.append((code, dims))
        res = None
        if specs is not None:
            try:
                res = op.infer(attrs, specs, check_combos=False)
            except _errors.OpforgeError:
                res = None
        n_out = len(op.outputs)
        outs = g.op(f"{op.namespace}::{op.name}", *flat, outputs=n_out, **kw)
        outs_l = list(outs) if n_out > 1 else [outs]
        if res is not None:
            import torch
            for o, (val, info) in enumerate(zip(outs_l, res["outputs"][:n_out])):
                sizes = [_shapes.to_int_or_none(e, symbols) for e in info["dims"]]
                val.setType(torch._C.TensorType.create_from_tensor(torch.empty(0, dtype=_shapes.torch_dtype(info["dtype"])))
                            .with_sizes(sizes))
        return outs

    return symbolic


def register_torchscript_symbolics(opset_versions=range(7, 24)):
    """Registers the TorchScript exporter's symbolic function of every loaded op."""
    import torch
    for top in _otorch.registered().values():
        if top.op.key in _TS_DONE or not top.op.namespace:
            continue
        refuse = None
        if top.inplace and not _otorch.INPLACE_RETURNS:
            # The op returns nothing here (PyTorch < 2.13): the tracer cannot see later readers of the
            # mutated tensor, so the graph would be wrong. opforge.torch.<name> traces correctly.
            refuse = (f"{top.qualname} returns nothing with this PyTorch, so the TorchScript exporter cannot follow "
                      f"its mutation; call opforge.torch.{top.name}(...) (it records {top.functional.qualname} and a "
                      f"copy_) or use dynamo=True")
        fn = _ts_symbolic(top, refuse)
        names = [top.qualname]
        if top.inplace and top.name.endswith("_"):
            # The TorchScript exporter treats a trailing "_" as PyTorch's in-place naming and looks
            # the symbolic up without it.
            names.append(top.qualname[:-1])
        pairs = [(name, fn) for name in names]
        if top.functional is not None:
            pairs.append((top.functional.qualname, _ts_symbolic(top.functional)))
        for name, f in pairs:
            for v in opset_versions:
                torch.onnx.register_custom_op_symbolic(name, f, v)
        _TS_DONE.add(top.op.key)


# ---- after export: value_info and checks ---------------------------------------------------------

def opforge_nodes(model):
    """The nodes of `model` (an onnx.ModelProto) that are loaded opforge ops: [(node, OpDef)]."""
    out = []
    for node in model.graph.node:
        if node.domain in ("", "ai.onnx"):
            continue
        op = _ops.find(f"{node.domain}::{node.op_type}")
        if op is not None:
            out.append((node, op))
    return out


def _type_of(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return t.elem_type, None
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return t.elem_type, dims


def _node_attrs(node, op):
    attrs = {}
    for a in node.attribute:
        decl = next((x for x in op.attrs if x["name"] == a.name), None)
        if decl is None:
            continue
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes) and decl["type"] == "string":
            v = v.decode()
        if decl["type"] == "bool":
            v = bool(v)
        if decl["type"] == "bool[]":
            v = [bool(x) for x in v]
        attrs[a.name] = list(v) if isinstance(v, (list, tuple)) else v
    return attrs


def _has_size_symbol(expr, res):
    syms = {s["symbol"] for s in res["size_tensors"]}
    found = []
    _shapes.evaluate(expr, lambda x: found.append(x) if isinstance(x, str) and x in syms else None,
                     lambda op, a, b: None)
    return bool(found)


def add_value_info(model):
    """Writes the type and shape of every output of an opforge node from the op's shape rule, into
    value_info (or the graph output's type): constant dimensions as dim_value, dynamic ones as
    dim_param text over the inputs' dim_params (for example "batch+4"; an exporter's existing
    dim_param name for the same dimension is kept). ONNX shape inference runs in between, so the
    shapes of standard ops downstream are filled in too. Returns the model."""
    for _ in range(len(model.graph.node) + 1):
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - inference is best effort; the export is valid without it
            pass
        known = {}
        for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
            if vi.type.tensor_type.elem_type:
                known[vi.name] = _type_of(vi)
        for init in model.graph.initializer:
            known[init.name] = (init.data_type, list(init.dims))
        changed = False
        for node, op in opforge_nodes(model):
            specs, symbols, ok = [], {}, True
            for k, name in enumerate(node.input):
                if not name:
                    specs.append(None)
                    continue
                if name not in known or known[name][1] is None:
                    ok = False
                    break
                code, dims = known[name]
                sd = []
                for j, d in enumerate(dims):
                    if isinstance(d, int):
                        sd.append(d)
                    else:
                        sym = f"in{k}.{j}"
                        symbols[sym] = d if d is not None else f"{name}_{j}"
                        sd.append(sym)
                specs.append((code, sd))
            if not ok:
                continue
            try:
                res = op.infer(_node_attrs(node, op), specs, check_combos=False, node=node.name or op.key)
            except _errors.OpforgeError:
                continue
            for s in res["size_tensors"]:
                symbols[s["symbol"]] = f"{node.name or op.name}_size{len(symbols)}".replace("/", "_")
            outs = {o.name: o for o in model.graph.output}
            existing = {vi.name: vi for vi in model.graph.value_info}
            for name, info in zip(node.output, res["outputs"]):
                if not name:
                    continue
                dims = [_shapes.to_text(e, symbols) for e in info["dims"]]
                old = known.get(name)
                if old is not None and old[1] is not None and len(old[1]) == len(dims):
                    # The rule's text wins (an exporter's generated names say nothing), except for a
                    # data-dependent size, which has no expression: keep the exporter's name for it.
                    dims = [o if isinstance(o, str) and _has_size_symbol(e, res) else d
                            for d, o, e in zip(dims, old[1], info["dims"])]
                if old is not None and old[0] == info["dtype"] and old[1] == dims:
                    continue
                vi = onnx.helper.make_tensor_value_info(name, info["dtype"], dims)
                if name in outs:
                    outs[name].type.CopyFrom(vi.type)
                elif name in existing:
                    existing[name].type.CopyFrom(vi.type)
                else:
                    model.graph.value_info.append(vi)
                changed = True
        if not changed:
            break
    return model


def _check(model, path):
    domains = {o.domain: o.version for o in model.opset_import}
    problems = []
    for node, op in opforge_nodes(model):
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("plugin_namespace", b"").decode() != op.namespace:
            problems.append(f"node {node.name}: plugin_namespace")
        if attrs.get("plugin_version", b"").decode() != op.version:
            problems.append(f"node {node.name}: plugin_version")
        if node.domain not in domains:
            problems.append(f"domain {node.domain} missing from opset_import")
    if problems:
        raise _errors.InternalError(f"{path}: exported opforge nodes are malformed: {'; '.join(problems)}")


def _make_function_module(fn):
    import torch

    class FunctionModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fn = fn

        def forward(self, *args, **kwargs):
            return self.fn(*args, **kwargs)

    return FunctionModule()


def _dynamic_shapes_from_axes(model, args, input_names, dynamic_axes):
    """TorchScript-style dynamic_axes ({input: {axis: name} or [axes]}) -> torch.export
    dynamic_shapes (Dim.DYNAMIC per listed axis) and the dim_param names to give the exported
    symbols. Inputs are the positional tensor arguments, named by input_names or by forward()'s
    parameter names."""
    import inspect
    import torch
    if input_names is None:
        fwd = model.forward if isinstance(model, torch.nn.Module) else model
        input_names = [p for p in inspect.signature(fwd).parameters]
    shapes, rename = [], {}
    for i, a in enumerate(args):
        name = input_names[i] if i < len(input_names) else None
        axes = dynamic_axes.get(name) if name is not None else None
        if axes is None or not isinstance(a, torch.Tensor):
            shapes.append(None)
            continue
        if not isinstance(axes, dict):
            axes = {int(ax): f"{name}_dim{ax}" for ax in axes}
        shapes.append({int(ax): torch.export.Dim.DYNAMIC for ax in axes})
        for ax, dim_name in axes.items():
            rename[(i, int(ax))] = str(dim_name)
    return tuple(shapes), rename


def _rename_dims(path, rename):
    """Gives the exporter's symbols (s0, s1 ...) the names dynamic_axes asked for, in every
    dim_param of the model (also inside expressions such as "s0 + 4")."""
    import re
    m = onnx.load(path)
    symbol_names = {}
    for (i, ax), name in rename.items():
        if i < len(m.graph.input):
            dims = m.graph.input[i].type.tensor_type.shape.dim
            if ax < len(dims) and dims[ax].HasField("dim_param"):
                symbol_names[dims[ax].dim_param] = name
    if not symbol_names:
        return
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(symbol_names, key=len, reverse=True)) + r")\b")

    def fix(vis):
        for vi in vis:
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param"):
                    d.dim_param = pattern.sub(lambda mm: symbol_names[mm.group(1)], d.dim_param)

    fix(m.graph.input)
    fix(m.graph.output)
    fix(m.graph.value_info)
    onnx.save(m, path)


def export(model, args, path, *, dynamo=True, input_names=None, output_names=None, dynamic_axes=None,
           dynamic_shapes=None, opset_version=None, kwargs=None, verify=True, **export_kwargs):
    """Exports `model` (an nn.Module, or a function for dynamo=False) called on `args` to `path`.

    dynamo=True: torch.onnx.export(dynamo=True) with translation_table() (opset 18 by default);
    dynamo=False: the TorchScript exporter with the registered symbolic functions and custom_opsets
    (opset 17 by default). dynamic_axes ({name: {axis: "name"}} or {name: [axes]}) works with both;
    dynamic_shapes is passed to torch.export. Afterwards value_info is completed from the shape
    rules and every opforge node is checked (plugin_namespace, plugin_version, opset import).
    Returns the path."""
    import torch
    with torch.no_grad():  # an inference graph (ops without a backward refuse tensors that need grad)
        return _export(model, args, path, dynamo, input_names, output_names, dynamic_axes, dynamic_shapes,
                       opset_version, kwargs, verify, export_kwargs)


def _export(model, args, path, dynamo, input_names, output_names, dynamic_axes, dynamic_shapes, opset_version,
            kwargs, verify, export_kwargs):
    import torch
    path = os.fspath(path)
    args = args if isinstance(args, tuple) else (args,)
    if dynamo:
        added = register_onnx_schemas()
        try:
            _export_dynamo(model, args, path, input_names, output_names, dynamic_axes, dynamic_shapes, opset_version,
                           kwargs, export_kwargs)
        finally:
            unregister_onnx_schemas(added)
    else:
        register_torchscript_symbolics()
        # Custom domains the model uses get version 1 (DOMAIN_VERSION) from the exporter itself.
        kw = dict(dynamo=False, opset_version=opset_version or 17)
        if input_names is not None:
            kw["input_names"] = input_names
        if output_names is not None:
            kw["output_names"] = output_names
        if dynamic_axes is not None:
            kw["dynamic_axes"] = dynamic_axes
        kw.update(export_kwargs)
        if kwargs:
            args = args + (kwargs,)
        module = model if isinstance(model, (torch.nn.Module, torch.jit.ScriptModule)) else _make_function_module(model)
        torch.onnx.export(module, args, path, **kw)
    m = onnx.load(path)
    m = add_value_info(m)
    for dom in {n.domain for n, _ in opforge_nodes(m)}:
        if dom not in {o.domain for o in m.opset_import}:
            m.opset_import.append(onnx.helper.make_opsetid(dom, DOMAIN_VERSION))
    if verify:
        _check(m, path)
    onnx.save(m, path)
    return path


def _export_dynamo(model, args, path, input_names, output_names, dynamic_axes, dynamic_shapes, opset_version, kwargs,
                   export_kwargs):
    import torch
    table = _translation_table()
    table.update(export_kwargs.pop("custom_translation_table", None) or {})
    rename = {}
    if dynamic_shapes is None and dynamic_axes is not None:
        dynamic_shapes, rename = _dynamic_shapes_from_axes(model, args, input_names, dynamic_axes)
    module = model if isinstance(model, torch.nn.Module) else _make_function_module(model)
    ep = torch.export.export(module, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes, strict=False)
    ep = prepare_exported_program(ep)
    kw = dict(dynamo=True, custom_translation_table=table, opset_version=opset_version or 18)
    if input_names is not None:
        kw["input_names"] = input_names
    if output_names is not None:
        kw["output_names"] = output_names
    kw.setdefault("verbose", False)
    kw.update(export_kwargs)
    prog = torch.onnx.export(ep, args, **kw)
    _restore_ir_types(prog.model)
    prog.save(path)
    if rename:
        _rename_dims(path, rename)
