"""Shared pieces of the opforge Python package's tests: tolerances, the table of the contrib ops'
cases, the seed models, and the checks every op and model goes through.

Each op's case (its pure-PyTorch float64 reference, sample inputs, dtypes, gradient check,
tolerance overrides) lives in the op's folder, ops/contrib/<op>/<op>_cases.py; OP_CASES collects
them (tests/python/op_case.py), and the references other tests use are re-exported here.

Tolerances (|got - want| <= atol + rtol * |want|, want = the float64 reference rounded to the
tested dtype; NaN or Inf in an output never passes unless the reference has it at that position):
  float64   atol 1e-10  rtol 1e-10   the CPU references accumulate in float64 in another order
  float32   atol 1e-5   rtol 1e-5    one rounding of a float64 result, plus sums of a few terms
  float16   atol 1e-3   rtol 2e-3    half's epsilon is 9.8e-4 (one rounding plus input rounding)
  bfloat16  atol 1e-2   rtol 1.6e-2  bfloat16's epsilon is 7.8e-3
  integers  exact
Per-check overrides are written where they are used, with the reason.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import opforge  # noqa: F401  (registers torch.ops.example / sample / opforge)
from op_case import OpCase, case_module, op_cases  # noqa: F401  (OpCase: for the tests)

ROOT = pathlib.Path(__file__).resolve().parents[2]

TOL = {
    torch.float64: (1e-10, 1e-10),
    torch.float32: (1e-5, 1e-5),
    torch.float16: (1e-3, 2e-3),
    torch.bfloat16: (1e-2, 1.6e-2),
}

CUDA = torch.cuda.is_available()
gpu = pytest.mark.gpu
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device visible to PyTorch")


def assert_close(got, want, atol=None, rtol=None, what="output"):
    """Compares a tensor with its reference; the reference's dtype picks the tolerance."""
    got = got.detach().cpu() if isinstance(got, torch.Tensor) else torch.as_tensor(got)
    want = want.detach().cpu() if isinstance(want, torch.Tensor) else torch.as_tensor(want)
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    if not (got.is_floating_point() or got.is_complex()):
        diff = (got != want).nonzero()
        assert diff.numel() == 0, f"{what}: {diff.shape[0]} elements differ, first at {diff[0].tolist()}: " \
                                  f"{got[tuple(diff[0])]} vs {want[tuple(diff[0])]}"
        return
    d_atol, d_rtol = TOL[want.dtype]
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    g, w = got.double(), want.double()
    special = ~torch.isfinite(w)
    bad_special = special & ~((g == w) | (torch.isnan(g) & torch.isnan(w)))
    assert not bad_special.any(), f"{what}: non-finite reference values not matched at {bad_special.nonzero()[0].tolist()}"
    nonfinite = ~torch.isfinite(g) & ~special
    assert not nonfinite.any(), f"{what}: non-finite output {g[tuple(nonfinite.nonzero()[0])]} at " \
                                f"{nonfinite.nonzero()[0].tolist()} (reference finite)"
    err = (g - w).abs()
    bound = atol + rtol * w.abs()
    err[special] = 0
    over = err > bound
    if over.any():
        i = np.unravel_index(int((err - bound).flatten().argmax()), err.shape)
        raise AssertionError(f"{what}: {int(over.sum())} of {err.numel()} elements exceed atol {atol} + rtol {rtol}; "
                             f"worst at {list(i)}: {g[i].item()} vs {w[i].item()} (|diff| {err[i].item():.3g})")


# ---- the ops' cases (ops/contrib/<op>/<op>_cases.py) ----------------------------------------------

OP_CASES = op_cases()

circ_pad_ref = case_module("circ_pad").circ_pad_ref
circ_pad_grad_ref = case_module("circ_pad_grad").circ_pad_grad_ref
non_zero_ref = case_module("non_zero").non_zero_ref
fused_gelu_ref = case_module("fused_gelu").fused_gelu_ref
fused_gelu_grad_ref = case_module("fused_gelu_grad").fused_gelu_grad_ref
_da = case_module("deformable_aggregation")
da_f64, da_ref, da_tables, da_inputs = _da.da_f64, _da.da_ref, _da.da_tables, _da.da_inputs
SPARSE4D_FULL, SPARSE4D_SMALL = _da.SPARSE4D_FULL, _da.SPARSE4D_SMALL
da_grad_ref = case_module("deformable_aggregation_grad").da_grad_ref


def op_call(key, args, attrs):
    """Calls an op through its opforge.torch wrapper (an in-place op returns its mutated input)."""
    return opforge.torch.function(key)(*args, **attrs)


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class OneOp(nn.Module):
    """A module calling one op with fixed attributes; `consts` ({input index: tensor}) become buffers
    (initializers in the exported model), the other inputs are the module's arguments."""

    def __init__(self, key, attrs, consts=None):
        super().__init__()
        self.key = key
        self.attrs = dict(attrs)
        self.const_idx = sorted((consts or {}).keys())
        for i, c in (consts or {}).items():
            self.register_buffer(f"c{i}", c)

    def forward(self, *xs):
        args = list(xs)
        for i in self.const_idx:
            args.insert(i, getattr(self, f"c{i}"))
        if opforge.torch.registered(self.key).inplace and not opforge.torch.INPLACE_RETURNS:
            args[0] = args[0] * 1  # PyTorch < 2.13: the traced in-place call must not write a graph input
        return op_call(self.key, tuple(args), self.attrs)


# ---- seed models -------------------------------------------------------------------------------------

class MyNet(nn.Module):
    """The GELU seed's model: GELU(GELU(x)) with nn.GELU (the exporters write the erf form or Gelu)."""

    def __init__(self):
        super().__init__()
        self.gelu = nn.GELU()

    def forward(self, x):
        return self.gelu(self.gelu(x))


class MyNetFused(nn.Module):
    """MyNet through the opforge op (the seed's MyGelu Function, generated): chain [1] = a second GELU."""

    def forward(self, x):
        return opforge.torch.FusedGelu(x, chain=[1])


class CircPadNet(nn.Module):
    """Two convolutions with circular padding between them (the plugin guide's padding example in a
    network). `reference=True` pads with F.pad(mode="circular") instead of the opforge op."""

    def __init__(self, reference=False):
        super().__init__()
        torch.manual_seed(3)
        self.conv1 = nn.Conv2d(3, 8, 3)
        self.conv2 = nn.Conv2d(8, 4, 3)
        self.reference = reference

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        if self.reference:
            y = F.pad(y, (2, 2, 1, 1), mode="circular")
        else:
            y = opforge.torch.circ_pad_plugin(y, [2, 2, 1, 1])
        return self.conv2(y)


class NonZeroNet(nn.Module):
    """Non-zero of a thresholded map, then arithmetic on the data-dependent result."""

    def __init__(self, reference=False):
        super().__init__()
        self.reference = reference

    def forward(self, x):
        m = torch.relu(x - 0.5)
        if self.reference:
            idx = m.nonzero().to(torch.int32)
            cnt = torch.tensor(idx.shape[0], dtype=torch.int32)
        else:
            idx, cnt = opforge.torch.non_zero_plugin(m)
        return idx, cnt, idx.to(torch.float32) * 0.5 + 1.0


class InPlaceAddNet(nn.Module):
    """A convolution, the in-place add (TensorRT's aliasing sample) on its output, then more work on
    the modified tensor."""

    def __init__(self, reference=False):
        super().__init__()
        torch.manual_seed(4)
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.reference = reference

    def forward(self, x):
        y = self.conv(x)
        if self.reference:
            y = y + 2
        else:
            opforge.torch.elemwise_add_plugin_(y, 2)
        return torch.sigmoid(y) * 2


class Sparse4DAggregation(nn.Module):
    """Sparse4Dv3's deformable aggregation step: per-group weights from the instance features
    (a softmax over the P*Ncam*L entries of each group), the op, and an output projection.
    `reference=True` computes the op as grid_sample (float64 inside)."""

    def __init__(self, B, A, P, ncam, levels, C, G, embed=32, reference=False):
        super().__init__()
        torch.manual_seed(5)
        self.P, self.ncam, self.L, self.G = P, ncam, len(levels), G
        spatial, start, _ = da_tables(ncam, levels)
        self.register_buffer("spatial_shape", spatial)
        self.register_buffer("scale_start_index", start)
        self.weights_fc = nn.Linear(embed, P * ncam * len(levels) * G)
        self.output_proj = nn.Linear(C, C)
        self.reference = reference

    def forward(self, feature_maps, instance_feature, key_points):
        B, A = instance_feature.shape[:2]
        w = self.weights_fc(instance_feature).reshape(B, A, -1, self.G).softmax(dim=-2)
        w = w.reshape(B, A, self.P, self.ncam, self.L, self.G)
        if self.reference:
            f = da_f64(feature_maps, self.spatial_shape, self.scale_start_index, key_points, w).to(feature_maps.dtype)
        else:
            f = opforge.torch.DeformableAggregation(feature_maps, self.spatial_shape, self.scale_start_index,
                                                    key_points, w)
        return self.output_proj(f)


# ---- checks shared by the tests --------------------------------------------------------------------------

def opcheck(key, args, attrs):
    """torch.library.opcheck: schema, autograd registration, fake tensor, AOT dispatch (dynamic)."""
    top = opforge.torch.registered(key)
    res = torch.library.opcheck(top.callable(), args, attrs)
    assert all(v == "SUCCESS" for v in res.values()), f"{key}: {res}"
    return res


def compile_and_compare(fn, calls, backend="aot_eager", atol=None, rtol=None, what="compiled"):
    """Runs fn under torch.compile(fullgraph=True, dynamic=True) (fullgraph: any graph break is an
    error) on each call's inputs and compares with eager."""
    torch._dynamo.reset()
    cfn = torch.compile(fn, fullgraph=True, dynamic=True, backend=backend)
    for args in calls:
        want = as_tuple(fn(*[a.clone() for a in args]))
        got = as_tuple(cfn(*[a.clone() for a in args]))
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, atol, rtol, f"{what} output {k}")


def onnx_nodes(path, domain=None):
    import onnx
    m = onnx.load(str(path))
    return [n for n in m.graph.node if domain is None or n.domain == domain]


def check_plugin_node(path, key, attrs):
    """The exported file has exactly one node of op `key`, TensorRT-style: op_type = name, domain =
    namespace, every declared attribute (defaults filled in) with the given values, plugin_namespace
    and plugin_version, the domain in opset_import; its outputs have value_info / output types."""
    import onnx
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    op = opforge.find(key)
    nodes = [n for n in m.graph.node if n.domain == op.namespace and n.op_type == op.name]
    assert len(nodes) == 1, f"{path}: {len(nodes)} {key} nodes: {[(n.domain, n.op_type) for n in m.graph.node]}"
    node = nodes[0]
    got = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert got.pop("plugin_namespace") == op.namespace.encode()
    assert got.pop("plugin_version") == op.version.encode()
    full = op.validate_attrs(attrs)
    assert set(got) == set(full), f"attributes {sorted(got)} vs declared {sorted(full)}"
    for name, want in full.items():
        g = got[name]
        if isinstance(g, bytes):
            g = g.decode()
        if isinstance(want, bool):
            want = int(want)
        if isinstance(want, list):
            assert list(g) == pytest.approx([float(v) for v in want]) if want and isinstance(want[0], float) \
                else list(g) == [int(v) for v in want], f"attribute {name}: {g} vs {want}"
        elif isinstance(want, float):
            assert g == pytest.approx(want, rel=1e-6)
        else:
            assert g == want, f"attribute {name}: {g!r} vs {want!r}"
    assert any(o.domain == op.namespace and o.version == 1 for o in m.opset_import), m.opset_import
    typed = {vi.name: vi for vi in list(m.graph.value_info) + list(m.graph.output)}
    for o in node.output:
        assert o in typed, f"output {o} of the {key} node has no value_info"
        assert typed[o].type.tensor_type.elem_type != 0, f"output {o} has no type"
    return node, typed


def out_dims(vi):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def build_cpu(path, **kw):
    """Engine.build for a CPU plan (the CPU tests compare against the CPU references; the GPU
    variants build CUDA plans explicitly)."""
    return opforge.Engine.build(path, device="cpu", **kw)


def engine_run_compare(engine, feeds, want, atol=None, rtol=None, what="engine"):
    """engine.run on NumPy arrays and on torch tensors; both compared with `want` (tensors)."""
    got_np = engine.run({k: v.detach().cpu().numpy() for k, v in feeds.items()})
    names = [o["name"] for o in engine.outputs]
    assert list(got_np) == names
    for n, w in zip(names, want):
        assert isinstance(got_np[n], np.ndarray)
        assert_close(torch.from_numpy(got_np[n]), w, atol, rtol, f"{what} {n} (numpy)")
    got_t = engine.run(dict(feeds))
    for n, w in zip(names, want):
        assert isinstance(got_t[n], torch.Tensor)
        assert_close(got_t[n], w, atol, rtol, f"{what} {n} (torch)")
    return got_np


def run_python(code, env=None, cwd=None):
    """Runs `code` in a fresh interpreter; returns the CompletedProcess."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=cwd, timeout=300)

