"""Shape inputs computed from run-time data (opforge::ReadValues), against ONNX Runtime (CPU): a mask
pasted into a canvas as torchvision's Mask R-CNN does it — Resize to the size of a box read from a
float input (linear, half_pixel), then a Pad whose amounts come from the box corners (negative where
the box leaves the canvas: a crop) — and a Slice of the canvas from run-time starts of either sign.
One CPU plan, run with several boxes (its run-time buffers grow and shrink). FP32: the arithmetic is
ONNX Runtime's (interpolation weights), held to 1e-6.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import opforge_bin, run, run_plan

ort = pytest.importorskip("onnxruntime")
I64 = TensorProto.INT64
CANVAS = 20


def const(name, values):
    arr = np.array(values, dtype=np.int64)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", I64, list(arr.shape),
                                                                              arr.ravel().tolist()))


def paste_graph():
    g = lambda out, i: helper.make_node("Gather", ["bi", f"k{i}"], [out], axis=0)  # noqa: E731
    nodes = [const(f"k{i}", [i]) for i in range(4)] + [
        const("one", [1]), const("nc", [1, 1]), const("zz", [0, 0]), const("canvas", [CANVAS]),
        helper.make_node("Cast", ["box"], ["bi"], to=I64),
        g("x0", 0), g("y0", 1), g("x1", 2), g("y1", 3),
        helper.make_node("Sub", ["x1", "x0"], ["dx"]), helper.make_node("Add", ["dx", "one"], ["w"]),
        helper.make_node("Sub", ["y1", "y0"], ["dy"]), helper.make_node("Add", ["dy", "one"], ["h"]),
        helper.make_node("Concat", ["nc", "h", "w"], ["sizes"], axis=0),
        helper.make_node("Resize", ["mask", "", "", "sizes"], ["r"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        # pads: [0, 0, y0, x0, 0, 0, canvas - y0 - h, canvas - x0 - w]
        helper.make_node("Sub", ["canvas", "y0"], ["a"]), helper.make_node("Sub", ["a", "h"], ["yb"]),
        helper.make_node("Sub", ["canvas", "x0"], ["b"]), helper.make_node("Sub", ["b", "w"], ["xb"]),
        helper.make_node("Concat", ["zz", "y0", "x0", "zz", "yb", "xb"], ["pads"], axis=0),
        helper.make_node("Pad", ["r", "pads"], ["pasted"]),
        const("ax3", [3]), const("big", [100]),
        helper.make_node("Slice", ["pasted", "x0", "big", "ax3"], ["right"]),
    ]
    inputs = [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 6, 6]),
              helper.make_tensor_value_info("box", TensorProto.FLOAT, [4])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("pasted", "right")]
    return helper.make_graph(nodes, "paste", inputs, outputs)


BOXES = [(2, 3, 9, 7), (-3, -2, 5, 6), (10, 12, 25, 30), (0, 0, 19, 19), (4.6, 1.2, 4.9, 1.9), (7, 7, 7, 7)]


def test_paste_matches_onnxruntime(tmp_path):
    path, plan = str(tmp_path / "paste.onnx"), str(tmp_path / "paste.plan")
    m = helper.make_model(paste_graph(), opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, path)
    run([opforge_bin(), "exec", f"--onnx={path}", f"--saveEngine={plan}", "--skipInference", "--device=cpu",
         "--noTF32"])
    layers = run([opforge_bin(), "inspect", plan]).stdout
    assert layers.count("opforge::ReadValues") >= 2, layers  # the sizes, the pads (the Slice start)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    mask = np.random.default_rng(5).random((1, 1, 6, 6), dtype=np.float32)
    for k, box in enumerate(BOXES):
        feeds = {"mask": mask, "box": np.array(box, np.float32)}
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        got, _ = run_plan(plan, feeds, str(tmp_path / f"out{k}"))
        for name, w in want.items():
            assert got[name].shape == w.shape, (name, box, got[name].shape, w.shape)
            np.testing.assert_allclose(got[name], w, rtol=0, atol=1e-6, err_msg=f"{name}, box {box}")
