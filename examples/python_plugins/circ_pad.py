"""The guide's first example: circular padding, computed with torch.nn.functional.pad (JIT).

    python3 examples/python_plugins/circ_pad.py      # builds an ONNX model with the plugin node, runs it
"""
from typing import Tuple

import numpy as np
import numpy.typing as npt
import torch

import opforge.plugin as ofp


@ofp.register("pyexample::circ_pad_plugin")
def circ_pad_plugin_desc(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
    """Circular padding of the last len(pads)/2 dimensions."""
    ndim = inp0.ndim
    out_desc = inp0.like()
    for i in range(np.size(pads) // 2):
        out_desc.shape_expr[ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
    return out_desc


@ofp.impl("pyexample::circ_pad_plugin")
def circ_pad_plugin_impl(inp0: ofp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[ofp.Tensor],
                         stream: int) -> None:
    inp_t = torch.as_tensor(inp0, device=inp0.device)
    out_t = torch.as_tensor(outputs[0], device=outputs[0].device)
    with ofp.torch_stream(stream, inp0.device):  # the engine's stream on CUDA
        out = torch.nn.functional.pad(inp_t, pads.tolist(), mode="circular")
        out_t.copy_(out)


def make_onnx(path, shape=(2, 3, 8, 8), pads=(1, 1, 2, 2)):
    """An ONNX model with one plugin node as the guide builds it (op_type = the plugin's name, its
    namespace in the attribute plugin_namespace)."""
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("circ_pad_plugin", ["x"], ["y"], name="circ_pad_plugin", pads=list(pads),
                            plugin_namespace="pyexample")
    g = helper.make_graph([node], "circ_pad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


if __name__ == "__main__":
    import sys
    import tempfile

    import opforge
    with tempfile.TemporaryDirectory() as d:
        engine = opforge.Engine.build(make_onnx(f"{d}/circ_pad.onnx"), device="cpu")
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    y = engine.run({"x": x})["y"]
    want = torch.nn.functional.pad(torch.from_numpy(x), [1, 1, 2, 2], mode="circular").numpy()
    print(engine.layers()[0]["op"], engine.layers()[0]["library"], "max error", float(np.abs(y - want).max()))
    sys.exit(0 if np.array_equal(y, want) else 1)
