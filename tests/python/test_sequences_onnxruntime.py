"""ONNX sequence ops inside a graph (opforge holds a sequence as an import-time list of tensors),
against ONNX Runtime (CPU) on the same inputs, in CPU plans with a dynamic batch:

  loop_list   SequenceEmpty, then a constant-count Loop inserting a slice per iteration (the
              shape of TorchScript's export of torchvision's MViT-v2 pooling), SequenceAt with a
              negative position, SequenceLength, ConcatFromSequence with and without new_axis
  split_list  SplitToSequence (no split and keepdims = 0; a split list), SequenceConstruct,
              SequenceInsert at a position, SequenceErase, Identity of a sequence

and the errors: a sequence graph output, a position that is run-time data. Exact (data movement).
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import build_plan, opforge_bin, run_plan

ort = pytest.importorskip("onnxruntime")
I64 = TensorProto.INT64


def const(name, values, dtype=I64, dims=None):
    arr = np.array(values, dtype=np.int64)
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name + "_v", dtype, list(arr.shape) if dims is None else dims, arr.ravel().tolist()))


def loop_list():
    # x [N, 6, 4]: iteration i takes rows 2i .. 2i+2 of axis 1; three iterations.
    body = helper.make_graph(
        [const("two", [2], dims=[]), helper.make_node("Mul", ["i", "two"], ["lo"]),
         helper.make_node("Add", ["lo", "two"], ["hi"]),
         helper.make_node("Unsqueeze", ["lo", "ax0"], ["lo1"]), helper.make_node("Unsqueeze", ["hi", "ax0"], ["hi1"]),
         helper.make_node("Slice", ["x", "lo1", "hi1", "ax1"], ["part"]),
         helper.make_node("SequenceInsert", ["seq_in", "part"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)])
    nodes = [const("M", [3], dims=[]), helper.make_node("Constant", [], ["T"], value=helper.make_tensor("t", TensorProto.BOOL, [], [1])),
             const("ax0", [0]), const("ax1", [1]),
             helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
             helper.make_node("Loop", ["M", "T", "empty"], ["seq"], body=body),
             const("last", [-1], dims=[]),
             helper.make_node("SequenceAt", ["seq", "last"], ["tail"]),
             helper.make_node("SequenceLength", ["seq"], ["len"]),
             helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=1),
             helper.make_node("ConcatFromSequence", ["seq"], ["stack"], axis=-1, new_axis=1),
             helper.make_node("Cast", ["len"], ["lenf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["tail", "lenf"], ["tail3"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 6, 4])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("cat", "stack", "tail3")]
    return helper.make_graph(nodes, "loop_list", [x], outs), {"x": (6, 4)}


def split_list():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1, keepdims=0),
             const("sp", [1, 2]), helper.make_node("SplitToSequence", ["x", "sp"], ["chunks"], axis=1),
             helper.make_node("ConcatFromSequence", ["chunks"], ["re"], axis=1),
             const("one", [1], dims=[]), const("zero", [0], dims=[]),
             helper.make_node("SequenceAt", ["rows", "zero"], ["r0"]),
             helper.make_node("SequenceAt", ["rows", "one"], ["r1"]),
             helper.make_node("SequenceConstruct", ["r1", "r0"], ["pair"]),
             helper.make_node("SequenceInsert", ["pair", "r1", "one"], ["three"]),
             helper.make_node("SequenceErase", ["three", "zero"], ["two"]),
             helper.make_node("Identity", ["two"], ["two_again"]),
             helper.make_node("ConcatFromSequence", ["two_again"], ["stacked"], axis=0, new_axis=1),
             helper.make_node("ConcatFromSequence", ["rows"], ["rows_back"], axis=1, new_axis=1)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 5])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("re", "stacked", "rows_back")]
    return helper.make_graph(nodes, "split_list", [x], outs), {"x": (3, 5)}


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


@pytest.mark.parametrize("make", [loop_list, split_list], ids=["loop_list", "split_list"])
def test_sequences_match_onnxruntime(make, tmp_path):
    graph, shapes = make()
    path = str(tmp_path / "m.onnx")
    save(graph, path)
    plan = str(tmp_path / "m.plan")
    names = list(shapes)
    build_plan(path, plan, names, [shapes[n] for n in names], 1, 2, 4)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    for batch in (1, 3):
        feeds = {n: rng.standard_normal((batch, *shapes[n])).astype(np.float32) for n in names}
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        got, _ = run_plan(plan, feeds, str(tmp_path / f"out{batch}"))
        for name, w in want.items():
            assert got[name].shape == w.shape, name
            np.testing.assert_array_equal(got[name], w, err_msg=f"{name}, batch {batch}")


def _fails(graph, tmp_path, *parts):
    import subprocess
    path = str(tmp_path / "bad.onnx")
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    p = subprocess.run([opforge_bin(), "exec", f"--onnx={path}", "--skipInference", "--device=cpu"],
                       capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    for part in parts:
        assert part in p.stderr, p.stderr


def test_a_sequence_graph_output_is_refused(tmp_path):
    g = helper.make_graph([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    _fails(g, tmp_path, "bad.onnx", "graph output 's' is a sequence")


def test_a_run_time_position_is_refused(tmp_path):
    g = helper.make_graph([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),
                           helper.make_node("SequenceAt", ["s", "p"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                           helper.make_tensor_value_info("p", I64, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    _fails(g, tmp_path, "bad.onnx", "SequenceAt", "input 'position' ('p') is run-time data")
