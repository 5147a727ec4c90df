"""The Python test case of example::non_zero_plugin (tests/python/op_case.py)."""
import torch

from op_case import OpCase, gen


def non_zero_ref(x):
    nz = (x != 0) | (torch.isnan(x) if x.is_floating_point() else torch.zeros_like(x, dtype=torch.bool))
    idx = nz.nonzero().to(torch.int32)
    return idx, torch.tensor(idx.shape[0], dtype=torch.int32)


def nz_make(shape):
    def make(dtype, device, seed=0):
        x = torch.randn(shape, generator=gen(seed))
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


CASE = OpCase(
    "example::non_zero_plugin", nz_make((7, 9)), lambda a, k: non_zero_ref(a[0]),
    [torch.float32, torch.float16, torch.int32, torch.bool],
    second_shape=nz_make((3, 17)),
)
