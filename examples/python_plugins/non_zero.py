"""The guide's data-dependent output shape: the indices of the non-zero elements of a 2-D tensor,
sized by a size tensor (upper bound M*N, tuned for half of it)."""
from typing import Tuple

import numpy as np
import torch

import opforge.plugin as ofp


@ofp.register("pyexample::non_zero_plugin")
def non_zero_plugin_desc(inp0: ofp.TensorDesc) -> Tuple[ofp.TensorDesc, ofp.TensorDesc]:
    upper_bound = inp0.shape_expr[0] * inp0.shape_expr[1]
    st = ofp.size_tensor(upper_bound // 2, upper_bound)
    return ofp.from_shape_expr((st.expr(), 2), dtype=np.int32), st


@ofp.impl("pyexample::non_zero_plugin")
def non_zero_plugin_impl(inp0: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    inp_t = torch.as_tensor(inp0, device=inp0.device)
    out_1 = torch.as_tensor(outputs[0], device=outputs[0].device)   # [upper bound, 2]
    out_2 = torch.as_tensor(outputs[1], device=outputs[1].device)   # the size tensor (0-D INT32)
    with ofp.torch_stream(stream, inp0.device):
        nz = torch.nonzero(inp_t).to(torch.int32)
        out_1[:nz.shape[0]].copy_(nz)
        out_2.fill_(nz.shape[0])
