"""The guide's circ_pad with two tactics under autotune: torch.nn.functional.pad and a NumPy
version (the guide's second tactic is an OpenAI Triton kernel; on the CPU backend NumPy stands in,
and it runs on host tensors only).
The builder times both and the plan says which won (layers()[k]["tactic"], `opforge inspect`)."""
from enum import IntEnum
from typing import List, Tuple

import numpy as np
import numpy.typing as npt
import torch

import opforge.plugin as ofp


class Tactic(IntEnum):
    TORCH = 1
    NUMPY = 2


@ofp.register("pyexample::circ_pad_tuned")
def circ_pad_tuned_desc(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
    ndim = inp0.ndim
    out_desc = inp0.like()
    for i in range(np.size(pads) // 2):
        out_desc.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out_desc


@ofp.autotune("pyexample::circ_pad_tuned")
def circ_pad_tuned_autotune(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32],
                            outputs: Tuple[ofp.TensorDesc]) -> List[ofp.AutoTuneCombination]:
    c = ofp.AutoTuneCombination()
    c.pos([0, 1], "FP32|FP16")
    c.tactics([int(Tactic.TORCH), int(Tactic.NUMPY)])
    return [c]


@ofp.impl("pyexample::circ_pad_tuned")
def circ_pad_tuned_impl(inp0: ofp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[ofp.Tensor], stream: int,
                        tactic: int) -> None:
    if tactic == Tactic.TORCH:
        inp_t = torch.as_tensor(inp0, device=inp0.device)
        out_t = torch.as_tensor(outputs[0], device=outputs[0].device)
        with ofp.torch_stream(stream, inp0.device):
            out_t.copy_(torch.nn.functional.pad(inp_t, pads.tolist(), mode="circular"))
    elif tactic == Tactic.NUMPY:
        x = np.asarray(inp0)
        width = [(0, 0)] * (x.ndim - len(pads) // 2) + [(int(pads[2 * i]), int(pads[2 * i + 1]))
                                                       for i in reversed(range(len(pads) // 2))]
        np.asarray(outputs[0])[...] = np.pad(x, width, mode="wrap")
    else:
        raise ValueError(f"unknown tactic {tactic}")
