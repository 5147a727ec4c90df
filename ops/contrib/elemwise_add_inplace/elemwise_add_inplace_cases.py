"""The Python test case of sample::elemwise_add_plugin_ (tests/python/op_case.py)."""
import torch

from op_case import OpCase, randn


def add_make(shape, delta):
    return lambda dtype, device, seed=0: ((randn(shape, dtype, device, seed),), {"delta": delta})


CASE = OpCase(
    "sample::elemwise_add_plugin_", add_make((3, 4, 5), 3),
    # The kernel adds in the compute type of the storage (float for FP16) and rounds once.
    lambda a, k: ((a[0].double() + k["delta"]).to(a[0].dtype),), [torch.float32, torch.float16],
    second_shape=add_make((2, 7), -2),
)
