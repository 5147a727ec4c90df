"""Shared pieces of the opforge Python package's tests: tolerances, pure-PyTorch references of the
contrib ops, sample inputs per op, the seed models, and the checks every op and model goes through.

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


# ---- references (pure PyTorch, float64) ----------------------------------------------------------

def circ_pad_ref(x, pads):
    y = x
    n = x.dim()
    for i in range(len(pads) // 2):
        d = n - 1 - i
        size = x.shape[d]
        idx = torch.arange(-pads[2 * i], size + pads[2 * i + 1], device=x.device) % size
        y = y.index_select(d, idx)
    return y


def circ_pad_grad_ref(dy, pads):
    """Autograd of the reference padding (index_select's backward sums the wrapped positions)."""
    n = dy.dim()
    shape = list(dy.shape)
    for i in range(len(pads) // 2):
        shape[n - 1 - i] -= pads[2 * i] + pads[2 * i + 1]
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(circ_pad_ref(x, pads), x, dy.double())
    return g.to(dy.dtype)


def non_zero_ref(x):
    nz = (x != 0) | (torch.isnan(x) if x.is_floating_point() else torch.zeros_like(x, dtype=torch.bool))
    idx = nz.nonzero().to(torch.int32)
    return idx, torch.tensor(idx.shape[0], dtype=torch.int32)


_STAGES = {
    1: lambda t, c: F.gelu(t),
    2: lambda t, c: F.gelu(t, approximate="tanh"),
    3: lambda t, c: torch.relu(t),
    4: lambda t, c: torch.tanh(t),
    5: lambda t, c: torch.sigmoid(t),
    6: lambda t, c: t * c,
    7: lambda t, c: t + c,
    8: lambda t, c: t / c,
}


def fused_gelu_f64(x, approximate="none", chain=(), chain_scalars=()):
    t = F.gelu(x.double(), approximate=approximate)
    for k, code in enumerate(chain):
        t = _STAGES[code](t, chain_scalars[k] if chain_scalars else None)
    return t


def fused_gelu_ref(x, approximate="none", chain=(), chain_scalars=()):
    return fused_gelu_f64(x, approximate, chain, chain_scalars).to(x.dtype)


def fused_gelu_grad_ref(x, dy, approximate="none", chain=(), chain_scalars=()):
    xd = x.double().requires_grad_()
    (g,) = torch.autograd.grad(fused_gelu_f64(xd, approximate, chain, chain_scalars), xd, dy.double())
    return g.to(x.dtype)


def da_f64(feat, spatial, start, loc, weights):
    """Deformable aggregation as grid_sample (bilinear, zeros, align_corners=False) at 2*loc-1,
    times the open-interval mask (../shared/reference/deformable-aggregation.md), in float64."""
    feat, loc, weights = feat.double(), loc.double(), weights.double()
    B, _, C = feat.shape
    _, A, P, ncam, _ = loc.shape
    L, G = spatial.shape[1], weights.shape[-1]
    out = torch.zeros(B, A, C, dtype=torch.float64, device=feat.device)
    for c in range(ncam):
        u, v = loc[:, :, :, c, 0], loc[:, :, :, c, 1]
        mask = ((u > 0) & (u < 1) & (v > 0) & (v < 1)).double()
        for lv in range(L):
            H, W = int(spatial[c, lv, 0]), int(spatial[c, lv, 1])
            s = int(start[c, lv])
            fm = feat[:, s:s + H * W, :].reshape(B, H, W, C).permute(0, 3, 1, 2)
            samp = F.grid_sample(fm, loc[:, :, :, c, :] * 2 - 1, mode="bilinear", padding_mode="zeros",
                                 align_corners=False)  # [B, C, A, P]
            wt = weights[:, :, :, c, lv, :].repeat_interleave(C // G, dim=-1)  # [B, A, P, C]
            out = out + (samp.permute(0, 2, 3, 1) * wt * mask[..., None]).sum(2)
    return out


def da_ref(feat, spatial, start, loc, weights):
    return da_f64(feat, spatial, start, loc, weights).to(feat.dtype)


def da_grad_ref(feat, spatial, start, loc, weights, grad_out):
    f = feat.double().requires_grad_()
    lo = loc.double().requires_grad_()
    w = weights.double().requires_grad_()
    gf, gl, gw = torch.autograd.grad(da_f64(f, spatial, start, lo, w), (f, lo, w), grad_out.double())
    return gf.to(feat.dtype), gl.to(loc.dtype), gw.to(weights.dtype)


# ---- deformable aggregation inputs -----------------------------------------------------------------

# Sparse4Dv3 (ResNet-50 FPN, 256x704 input, 6 cameras): ../shared/reference/deformable-aggregation.md
SPARSE4D_FULL = dict(B=1, A=900, P=13, ncam=6, levels=((64, 176), (32, 88), (16, 44), (8, 22)), C=256, G=8)
# The same structure, small enough for the CPU references in CI.
SPARSE4D_SMALL = dict(B=2, A=24, P=5, ncam=3, levels=((8, 12), (4, 6), (2, 3)), C=32, G=4)


def da_tables(ncam, levels, device="cpu"):
    per_cam = sum(h * w for h, w in levels)
    spatial = torch.tensor([[list(hw) for hw in levels]] * ncam, dtype=torch.int32, device=device)
    offs = [sum(h * w for h, w in levels[:i]) for i in range(len(levels))]
    start = torch.tensor([[c * per_cam + o for o in offs] for c in range(ncam)], dtype=torch.int32, device=device)
    return spatial, start, per_cam * ncam


def da_inputs(B, A, P, ncam, levels, C, G, dtype=torch.float32, device="cpu", seed=0, valid=0.8, borders=True):
    """Features, tables, locations (a fraction `valid` inside (0, 1), the rest outside, with
    `borders` two exactly on the mask's border) and softmax weights. Gradient checks use
    borders=False: the mask is discontinuous there."""
    gen = torch.Generator().manual_seed(seed)
    spatial, start, F_ = da_tables(ncam, levels)
    feat = torch.randn(B, F_, C, generator=gen)
    loc = torch.rand(B, A, P, ncam, 2, generator=gen) * 0.96 + 0.02
    outside = torch.rand(B, A, P, ncam, generator=gen) > valid
    loc[outside] = loc[outside] * 0.5 + torch.tensor([1.05, -0.4])
    if borders:
        loc[0, 0, 0, 0] = torch.tensor([0.0, 0.5])  # on the mask's border: masked
        loc[0, 0, 1 % P, 0] = torch.tensor([0.5, 1.0])
    logits = torch.randn(B, A, P * ncam * len(levels), G, generator=gen)
    weights = logits.softmax(-2).reshape(B, A, P, ncam, len(levels), G)
    loc_t = torch.float64 if dtype == torch.float64 else torch.float32
    return (feat.to(dtype).to(device), spatial.to(device), start.to(device), loc.to(loc_t).to(device),
            weights.to(loc_t).to(device))


# ---- the ops: sample inputs, references, differentiable inputs ----------------------------------------

class OpCase:
    """How one op is tested: calls (args, attrs) per dtype, the reference, which inputs have
    gradients, the dtype of the gradient check, which inputs are constants in an exported model."""

    def __init__(self, key, make, reference, dtypes, grad=None, constants=(), second_shape=None, tol=None,
                 grad_tol=None, grad_make=None):
        self.key = key
        self.make = make              # (dtype, device, seed) -> (args tuple, attrs dict)
        self.reference = reference    # (args, attrs) -> tuple of expected outputs
        self.dtypes = dtypes
        self.grad = grad              # (dtype, inputs with gradients, gradcheck kwargs) or None
        self.constants = constants    # input indices held as buffers (initializers) in exported models
        self.second_shape = second_shape  # another call with other shapes (dynamic-shape checks)
        self.tol = tol or {}
        self.grad_tol = grad_tol
        self.grad_make = grad_make or make  # inputs for the gradient checks (away from kinks)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _randn(shape, dtype, device, seed, scale=1.0):
    return (torch.randn(shape, generator=_gen(seed), dtype=torch.float64) * scale).to(dtype).to(device)


def _circ_make(shape, pads):
    return lambda dtype, device, seed=0: ((_randn(shape, dtype, device, seed),), {"pads": pads})


def _circ_grad_make(shape, pads):
    def make(dtype, device, seed=0):
        out = list(shape)
        for i in range(len(pads) // 2):
            out[len(shape) - 1 - i] += pads[2 * i] + pads[2 * i + 1]
        return (_randn(out, dtype, device, seed),), {"pads": pads}
    return make


def _nz_make(shape):
    def make(dtype, device, seed=0):
        x = torch.randn(shape, generator=_gen(seed))
        x[x.abs() < 0.6] = 0
        if dtype == torch.bool:
            x = x != 0
        elif dtype in (torch.float32, torch.float16):
            x = x.to(dtype)
            x.view(-1)[1] = float("nan")  # NaN counts as non-zero
        else:
            x = (x * 4).to(dtype)
        return (x.to(device),), {}
    return make


def _add_make(shape, delta):
    return lambda dtype, device, seed=0: ((_randn(shape, dtype, device, seed),), {"delta": delta})


GELU_ATTRS = {"approximate": "none", "chain": [6, 1, 7, 3], "chain_scalars": [1.5, 0.0, -0.25, 0.0]}


def _gelu_make(shape, attrs):
    return lambda dtype, device, seed=0: ((_randn(shape, dtype, device, seed, 2.0),), dict(attrs))


def _gelu_grad_make(shape, attrs):
    return lambda dtype, device, seed=0: ((_randn(shape, dtype, device, seed, 2.0),
                                           _randn(shape, dtype, device, seed + 1)), dict(attrs))


def _da_make(size, borders=True):
    return lambda dtype, device, seed=0: (da_inputs(**size, dtype=dtype, device=device, seed=seed,
                                                    borders=borders), {})


def _da_grad_make(size):
    def make(dtype, device, seed=0):
        ins = da_inputs(**size, dtype=dtype, device=device, seed=seed)
        g = _randn((size["B"], size["A"], size["C"]), dtype, device, seed + 7)
        return ins + (g,), {}
    return make


DA_SMALL2 = dict(B=1, A=10, P=3, ncam=2, levels=((6, 8), (3, 4)), C=16, G=2)

OP_CASES = {
    "example::circ_pad_plugin": OpCase(
        "example::circ_pad_plugin", _circ_make((2, 3, 5, 6), [1, 2, 3, 0]),
        lambda a, k: (circ_pad_ref(a[0], k["pads"]),), [torch.float32, torch.float16, torch.bfloat16],
        # The forward op declares FP32/FP16/BF16 only, so the gradient check runs in float32: the op
        # is a copy, so central differences with eps 1e-2 are exact up to input rounding (~1e-5).
        grad=(torch.float32, [0], dict(eps=1e-2, atol=1e-3, rtol=1e-3)),
        second_shape=_circ_make((1, 4, 3, 9, 2), [2, 7, 1, 1]),  # pads larger than the dimension wrap twice
    ),
    "example::circ_pad_plugin_grad": OpCase(
        "example::circ_pad_plugin_grad", _circ_grad_make((2, 3, 5, 6), [1, 2, 3, 0]),
        lambda a, k: (circ_pad_grad_ref(a[0], k["pads"]),),
        [torch.float32, torch.float16, torch.bfloat16, torch.float64],
        second_shape=_circ_grad_make((3, 2, 4), [4, 5]),
    ),
    "example::non_zero_plugin": OpCase(
        "example::non_zero_plugin", _nz_make((7, 9)), lambda a, k: non_zero_ref(a[0]),
        [torch.float32, torch.float16, torch.int32, torch.bool],
        second_shape=_nz_make((3, 17)),
    ),
    "sample::elemwise_add_plugin_": OpCase(
        "sample::elemwise_add_plugin_", _add_make((3, 4, 5), 3),
        # The kernel adds in the compute type of the storage (float for FP16) and rounds once.
        lambda a, k: ((a[0].double() + k["delta"]).to(a[0].dtype),), [torch.float32, torch.float16],
        second_shape=_add_make((2, 7), -2),
    ),
    "opforge::FusedGelu": OpCase(
        "opforge::FusedGelu", _gelu_make((4, 33), GELU_ATTRS),
        lambda a, k: (fused_gelu_ref(a[0], **k),), [torch.float32, torch.float16, torch.bfloat16, torch.float64],
        grad=(torch.float64, [0], {}),
        second_shape=_gelu_make((2, 3, 5), {"approximate": "tanh", "chain": [1]}),
    ),
    "opforge::FusedGeluGrad": OpCase(
        "opforge::FusedGeluGrad", _gelu_grad_make((4, 33), GELU_ATTRS),
        lambda a, k: (fused_gelu_grad_ref(a[0], a[1], **k),),
        [torch.float32, torch.float16, torch.bfloat16, torch.float64],
        second_shape=_gelu_grad_make((2, 3, 5), {"approximate": "tanh", "chain": [5, 8], "chain_scalars": [0, 2.0]}),
        # The derivative chain multiplies several rounded factors: two roundings in half precision.
        tol={torch.float16: (2e-3, 4e-3), torch.bfloat16: (2e-2, 3.2e-2)},
    ),
    "opforge::DeformableAggregation": OpCase(
        "opforge::DeformableAggregation", _da_make(SPARSE4D_SMALL), lambda a, k: (da_ref(*a),),
        [torch.float32, torch.float16, torch.bfloat16, torch.float64],
        grad=(torch.float64, [0, 3, 4], {}), grad_make=_da_make(DA_SMALL2, borders=False),
        constants=(1, 2), second_shape=_da_make(DA_SMALL2),
        # Sums of P*Ncam*L*4 = 180 products: float32 inputs are exact, the result is rounded once, but
        # half-precision features give outputs ~|1| whose rounding is relative to the largest term.
        tol={torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2)},
    ),
    "opforge::DeformableAggregationGrad": OpCase(
        "opforge::DeformableAggregationGrad", _da_grad_make(DA_SMALL2), lambda a, k: da_grad_ref(*a),
        [torch.float32, torch.float64], constants=(1, 2), second_shape=_da_grad_make(SPARSE4D_SMALL),
        # Location gradients are sums of W*g*wt*dBIL/dx over levels and channels (W up to 12): in
        # float32 a few 1e-6 relative to the largest term.
        tol={torch.float32: (1e-4, 1e-4)},
    ),
}


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

