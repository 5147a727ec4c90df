#!/usr/bin/env python3
"""Makes the seed corpora of the libFuzzer targets (tests/fuzz, docs/fuzzing.md).

    scripts/fuzz-corpus.py OUT_DIR --cli build-asan/bin/opforge --ops build-asan/lib/libopforge_ops.so

OUT_DIR/onnx: examples/*/*.onnx and small generated models (one or two nodes of the ops whose
geometry and loop bounds the fuzzers should stress: Conv, MaxPool, Gemm, Slice, Pad, Reshape,
Split, Gather, ConstantOfShape, Range, Expand, Concat, Transpose, Resize...).
OUT_DIR/plan: CPU plans the CLI builds from those models (needs --cli).
OUT_DIR/npy: .npy files of every supported dtype, format versions 1 to 3, ranks 0 to 4.
OUT_DIR/wire: a selector byte (which decoder, see wire_fuzzer.cc) followed by slices of the plans'
metadata sections (wire-encoded tensors, attributes and dims).
"""
import argparse
import pathlib
import shutil
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def generated():
    f = np.float32
    yield "relu", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 4])], [vi("y", ["N", 4])])
    yield "conv_gemm", model(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1]),
         helper.make_node("Flatten", ["c"], ["f"]),
         helper.make_node("Gemm", ["f", "g"], ["y"], transB=1)],
        [vi("x", [1, 2, 4, 4])], [vi("y", [1, 3])],
        [init("w", np.ones((2, 2, 3, 3), f)), init("g", np.ones((3, 32), f))])
    yield "maxpool", model(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 1], pads=[0, 0, 1, 1])],
        [vi("x", [1, 1, 5, 5])], [vi("y", None)])
    yield "avgpool", model(
        [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])],
        [vi("x", [1, 2, 4, 4])], [vi("y", None)])
    yield "slice", model(
        [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
        [vi("x", [6, 5])], [vi("y", None)],
        [init("s", np.array([5, 0], np.int64)), init("e", np.array([-7, 5], np.int64)),
         init("a", np.array([0, 1], np.int64)), init("st", np.array([-2, 2], np.int64))])
    yield "pad_reflect", model(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
        [vi("x", [1, 4])], [vi("y", None)], [init("p", np.array([0, 2, 0, 3], np.int64))])
    yield "reshape", model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [vi("x", [2, 3, 4])], [vi("y", None)], [init("s", np.array([0, -1], np.int64))])
    yield "split", model(
        [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0)],
        [vi("x", [3, 2])], [vi("a", None), vi("b", None)], [init("s", np.array([1, 2], np.int64))])
    yield "gather", model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
        [vi("x", [2, 5])], [vi("y", None)], [init("i", np.array([[0, 4], [-1, 2]], np.int64))])
    yield "constant_of_shape", model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0])),
         helper.make_node("Add", ["x", "c"], ["y"])],
        [vi("x", [2, 3])], [vi("y", None)], [init("s", np.array([2, 3], np.int64))])
    yield "range", model(
        [helper.make_node("Range", ["a", "b", "d"], ["r"]), helper.make_node("Cast", ["r"], ["c"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "c"], ["y"])],
        [vi("x", [5])], [vi("y", None)],
        [init("a", np.array(0, np.int64)), init("b", np.array(5, np.int64)), init("d", np.array(1, np.int64))])
    yield "expand_concat", model(
        [helper.make_node("Expand", ["x", "s"], ["e"]), helper.make_node("Concat", ["e", "e"], ["y"], axis=0)],
        [vi("x", [1, 3])], [vi("y", None)], [init("s", np.array([2, 3], np.int64))])
    yield "transpose_softmax", model(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), helper.make_node("Softmax", ["t"], ["y"], axis=-1)],
        [vi("x", [3, 4])], [vi("y", None)])
    yield "div_int", model(
        [helper.make_node("Div", ["a", "b"], ["y"])], [vi("a", [2], TensorProto.INT64)], [vi("y", None, TensorProto.INT64)],
        [init("b", np.array([-1, 3], np.int64))])
    yield "matmul_layernorm", model(
        [helper.make_node("MatMul", ["x", "w"], ["m"]),
         helper.make_node("LayerNormalization", ["m", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
        [vi("x", ["B", 2, 4])], [vi("y", None)],
        [init("w", np.ones((4, 4), f)), init("g", np.ones(4, f)), init("b", np.zeros(4, f))])
    yield "resize", model(
        [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
        [vi("x", [1, 1, 2, 2])], [vi("y", None)], [init("sc", np.array([1, 1, 2, 2], f))], opset=13)
    yield "reduce_topk", model(
        [helper.make_node("ReduceSum", ["x", "ax"], ["r"], keepdims=1),
         helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
        [vi("x", [2, 5])], [vi("r", None), vi("v", None), vi("i", None, TensorProto.INT64)],
        [init("ax", np.array([1], np.int64)), init("k", np.array([2], np.int64))])
    # Loops whose trip count or condition is run-time data (unrolled to a bound, guarded).
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"]), helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["s_out"], ["scan"])],
        "body", [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("s_in", [2])],
        [vi("c_out", [], TensorProto.BOOL), vi("s_out", [2]), vi("scan", [2])])
    yield "loop_runtime_m", model(
        [helper.make_node("Loop", ["m", "", "s0"], ["s", "all"], body=body)],
        [vi("x", [2]), vi("s0", [2]), vi("m", [], TensorProto.INT64)], [vi("s", None), vi("all", None)])
    wbody = helper.make_graph(
        [helper.make_node("Add", ["v_in", "v_in"], ["v_out"]),
         helper.make_node("ReduceMax", ["v_out"], ["t"], keepdims=0),
         helper.make_node("Less", ["t", "lim"], ["c_out"])],
        "wbody", [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("v_in", [2])],
        [vi("c_out", [], TensorProto.BOOL), vi("v_out", [2])])
    yield "loop_while", model(
        [helper.make_node("Loop", ["", "go", "x"], ["y"], body=wbody)],
        [vi("x", [2]), vi("lim", []), vi("go", [], TensorProto.BOOL)], [vi("y", None)])
    # A pre-LN residual stream: the Add's sum read again after the LayerNormalization.
    yield "add_layernorm_kept", model(
        [helper.make_node("Add", ["x", "r"], ["s"]),
         helper.make_node("LayerNormalization", ["s", "g"], ["n"], axis=-1),
         helper.make_node("Mul", ["s", "n"], ["y"])],
        [vi("x", ["B", 4]), vi("r", ["B", 4])], [vi("y", None)], [init("g", np.ones(4, f))])
    # Attention as transformers export it: three projections of one input, heads split by Reshape and
    # Transpose (packed_qkv merges the projections; attention_heads reads the Transposes in place).
    rng = np.random.default_rng(3)
    proj, names = [], []
    for p in "qkv":
        proj += [helper.make_node("MatMul", ["x", "w" + p], [p + "m"]), helper.make_node("Add", [p + "m", "b" + p], [p + "a"]),
                 helper.make_node("Reshape", [p + "a", "heads"], [p + "h"]),
                 helper.make_node("Transpose", [p + "h"], [p + "t"], perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])]
        names += [init("w" + p, rng.standard_normal((8, 8)).astype(f)), init("b" + p, rng.standard_normal(8).astype(f))]
    yield "qkv_attention", model(
        proj + [helper.make_node("Mul", ["qt", "scale"], ["qs"]), helper.make_node("MatMul", ["qs", "kt"], ["s"]),
                helper.make_node("Softmax", ["s"], ["pr"], axis=-1), helper.make_node("MatMul", ["pr", "vt"], ["o"]),
                helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
                helper.make_node("Reshape", ["ot", "merge"], ["y"])],
        [vi("x", ["B", 3, 8])], [vi("y", None)],
        names + [init("heads", np.array([0, 0, 2, 4], np.int64)), init("merge", np.array([0, 0, 8], np.int64)),
                 init("scale", np.array(0.5, f))])
    # Swin's shifted-window attention: the scores viewed per window, a mask added, viewed back.
    yield "window_attention", model(
        [helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Add", ["s", "rel"], ["sr"]),
         helper.make_node("Reshape", ["sr", "win"], ["s5"]), helper.make_node("Add", ["s5", "mask"], ["sm"]),
         helper.make_node("Reshape", ["sm", "back"], ["s4"]), helper.make_node("Softmax", ["s4"], ["pr"], axis=-1),
         helper.make_node("MatMul", ["pr", "v"], ["y"])],
        [vi("q", [4, 2, 3, 4]), vi("kt", [4, 2, 4, 3]), vi("v", [4, 2, 3, 4])], [vi("y", None)],
        [init("rel", rng.standard_normal((1, 2, 3, 3)).astype(f)), init("win", np.array([-1, 2, 2, 3, 3], np.int64)),
         init("mask", np.where(rng.random((1, 2, 1, 3, 3)) < 0.3, -100.0, 0.0).astype(f)),
         init("back", np.array([-1, 2, 3, 3], np.int64))])
    # ConvNeXt's blocks: depthwise conv, to NHWC, LayerNorm, two projections, LayerScale, back to NCHW,
    # residual Add (transpose_sinking moves the permutation below the Add; gemm_residual fuses it).
    blocks, cur = [], "x"
    for k in range(2):
        blocks += [helper.make_node("Conv", [cur, "dw", "db"], [f"c{k}"], group=4, pads=[1, 1, 1, 1]),
                   helper.make_node("Transpose", [f"c{k}"], [f"t{k}"], perm=[0, 2, 3, 1]),
                   helper.make_node("LayerNormalization", [f"t{k}", "g", "lb"], [f"n{k}"], axis=-1),
                   helper.make_node("MatMul", [f"n{k}", "w1"], [f"m{k}"]),
                   helper.make_node("Add", [f"m{k}", "b1"], [f"a{k}"]), helper.make_node("Relu", [f"a{k}"], [f"r{k}"]),
                   helper.make_node("MatMul", [f"r{k}", "w2"], [f"p{k}"]), helper.make_node("Add", [f"p{k}", "b2"], [f"q{k}"]),
                   helper.make_node("Transpose", [f"q{k}"], [f"u{k}"], perm=[0, 3, 1, 2]),
                   helper.make_node("Mul", [f"u{k}", "ls"], [f"l{k}"]), helper.make_node("Add", [f"l{k}", cur], [f"s{k}"])]
        cur = f"s{k}"
    yield "convnext_blocks", model(
        blocks + [helper.make_node("Transpose", [cur], ["y"], perm=[0, 2, 3, 1])],
        [vi("x", ["B", 4, 5, 5])], [vi("y", None)],
        [init("dw", rng.standard_normal((4, 1, 3, 3)).astype(f)), init("db", np.zeros(4, f)),
         init("g", np.ones(4, f)), init("lb", np.zeros(4, f)), init("w1", rng.standard_normal((4, 8)).astype(f)),
         init("b1", np.zeros(8, f)), init("w2", rng.standard_normal((8, 4)).astype(f)), init("b2", np.zeros(4, f)),
         init("ls", np.full((4, 1, 1), 0.1, f))])
    # A Scan over a run-time sequence length (imported as a Loop), reversed input and output.
    sbody = helper.make_graph(
        [helper.make_node("Add", ["h_in", "xt"], ["h_out"]), helper.make_node("Identity", ["h_out"], ["y"])],
        "sbody", [vi("h_in", [2]), vi("xt", [2])], [vi("h_out", [2]), vi("y", [2])])
    yield "scan_runtime_length", model(
        [helper.make_node("Scan", ["h0", "x"], ["h", "ys"], num_scan_inputs=1, body=sbody,
                          scan_input_directions=[1], scan_output_directions=[1])],
        [vi("h0", [2]), vi("x", ["T", 2])], [vi("h", None), vi("ys", None)])
    # Sequences inside a graph (import-time lists): a constant-count Loop inserting slices,
    # SequenceAt / SequenceLength / ConcatFromSequence, SplitToSequence, SequenceErase.
    i64 = TensorProto.INT64
    lbody = helper.make_graph(
        [helper.make_node("Unsqueeze", ["i", "ax"], ["i1"]), helper.make_node("Add", ["i1", "one"], ["i2"]),
         helper.make_node("Slice", ["x", "i1", "i2", "ax1"], ["part"]),
         helper.make_node("SequenceInsert", ["s_in", "part"], ["s_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "lbody", [vi("i", [], i64), vi("c_in", [], TensorProto.BOOL),
                  helper.make_tensor_sequence_value_info("s_in", TensorProto.FLOAT, None)],
        [vi("c_out", [], TensorProto.BOOL), helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT, None)])
    yield "sequences", model(
        [helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
         helper.make_node("Loop", ["M", "T", "e"], ["s"], body=lbody),
         helper.make_node("SequenceAt", ["s", "last"], ["t"]),
         helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=1),
         helper.make_node("SplitToSequence", ["c"], ["r"], axis=1, keepdims=0),
         helper.make_node("SequenceErase", ["r", "zero"], ["r2"]),
         helper.make_node("ConcatFromSequence", ["r2"], ["y"], axis=1, new_axis=1),
         helper.make_node("SequenceLength", ["r2"], ["n"])],
        [vi("x", ["B", 4, 3])], [vi("t", None), vi("y", None), vi("n", None, i64)],
        [init("M", np.array(3, np.int64)), init("T", np.array(True)), init("ax", np.array([0], np.int64)),
         init("ax1", np.array([1], np.int64)), init("one", np.array([1], np.int64)),
         init("last", np.array(-1, np.int64)), init("zero", np.array(0, np.int64))])
    # Shape inputs from run-time data (opforge::ReadValues): a Resize to sizes read from a float
    # input, a Pad of run-time (possibly negative) amounts, a Slice and a Reshape of run-time values.
    yield "runtime_values", model(
        [helper.make_node("Cast", ["box"], ["bi"], to=i64),
         helper.make_node("Concat", ["nc", "bi"], ["sizes"], axis=0),
         helper.make_node("Resize", ["x", "", "", "sizes"], ["r"], mode="linear"),
         helper.make_node("Concat", ["z4", "bi", "z2"], ["pads"], axis=0),
         helper.make_node("Pad", ["r", "pads"], ["p"]),
         helper.make_node("Slice", ["p", "first", "big", "ax3"], ["y"]),
         helper.make_node("Slice", ["bi", "zero1", "first_end"], ["first"]),
         helper.make_node("Concat", ["nc", "bi"], ["shape4"], axis=0),
         helper.make_node("Reshape", ["y", "minus1"], ["flat"])],
        [vi("x", [1, 1, 4, 5]), vi("box", [2])], [vi("y", None), vi("flat", None)],
        [init("nc", np.array([1, 1], np.int64)), init("z4", np.zeros(4, np.int64)),
         init("z2", np.zeros(2, np.int64)), init("big", np.array([100], np.int64)),
         init("ax3", np.array([3], np.int64)), init("zero1", np.array([0], np.int64)),
         init("first_end", np.array([1], np.int64)), init("minus1", np.array([-1], np.int64))])
    # A squeeze-excitation block (EfficientNet's): the channels-last scale Mul and GlobalAveragePool.
    yield "se_block", model(
        [helper.make_node("Conv", ["x", "dw"], ["d"], group=4, pads=[1, 1, 1, 1]),
         helper.make_node("GlobalAveragePool", ["d"], ["p"]),
         helper.make_node("Conv", ["p", "f1"], ["q"]), helper.make_node("Sigmoid", ["q"], ["s"]),
         helper.make_node("Mul", ["d", "s"], ["y"])],
        [vi("x", ["B", 4, 5, 5])], [vi("y", None)],
        [init("dw", rng.standard_normal((4, 1, 3, 3)).astype(f)),
         init("f1", rng.standard_normal((4, 4, 1, 1)).astype(f))])
    # The explicitly quantized forms the Q/DQ fusions take (QLinearConv, QLinearMatMul).
    qdq = [init("sx", np.array(0.02, f)), init("zx", np.array(128, np.uint8)),
           init("sy", np.array(0.05, f)), init("zy", np.array(0, np.int8))]
    yield "qdq_conv", model(
        [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
         helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=0),
         helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("QuantizeLinear", ["c", "sy", "zy"], ["yq"]),
         helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])],
        [vi("x", [1, 2, 3, 3])], [vi("y", None)],
        qdq + [init("wq", np.arange(-9, 9, dtype=np.int8).reshape(2, 1, 3, 3).repeat(2, axis=1)),
               init("sw", np.array([0.01, 0.02], f)), init("zw", np.zeros(2, np.int8)),
               init("b", np.array([0.1, -0.1], f))])
    yield "qdq_matmul", model(
        [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
         helper.make_node("QuantizeLinear", ["w", "sw", "zw"], ["wq"], axis=1),
         helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=1),
         helper.make_node("MatMul", ["xd", "wd"], ["m"]),
         helper.make_node("QuantizeLinear", ["m", "sy", "zy"], ["yq"]),
         helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])],
        [vi("x", ["N", 4])], [vi("y", None)],
        qdq + [init("w", np.linspace(-1, 1, 12, dtype=f).reshape(4, 3)),
               init("sw", np.array([0.01, 0.02, 0.03], f)), init("zw", np.zeros(3, np.int8))])

    # Swin's patch merging (what the patch_merge pass rewrites): four crops of every other row and
    # column, the first Slice of each pair shared, concatenated along C.
    i64 = lambda *v: np.array(v, np.int64)
    crops = [helper.make_node("Slice", ["x", "z", "big", "a1", "two"], ["r0"]),
             helper.make_node("Slice", ["x", "one", "big", "a1", "two"], ["r1"])]
    for k, (row, col) in enumerate([("r0", "z"), ("r1", "z"), ("r0", "one"), ("r1", "one")]):
        crops.append(helper.make_node("Slice", [row, col, "big", "a2", "two"], [f"c{k}"]))
    yield "patch_merge", model(
        crops + [helper.make_node("Concat", ["c0", "c1", "c2", "c3"], ["y"], axis=-1)],
        [vi("x", ["N", 4, 6, 3])], [vi("y", None)],
        [init("z", i64(0)), init("one", i64(1)), init("two", i64(2)), init("big", i64(2**62)),
         init("a1", i64(1)), init("a2", i64(2))])

    # A squeeze-excitation block (EfficientNet's, MobileNetV3's): global pooling, two 1x1 convolutions
    # with SiLU and a sigmoid, the scale applied to the input (se_fusion's pattern where it exists).
    yield "squeeze_excite", model(
        [helper.make_node("GlobalAveragePool", ["x"], ["p"]),
         helper.make_node("Conv", ["p", "w1", "b1"], ["h"]), helper.make_node("Sigmoid", ["h"], ["hs"]),
         helper.make_node("Mul", ["h", "hs"], ["h2"]),
         helper.make_node("Conv", ["h2", "w2", "b2"], ["e"]), helper.make_node("Sigmoid", ["e"], ["s"]),
         helper.make_node("Mul", ["x", "s"], ["y"])],
        [vi("x", ["N", 8, 5, 5])], [vi("y", None)],
        [init("w1", rng.standard_normal((2, 8, 1, 1)).astype(f)), init("b1", np.zeros(2, f)),
         init("w2", rng.standard_normal((8, 2, 1, 1)).astype(f)), init("b2", np.zeros(8, f))])
    # FP8 (E4M3FN) Q/DQ around a MatMul with a quantized weight, ONNX Runtime's FP8 form.
    f8 = TensorProto.FLOAT8E4M3FN
    yield "fp8_qdq_matmul", model(
        [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
         helper.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"]),
         helper.make_node("MatMul", ["xd", "wd"], ["m"]),
         helper.make_node("QuantizeLinear", ["m", "sy", "zy"], ["yq"]),
         helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])],
        [vi("x", ["N", 16])], [vi("y", None)],
        [init("sx", np.array(0.05, f)), helper.make_tensor("zx", f8, [], [0]),
         helper.make_tensor("wq", f8, [16, 16], list(rng.uniform(-8, 8, 256))),
         init("sw", np.array(0.02, f)), helper.make_tensor("zw", f8, [], [0]),
         init("sy", np.array(0.1, f)), helper.make_tensor("zy", f8, [], [0])])


def npy_seeds():
    dtypes = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.bool_]
    shapes = [(), (0,), (3,), (2, 3), (1, 2, 0), (2, 1, 2, 2)]
    for i, dt in enumerate(dtypes):
        for j, shape in enumerate(shapes):
            if (i + j) % 2:
                continue
            a = (np.arange(int(np.prod(shape))) % 3).astype(dt).reshape(shape)
            for version in ((1, 0), (2, 0), (3, 0)) if j == 2 else ((1, 0),):
                import io
                buf = io.BytesIO()
                np.lib.format.write_array(buf, a, version=version)
                yield f"{np.dtype(dt).str[1:]}_{j}_v{version[0]}", buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--cli", help="the opforge CLI (plans are made only with it)")
    ap.add_argument("--ops", help="libopforge_ops.so (the examples' plugin ops)")
    a = ap.parse_args()
    dirs = {k: a.out / k for k in ("onnx", "plan", "npy", "wire")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    models = []
    for p in sorted(ROOT.glob("examples/*/*.onnx")):
        dst = dirs["onnx"] / f"example_{p.stem}.onnx"
        shutil.copyfile(p, dst)
        models.append(dst)
    # The byte mutations that "hung" (issue 21): circ_pad's first pad 0x007f0001, an output of 10^9
    # elements that the element-by-element CPU kernel took minutes over (it copies rows now).
    cp = onnx.load(str(ROOT / "examples/circ_pad/circ_pad.onnx"))
    t = cp.graph.node[0].attribute[0].t
    t.raw_data = struct.pack("<4i", 0x007F0001, 1, 2, 2)
    (dirs["onnx"] / "circ_pad_large_pad.onnx").write_bytes(cp.SerializeToString())
    models.append(dirs["onnx"] / "circ_pad_large_pad.onnx")
    for name, m in generated():
        dst = dirs["onnx"] / f"{name}.onnx"
        dst.write_bytes(m.SerializeToString())
        models.append(dst)
    for name, b in npy_seeds():
        (dirs["npy"] / f"{name}.npy").write_bytes(b)
    plans = []
    if a.cli:
        for m in models:
            dst = dirs["plan"] / f"{m.stem}.plan"
            cmd = [a.cli, "exec", f"--onnx={m}", "--device=cpu", f"--saveEngine={dst}", "--skipInference"]
            if a.ops:
                cmd.append(f"--plugins={a.ops}")
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0 and dst.exists():
                plans.append(dst)
            else:
                print(f"[corpus] no plan for {m.name}: {(r.stdout + r.stderr).strip().splitlines()[-1:]}", file=sys.stderr)
    for p in plans:
        b = p.read_bytes()
        meta_offset, meta_size = struct.unpack_from("<QQ", b, 32)
        meta = b[meta_offset:meta_offset + meta_size]
        for k in range(10):
            start = (k * 97) % max(1, len(meta) - 16)
            (dirs["wire"] / f"{p.stem}_{k}").write_bytes(bytes([k]) + meta[start:start + 512])
    counts = {k: len(list(d.iterdir())) for k, d in dirs.items()}
    print(f"[corpus] {a.out}: " + ", ".join(f"{k} {n}" for k, n in counts.items()))


if __name__ == "__main__":
    main()
