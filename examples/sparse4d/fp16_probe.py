#!/usr/bin/env python3
"""Where does the FP16 first-frame head lose accuracy? A CPU probe at the full configuration (no GPU needed).

    OPFORGE_BUILD_DIR=build python3 examples/sparse4d/fp16_probe.py [--work /tmp/s4d-fp16] \
        [--pin NAME=PATTERN:fp32[,PATTERN:fp32...]] ...

Exports the first-frame head of the full model (random weights, seed 0) with opforge.onnx.export, builds CPU
plans with `opforge exec` (FP32; --fp16; --fp16 with each --pin set kept in FP32 through --layerPrecisions),
and prints the cosine of each output against PyTorch FP32. Also prints PyTorch's own autocast FP16 and BF16 on
the CPU against PyTorch FP32, and the effect of rounding only the feature maps to FP16: how much of the loss
belongs to the model (random weights) rather than to the engine. The CPU reference kernels accumulate in
float64, so the FP16 plans here measure FP16 storage of activations alone.
"""
import argparse
import os
import pathlib
import sys
import time

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import opforge  # noqa: E402
from sparse4d_model import CONFIGS, build_model, deploy  # noqa: E402
from sparse4d_model.model import HEAD_OUTPUTS, HeadFirstGraph  # noqa: E402

OUTPUTS = ("instance_feature", "anchor", "classification", "quality")


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def row(tag, want, got):
    print(f"| {tag} | " + " | ".join(f"{cosine(want[k], got[k]):.6f}" for k in OUTPUTS) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/s4d-fp16")
    ap.add_argument("--pin", action="append", default=[], help="NAME=PATTERN:fp32[,...] (repeatable)")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.work, exist_ok=True)
    build = pathlib.Path(os.environ.get("OPFORGE_BUILD_DIR", HERE.parents[1] / "build")).resolve()
    opforge_bin, plugins = str(build / "bin" / "opforge"), str(build / "lib" / "libopforge_ops.so")

    t0 = time.time()
    model = build_model(CONFIGS["full"], 0).eval()
    ins = deploy.example_inputs(model)["head_first"]
    graph = HeadFirstGraph(model).eval()
    with torch.no_grad():
        want = {k: v.numpy() for k, v in zip(HEAD_OUTPUTS, graph(*ins.values()))}
    onnx_path = os.path.join(args.work, "head_first.onnx")
    opforge.onnx.export(graph, tuple(ins.values()), onnx_path, input_names=list(ins), output_names=HEAD_OUTPUTS,
                        custom_translation_table=deploy.translation_table())
    print(f"full config, first-frame head; inputs and export in {time.time() - t0:.0f} s\n")
    print("| run (cosine against PyTorch FP32) | " + " | ".join(OUTPUTS) + " |")
    print("|---|" + "---|" * len(OUTPUTS))

    with torch.no_grad():
        x = dict(ins)
        x["feature_maps"] = ins["feature_maps"].half().float()
        row("PyTorch, feature maps rounded to FP16", want, {k: v.numpy() for k, v in zip(HEAD_OUTPUTS, graph(*x.values()))})
        for dt, name in ((torch.float16, "FP16"), (torch.bfloat16, "BF16")):
            with torch.autocast("cpu", dtype=dt):
                out = graph(*ins.values())
            row(f"PyTorch autocast {name} (CPU)", want, {k: v.float().numpy() for k, v in zip(HEAD_OUTPUTS, out)})

    feeds = {k: v.numpy() for k, v in ins.items()}
    runs = [("opforge FP32", False, ""), ("opforge --fp16", True, "")]
    runs += [(f"opforge --fp16, {p.split('=', 1)[0]} kept in FP32", True, p.split("=", 1)[1]) for p in args.pin]
    for i, (tag, fp16, pins) in enumerate(runs):
        plan = os.path.join(args.work, f"head_first_{i}.plan")
        extra = [f"--layerPrecisions={pins}"] if pins else []
        deploy.opforge_exec(opforge_bin, plugins, onnx_path, plan, fp16=fp16, extra=extra)
        row(tag, want, opforge.Engine.load(plan).run(feeds))


if __name__ == "__main__":
    main()
