#!/usr/bin/env python3
"""Writes the seed examples' ONNX files the way the TensorRT plugin guide does: one node whose
op_type is the plugin name, with a `plugin_namespace` attribute (array attributes become TENSOR
attributes, as onnx-graphsurgeon writes numpy arrays). Run from anywhere; needs `onnx` and `numpy`.

    python3 examples/make_examples.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, rel):
    model.opset_import.extend([helper.make_opsetid("example", 1), helper.make_opsetid("sample", 1)])
    onnx.checker.check_model(model)
    path = os.path.join(HERE, rel)
    onnx.save(model, path)
    print("wrote", os.path.relpath(path))


def circ_pad():
    pads = np.array([1, 1, 2, 2], dtype=np.int32)
    node = helper.make_node(
        "circ_pad_plugin", ["x"], ["y"], name="circ_pad_plugin", domain="example",
        pads=numpy_helper.from_array(pads), plugin_namespace="example")
    graph = helper.make_graph(
        [node], "circ_pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3, 36, 34])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "circ_pad/circ_pad.onnx")


def non_zero():
    node = helper.make_node("non_zero_plugin", ["x"], ["indices", "count"], name="non_zero_plugin",
                            domain="example", plugin_namespace="example")
    graph = helper.make_graph(
        [node], "non_zero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("indices", TensorProto.INT32, ["K", 2]),
         helper.make_tensor_value_info("count", TensorProto.INT32, [])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "non_zero/non_zero.onnx")


def inplace_add():
    # The TensorRT sample chains the in-place add twice: delta 2, then delta 4.
    n1 = helper.make_node("elemwise_add_plugin_", ["x"], ["x_plus_2"], name="add_2", domain="sample",
                          delta=2, plugin_namespace="sample")
    n2 = helper.make_node("elemwise_add_plugin_", ["x_plus_2"], ["y"], name="add_4", domain="sample",
                          delta=4, plugin_namespace="sample")
    graph = helper.make_graph(
        [n1, n2], "inplace_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8, 8])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "inplace_add/inplace_add.onnx")


if __name__ == "__main__":
    circ_pad()
    non_zero()
    inplace_add()
