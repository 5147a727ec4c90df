"""The guide's in-place op: y = x + delta written into x (the output aliases the input)."""
from typing import Tuple

import torch

import opforge.plugin as ofp


@ofp.register("pyexample::elemwise_add_plugin_")
def add_plugin_desc_(inp0: ofp.TensorDesc, delta: int) -> ofp.TensorDesc:
    return inp0.aliased()


@ofp.impl("pyexample::elemwise_add_plugin_")
def add_plugin_impl_(inp0: ofp.Tensor, delta: int, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    inp_t = torch.as_tensor(inp0, device=inp0.device)
    out_t = torch.as_tensor(outputs[0], device=outputs[0].device)
    with ofp.torch_stream(stream, inp0.device):
        if out_t.data_ptr() != inp_t.data_ptr():  # a caller that does not alias (the autotuner's buffers)
            out_t.copy_(inp_t)
        out_t.add_(delta)
