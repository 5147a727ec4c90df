"""Issue 16's benchmark table: the seed's circular padding as an opforge layer four ways — the C++ op
(example::circ_pad_plugin, libopforge_ops.so), a Python JIT layer with torch.nn.functional.pad
(pyexample::circ_pad_plugin), a Python JIT layer launching a Triton kernel (pybench::circ_pad_triton,
the kernel of examples/python_plugins/circ_pad_aot.py through oft.jit_launch), and the same Triton
kernel compiled ahead of time (pyexample::circ_pad_aot, run by the C++ runtime) — against PyTorch's
F.pad, eager and under torch.compile(mode="reduce-overhead"), on x [8, 64, 256, 256] FP32 with pads
(1, 1, 2, 2). Then the per-call overhead of a JIT layer: plans of 1 and 10 layers on a [1, 4]
tensor, (time with 10 - time with 1) / 9 per extra layer.

Every opforge output is compared with F.pad (exactly: padding copies values) before it is timed.
Times: opforge's "GPU compute" is the engine's own CUDA events around the plan (last_run_times(),
median of the timed runs); "per run() call" is the wall time of Engine.run() from Python with a
synchronize after each run (what a Python caller pays). PyTorch: CUDA events, median.
The memory floor: read x once and write y once at the copy bandwidth measured in the same run (a
device-to-device copy of y's bytes).

    PYTHONPATH=python:examples python3 bench/python/circ_pad_table.py [--device cuda] [--runs 200]
    # --device cpu (small shape, no Triton rows) checks the script itself without a GPU
"""
import argparse
import statistics
import sys
import tempfile
import time
from typing import Tuple

import numpy as np
import numpy.typing as npt
import torch

import opforge
import opforge.plugin as ofp

import jit_overhead  # noqa: E402,F401  (registers pybench::noop, the empty Python layer)



def _define_triton_jit():
    """pybench::circ_pad_triton: the AOT example's Triton kernel, launched just in time by the impl."""
    import triton
    from opforge.plugin import triton as oft
    from python_plugins.circ_pad_aot import BLOCK, circ_pad_kernel

    @ofp.register("pybench::circ_pad_triton")
    def desc(inp0: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
        out = inp0.like()
        for i in range(np.size(pads) // 2):
            out.shape_expr[inp0.ndim - i - 1] += int(pads[i * 2] + pads[i * 2 + 1])
        return out

    @ofp.impl("pybench::circ_pad_triton")
    def impl(inp0: ofp.Tensor, pads: npt.NDArray[np.int32], outputs: Tuple[ofp.Tensor], stream: int) -> None:
        x = torch.as_tensor(inp0, device=inp0.device)
        y = torch.as_tensor(outputs[0], device=outputs[0].device)
        H, W = x.shape[-2], x.shape[-1]
        HO, WO = y.shape[-2], y.shape[-1]
        top = int(pads[2]) if np.size(pads) == 4 else 0
        total = y.numel()
        oft.jit_launch(circ_pad_kernel, (triton.cdiv(total, BLOCK),), x, H, W, HO, WO, top, int(pads[0]), total, y,
                       stream=stream, BLOCK=BLOCK)


def model(path, op_type, ns, shape, layers=1, pads=(1, 1, 2, 2)):
    import onnx
    from onnx import TensorProto, helper
    nodes, prev, cur = [], "x", list(shape)
    for k in range(layers):
        out = "y" if k == layers - 1 else f"t{k}"
        attrs = {"pads": list(pads)} if pads else {}
        nodes.append(helper.make_node(op_type, [prev], [out], name=f"n{k}", plugin_namespace=ns, **attrs))
        prev = out
        for i in range(len(pads or ()) // 2):
            cur[-1 - i] += pads[2 * i] + pads[2 * i + 1]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, cur)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_engine(engine, x, runs, device):
    """(median GPU compute ms or None, median wall µs per run() call)."""
    for _ in range(10):
        engine.run({"x": x})
    _sync(device)
    compute, walls = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        engine.run({"x": x})
        engine.synchronize()  # the run's stream (CUDA events read too): one wait, as a caller pays
        walls.append((time.perf_counter() - t0) * 1e6)
        if device == "cuda":
            compute.append(engine.last_run_times()["compute_ms"])
    return (statistics.median(compute) if compute else None), statistics.median(walls)


def time_torch(fn, x, runs, device):
    for _ in range(10):
        fn(x)
    _sync(device)
    if device != "cuda":
        walls = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn(x)
            walls.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(walls)
    ms = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(x)
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b))
    return statistics.median(ms)


def copy_ceiling(n_bytes, device, runs):
    """Bytes per second a device-to-device copy of n_bytes moves (read + write), measured."""
    src = torch.ones(n_bytes // 4, device=device)
    dst = torch.empty_like(src)
    ms = time_torch(lambda t: dst.copy_(t), src, runs, device)
    return 2 * n_bytes / (ms * 1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--shape", default=None, help="NxCxHxW (default 8x64x256x256 on CUDA, 2x8x32x32 on the CPU)")
    ap.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    a = ap.parse_args()
    dev = a.device
    shape = tuple(int(v) for v in (a.shape or ("8x64x256x256" if dev == "cuda" else "2x8x32x32")).split("x"))
    pads = (1, 1, 2, 2)
    opforge.load_plugins("python_plugins.circ_pad")
    variants = [("C++ op (example::circ_pad_plugin)", "circ_pad_plugin", "example"),
                ("Python JIT, torch F.pad (pyexample::circ_pad_plugin)", "circ_pad_plugin", "pyexample")]
    if dev == "cuda":
        _define_triton_jit()
        opforge.load_plugins("python_plugins.circ_pad_aot")
        variants += [("Python JIT, Triton kernel (pybench::circ_pad_triton)", "circ_pad_triton", "pybench"),
                     ("AOT Triton, C++ runtime (pyexample::circ_pad_aot)", "circ_pad_aot", "pyexample")]
    x = torch.randn(*shape, device=dev)
    want = torch.nn.functional.pad(x, list(pads), mode="circular")
    out_shape = want.shape
    ceiling = copy_ceiling(want.numel() * 4, dev, a.runs)
    floor_ms = (x.numel() + want.numel()) * 4 / ceiling * 1e3

    rows = []
    with tempfile.TemporaryDirectory() as d:
        for label, op, ns in variants:
            eng = opforge.Engine.build(model(f"{d}/{op}_{ns}.onnx", op, ns, shape, 1, pads), device=dev)
            y = eng.run({"x": x})["y"]
            _sync(dev)
            y = torch.as_tensor(y, device=dev)
            if y.shape != out_shape or not torch.equal(y, want):
                sys.exit(f"{label}: the output differs from F.pad (shape {tuple(y.shape)}, max |diff| "
                         f"{(y - want).abs().max().item() if y.shape == out_shape else 'n/a'})")
            lay = eng.layers()[0]
            compute, wall = time_engine(eng, x, a.runs, dev)
            rows.append((label, f"{lay['op']} [{lay['tactic']}]", compute, wall))
        pad = lambda t: torch.nn.functional.pad(t, list(pads), mode="circular")  # noqa: E731
        peers = [("PyTorch eager F.pad", time_torch(pad, x, a.runs, dev))]
        if dev == "cuda" and not a.no_compile:
            comp = torch.compile(pad, mode="reduce-overhead")
            if not torch.equal(comp(x).clone(), want):
                sys.exit("torch.compile's F.pad differs from eager")
            peers.append(('torch.compile(mode="reduce-overhead") F.pad', time_torch(comp, x, a.runs, dev)))

        # Per-call overhead of a layer: 1 and 10 layers on a tiny tensor.
        tiny = torch.ones(1, 4, device=dev)
        over = []
        for label, op, ns, p in (("C++ op (example::circ_pad_plugin)", "circ_pad_plugin", "example", (0, 0)),
                                 ("Python JIT, torch F.pad (pyexample::circ_pad_plugin)", "circ_pad_plugin",
                                  "pyexample", (0, 0)),
                                 ("Python JIT, empty impl (pybench::noop)", "noop", "pybench", None)):
            one = time_engine(opforge.Engine.build(model(f"{d}/o1.onnx", op, ns, (1, 4), 1, p), device=dev), tiny,
                              a.runs, dev)
            ten = time_engine(opforge.Engine.build(model(f"{d}/o10.onnx", op, ns, (1, 4), 10, p), device=dev), tiny,
                              a.runs, dev)
            over.append((label, one, ten))

    name = torch.cuda.get_device_name() if dev == "cuda" else "CPU backend"
    print(f"{name}, torch {torch.__version__}, x {list(shape)} fp32, pads {list(pads)} -> {list(out_shape)}; "
          f"median of {a.runs} runs; memory floor {floor_ms:.4f} ms (read x + write y at "
          f"{ceiling / 1e12:.2f} TB/s, a copy measured in this run)\n")
    best_peer = min(ms for _, ms in peers)
    print("| implementation | layer [tactic] | GPU compute ms | per run() call µs | vs best PyTorch | floor / time |")
    print("|---|---|---|---|---|---|")
    for label, lay, compute, wall in rows:
        t = compute if compute is not None else wall / 1e3
        print(f"| {label} | {lay} | {'' if compute is None else f'{compute:.4f}'} | {wall:.1f} | "
              f"{best_peer / t:.2f}x | {floor_ms / t:.2f} |")
    for label, ms in peers:
        print(f"| {label} | | {ms:.4f} | | {best_peer / ms:.2f}x | {floor_ms / ms:.2f} |")
    print(f"\nPer-call overhead, x [1, 4] fp32, wall µs per Engine.run() (+ synchronize) from Python:\n")
    print("| layer | 1-layer plan µs | 10-layer plan µs | per extra layer µs | GPU compute per extra layer µs |")
    print("|---|---|---|---|---|")
    for label, (c1, w1), (c10, w10) in over:
        gpu = "" if c1 is None else f"{(c10 - c1) * 1e3 / 9:.1f}"
        print(f"| {label} | {w1:.1f} | {w10:.1f} | {(w10 - w1) / 9:.1f} | {gpu} |")


if __name__ == "__main__":
    main()
