"""The Python test case of example::circ_pad_plugin (tests/python/op_case.py)."""
import torch

from op_case import OpCase, randn


def circ_pad_ref(x, pads):
    y = x
    n = x.dim()
    for i in range(len(pads) // 2):
        d = n - 1 - i
        size = x.shape[d]
        idx = torch.arange(-pads[2 * i], size + pads[2 * i + 1], device=x.device) % size
        y = y.index_select(d, idx)
    return y


def circ_make(shape, pads):
    return lambda dtype, device, seed=0: ((randn(shape, dtype, device, seed),), {"pads": pads})


CASE = OpCase(
    "example::circ_pad_plugin", circ_make((2, 3, 5, 6), [1, 2, 3, 0]),
    lambda a, k: (circ_pad_ref(a[0], k["pads"]),), [torch.float32, torch.float16, torch.bfloat16],
    # The forward op declares FP32/FP16/BF16 only, so the gradient check runs in float32: the op
    # is a copy, so central differences with eps 1e-2 are exact up to input rounding (~1e-5).
    grad=(torch.float32, [0], dict(eps=1e-2, atol=1e-3, rtol=1e-3)),
    second_shape=circ_make((1, 4, 3, 9, 2), [2, 7, 1, 1]),  # pads larger than the dimension wrap twice
)
