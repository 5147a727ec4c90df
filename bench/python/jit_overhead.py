"""Per-call overhead of a layer defined in Python (opforge.plugin, JIT) on the CPU backend: the
same circular padding as a C++ layer (example::circ_pad_plugin, libopforge_ops.so) and as Python
layers (pyexample::circ_pad_plugin with torch.nn.functional.pad; a Python op whose impl does
nothing), on a tiny tensor so the call itself dominates. Prints a Markdown table.

    PYTHONPATH=python:examples python3 bench/python/jit_overhead.py [--runs 2000]
"""
import argparse
import statistics
import sys
import tempfile
import time
from typing import Tuple

import numpy as np

import opforge
import opforge.plugin as ofp


@ofp.register("pybench::noop")
def noop_desc(x: ofp.TensorDesc) -> ofp.TensorDesc:
    return x.like()


@ofp.impl("pybench::noop")
def noop_impl(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    pass


def model(path, op_type, ns, layers, pads=True):
    import onnx
    from onnx import TensorProto, helper
    nodes, prev = [], "x"
    for k in range(layers):
        out = "y" if k == layers - 1 else f"t{k}"
        attrs = {"pads": [0, 0]} if pads else {}
        nodes.append(helper.make_node(op_type, [prev], [out], name=f"n{k}", plugin_namespace=ns, **attrs))
        prev = out
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def per_run_us(engine, runs):
    ctx = engine.create_execution_context()
    x = np.ones((1, 4), np.float32)
    ctx.set_input_shape("x", [1, 4])
    ctx.set_input("x", x.ctypes.data, x.nbytes)
    for _ in range(50):
        ctx.execute()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(runs):
            ctx.execute()
        times.append((time.perf_counter() - t0) / runs * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--layers", type=int, default=10)
    a = ap.parse_args()
    opforge.load_plugins("python_plugins.circ_pad")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for label, op, ns, pads in (("C++ layer (example::circ_pad_plugin)", "circ_pad_plugin", "example", True),
                                    ("Python layer, torch F.pad (pyexample::circ_pad_plugin)", "circ_pad_plugin",
                                     "pyexample", True),
                                    ("Python layer, empty impl (pybench::noop)", "noop", "pybench", False)):
            one = per_run_us(opforge.Engine.build(model(f"{d}/a.onnx", op, ns, 1, pads), device="cpu"), a.runs)
            many = per_run_us(opforge.Engine.build(model(f"{d}/b.onnx", op, ns, a.layers, pads), device="cpu"),
                              a.runs)
            rows.append((label, one, (many - one) / (a.layers - 1)))
    print(f"CPU backend, x [1, 4] fp32, median of 5 x {a.runs} ExecutionContext.execute() calls from Python "
          f"({sys.version.split()[0]}); per layer = (time with {a.layers} layers - time with 1) / {a.layers - 1}\n")
    print("| layer | one-layer plan, µs per run | per extra layer, µs |")
    print("|---|---|---|")
    for label, one, per in rows:
        print(f"| {label} | {one:.1f} | {per:.1f} |")


if __name__ == "__main__":
    main()
