"""The guide's circ_pad as an OpenAI Triton kernel compiled ahead of time (@ofp.aot_impl): a CUDA
build replaces the node by an opforge::AotKernel layer holding the kernel's cubin and its launch
(grid, block, arguments as expressions of the input shape), so the plan runs in the C++ runtime —
`opforge exec --loadEngine=P` — with no Python in the process.

    python3 examples/python_plugins/circ_pad_aot.py PLAN   # builds the plan (CUDA), saves it to PLAN

Pads: 2 or 4 values, (left, right[, top, bottom]) of the last one or two dimensions, as
torch.nn.functional.pad takes them; FP32 or FP16, rank 2 or more.
"""
from typing import Tuple

import numpy as np
import numpy.typing as npt
import triton
import triton.language as tl

import opforge.plugin as ofp
from opforge.plugin import triton as oft


@triton.jit
def circ_pad_kernel(x, H, W, HO, WO, top, left, total, y, BLOCK: tl.constexpr):
    """y[nc, ho, wo] = x[nc, (ho - top) mod H, (wo - left) mod W] over the flat output index."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    wo = offs % WO
    t = offs // WO
    ho = t % HO
    nc = t // HO
    wi = ((wo - left) % W + W) % W
    hi = ((ho - top) % H + H) % H
    v = tl.load(x + (nc * H + hi) * W + wi, mask=m)
    tl.store(y + offs, v, mask=m)


BLOCK = 256
_TYPES = {ofp.DataType.FLOAT32: "*fp32", ofp.DataType.FLOAT16: "*fp16"}


@ofp.register("pyexample::circ_pad_aot")
def circ_pad_aot_desc(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
    """Circular padding of the last len(pads)/2 dimensions (a Triton kernel, AOT)."""
    if np.size(pads) not in (2, 4) or inp0.ndim < 2 or np.any(np.asarray(pads) < 0):
        raise ValueError(f"pads must be 2 or 4 values >= 0 for an input of rank >= 2, got {list(pads)} for rank "
                         f"{inp0.ndim}")
    ndim = inp0.ndim
    out_desc = inp0.like()
    for i in range(np.size(pads) // 2):
        out_desc.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out_desc


@ofp.aot_impl("pyexample::circ_pad_aot")
def circ_pad_aot_impl(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32], outputs: Tuple[ofp.TensorDesc],
                      tactic: int):
    if inp0.dtype not in _TYPES:
        raise TypeError(f"circ_pad_aot takes FP32 or FP16, got {inp0.dtype.name}")
    t = _TYPES[inp0.dtype]
    sig = {"x": t, "H": "i64", "W": "i64", "HO": "i64", "WO": "i64", "top": "i64", "left": "i64", "total": "i64",
           "y": t}
    img = oft.compile(circ_pad_kernel, sig, {"BLOCK": BLOCK})   # for the build's GPU (sm_90 by default)
    H, W = inp0.shape_expr[-2], inp0.shape_expr[-1]
    HO, WO = outputs[0].shape_expr[-2], outputs[0].shape_expr[-1]
    top = int(pads[2]) if np.size(pads) == 4 else 0
    total = outputs[0].shape_expr.numel()
    extra = [ofp.SymInt64(e) for e in (H, W, HO, WO, top, int(pads[0]), total)]
    return oft.launch(img, (ofp.cdiv(total, BLOCK),), extra)


def build_plan(path, shape=(-1, 64, 32, 32), pads=(1, 1, 2, 2), profile=((1, 64, 32, 32), (4, 64, 32, 32),
                                                                        (8, 64, 32, 32))):
    """A CUDA plan of x -> circ_pad_aot -> y, saved to `path`; returns the engine."""
    import opforge
    net = opforge.Network()
    x = net.add_input("x", np.float32, shape)
    y = net.add_plugin(ofp.op.pyexample.circ_pad_aot(x, pads=np.array(pads, np.int32)), name="pad")
    net.mark_output(y, "y")
    engine = opforge.Engine.build(net, device="cuda", profiles={"x": profile})
    engine.save(path)
    return engine


if __name__ == "__main__":
    import sys
    e = build_plan(sys.argv[1] if len(sys.argv) > 1 else "circ_pad_aot.plan")
    print(e.inspect())
