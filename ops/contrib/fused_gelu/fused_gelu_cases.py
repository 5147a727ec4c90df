"""The Python test case of opforge::FusedGelu (tests/python/op_case.py)."""
import torch
import torch.nn.functional as F

from op_case import OpCase, randn

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


GELU_ATTRS = {"approximate": "none", "chain": [6, 1, 7, 3], "chain_scalars": [1.5, 0.0, -0.25, 0.0]}


def gelu_make(shape, attrs):
    return lambda dtype, device, seed=0: ((randn(shape, dtype, device, seed, 2.0),), dict(attrs))


CASE = OpCase(
    "opforge::FusedGelu", gelu_make((4, 33), GELU_ATTRS),
    lambda a, k: (fused_gelu_ref(a[0], **k),), [torch.float32, torch.float16, torch.bfloat16, torch.float64],
    grad=(torch.float64, [0], {}),
    second_shape=gelu_make((2, 3, 5), {"approximate": "tanh", "chain": [1]}),
)
