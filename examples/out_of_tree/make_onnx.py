#!/usr/bin/env python3
"""Writes silu_mul.onnx: y = ext::silu_mul(a, b) for a, b of shape [N, 64] (N dynamic), the node
named by domain "ext" and attribute plugin_namespace "ext", as onnx-graphsurgeon writes plugin
nodes. Needs `onnx`.  python3 make_onnx.py [OUT]"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "silu_mul.onnx")
    node = helper.make_node("silu_mul", ["a", "b"], ["y"], name="silu_mul", domain="ext",
                            plugin_namespace="ext")
    graph = helper.make_graph(
        [node], "silu_mul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 64]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("ext", 1)])
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print("wrote", out)


if __name__ == "__main__":
    main()
