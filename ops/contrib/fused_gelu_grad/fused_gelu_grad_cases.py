"""The Python test case of opforge::FusedGeluGrad (tests/python/op_case.py)."""
import torch

from op_case import OpCase, case_module, randn

_fwd = case_module("fused_gelu")
fused_gelu_f64, GELU_ATTRS = _fwd.fused_gelu_f64, _fwd.GELU_ATTRS


def fused_gelu_grad_ref(x, dy, approximate="none", chain=(), chain_scalars=()):
    xd = x.double().requires_grad_()
    (g,) = torch.autograd.grad(fused_gelu_f64(xd, approximate, chain, chain_scalars), xd, dy.double())
    return g.to(x.dtype)


def gelu_grad_make(shape, attrs):
    return lambda dtype, device, seed=0: ((randn(shape, dtype, device, seed, 2.0),
                                           randn(shape, dtype, device, seed + 1)), dict(attrs))


CASE = OpCase(
    "opforge::FusedGeluGrad", gelu_grad_make((4, 33), GELU_ATTRS),
    lambda a, k: (fused_gelu_grad_ref(a[0], a[1], **k),),
    [torch.float32, torch.float16, torch.bfloat16, torch.float64],
    second_shape=gelu_grad_make((2, 3, 5), {"approximate": "tanh", "chain": [5, 8], "chain_scalars": [0, 2.0]}),
    # The derivative chain multiplies several rounded factors: two roundings in half precision.
    tol={torch.float16: (2e-3, 4e-3), torch.bfloat16: (2e-2, 3.2e-2)},
)
