#!/usr/bin/env python3
"""Feature accuracy of the FP16 backbone plan with parts kept in FP32: opforge CPU plans against PyTorch FP32.

    OPFORGE_BUILD_DIR=build python3 examples/sparse4d/fp16_backbone_plans.py [--keep SCOPE[,SCOPE...]] ...

First frame of the full configuration (--config reduced: a quick check). Exports the backbone (dynamo exporter), builds one CPU plan per --keep set with
`opforge exec --fp16 --layerPrecisions=...` (the set's nodes found through the exporter's module scopes, as
sparse4d_model.deploy.fp32_layer_patterns does; an empty set: plain --fp16) and prints the cosine of the packed
feature maps against PyTorch FP32. The CPU's FP16 kernels are plain loops: each plan takes 15-20 minutes here.
"""
import argparse
import os
import pathlib
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import opforge  # noqa: E402
from sparse4d_model import CONFIGS, build_model, deploy  # noqa: E402
from sparse4d_model.model import BackboneGraph, make_frames  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="append", default=None, help="comma-separated module scopes kept in FP32")
    ap.add_argument("--work", default="/tmp/s4d-fp16-backbone")
    ap.add_argument("--config", default="full", choices=sorted(CONFIGS), help="model configuration (reduced: a quick check)")
    args = ap.parse_args()
    keeps = args.keep if args.keep is not None else ["", ",".join(deploy.STEM_TO_LAYER2)]
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    build = pathlib.Path(os.environ.get("OPFORGE_BUILD_DIR", pathlib.Path(__file__).parents[2] / "build")).resolve()
    model = build_model(CONFIGS[args.config], 0).eval()
    img = torch.as_tensor(make_frames(model.cfg, 1, seed=1)[0]["img"])
    with torch.no_grad():
        want = model.extract_feat(img).numpy().astype(np.float64).ravel()
    onnx_path = os.path.join(args.work, "backbone.onnx")
    opforge.onnx.export(BackboneGraph(model), (img,), onnx_path, input_names=["img"], output_names=["feature_maps"])
    print("| plan | feature cosine | 1 - cosine |\n|---|---|---|")
    for i, keep in enumerate(keeps):
        scopes = tuple(s for s in keep.split(",") if s)
        pins = deploy.fp32_layer_patterns(onnx_path, scopes) if scopes else ""
        plan = os.path.join(args.work, f"backbone_{i}.plan")
        t = time.time()
        deploy.opforge_exec(str(build / "bin" / "opforge"), str(build / "lib" / "libopforge_ops.so"), onnx_path, plan,
                            fp16=True, extra=[f"--layerPrecisions={pins}"] if pins else [])
        got = opforge.Engine.load(plan).run({"img": img.numpy()})["feature_maps"].astype(np.float64).ravel()
        c = float(want @ got / np.linalg.norm(want) / np.linalg.norm(got))
        print(f"| --fp16{', ' + ' + '.join(s.split('.')[-1] for s in scopes) + ' kept in FP32' if scopes else ''} "
              f"| {c:.7f} | {1 - c:.2e} |  ({time.time() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
