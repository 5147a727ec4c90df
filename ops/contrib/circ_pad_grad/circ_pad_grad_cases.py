"""The Python test case of example::circ_pad_plugin_grad (tests/python/op_case.py)."""
import torch

from op_case import OpCase, case_module, randn

circ_pad_ref = case_module("circ_pad").circ_pad_ref


def circ_pad_grad_ref(dy, pads):
    """Autograd of the reference padding (index_select's backward sums the wrapped positions)."""
    n = dy.dim()
    shape = list(dy.shape)
    for i in range(len(pads) // 2):
        shape[n - 1 - i] -= pads[2 * i] + pads[2 * i + 1]
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(circ_pad_ref(x, pads), x, dy.double())
    return g.to(dy.dtype)


def circ_grad_make(shape, pads):
    def make(dtype, device, seed=0):
        out = list(shape)
        for i in range(len(pads) // 2):
            out[len(shape) - 1 - i] += pads[2 * i] + pads[2 * i + 1]
        return (randn(out, dtype, device, seed),), {"pads": pads}
    return make


CASE = OpCase(
    "example::circ_pad_plugin_grad", circ_grad_make((2, 3, 5, 6), [1, 2, 3, 0]),
    lambda a, k: (circ_pad_grad_ref(a[0], k["pads"]),),
    [torch.float32, torch.float16, torch.bfloat16, torch.float64],
    second_shape=circ_grad_make((3, 2, 4), [4, 5]),
)
