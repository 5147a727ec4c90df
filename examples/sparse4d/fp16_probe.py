#!/usr/bin/env python3
"""Where does the FP16 first-frame head lose accuracy? A probe at the full configuration (CPU by default).

    OPFORGE_BUILD_DIR=build python3 examples/sparse4d/fp16_probe.py [--work /tmp/s4d-fp16] \
        [--pin NAME=PATTERN:fp32[,PATTERN:fp32...]] ... [--device cuda] [--backbone] [--profile-dir DIR]

Exports the first-frame head of the full model (random weights, seed 0) with opforge.onnx.export, builds CPU
plans with `opforge exec` (FP32; --fp16; --fp16 with each --pin set kept in FP32 through --layerPrecisions),
and prints the cosine of each output against PyTorch FP32. Also prints PyTorch's own autocast FP16 and BF16 on
the CPU against PyTorch FP32, and the effect of rounding only the feature maps to FP16: how much of the loss
belongs to the model (random weights) rather than to the engine. The CPU reference kernels accumulate in
float64, so the FP16 plans here measure FP16 storage of activations alone.

--device cuda builds CUDA plans and runs PyTorch on the GPU (FP32 with TF32 off; autocast on CUDA).
--backbone adds the backbone (feature_maps of opforge FP16 and of PyTorch autocast FP16 against PyTorch FP32)
and the first frame end to end (backbone + head, each in FP16), as the 10-frame comparison of sparse4d.py
runs it; --profile-dir writes the per-layer profile of the FP16 plans (`opforge exec --dumpProfile`).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import opforge  # noqa: E402
from sparse4d_model import CONFIGS, build_model, deploy  # noqa: E402
from sparse4d_model.model import HEAD_OUTPUTS, BackboneGraph, HeadFirstGraph  # noqa: E402

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
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="plan backend and PyTorch device")
    ap.add_argument("--backbone", action="store_true", help="also the backbone and the frame end to end")
    ap.add_argument("--profile-dir", help="per-layer profiles of the FP16 plans go here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference: FP32 without TF32
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.work, exist_ok=True)
    build = pathlib.Path(os.environ.get("OPFORGE_BUILD_DIR", HERE.parents[1] / "build")).resolve()
    opforge_bin, plugins = str(build / "bin" / "opforge"), str(build / "lib" / "libopforge_ops.so")

    t0 = time.time()
    model = build_model(CONFIGS["full"], 0).eval()
    all_ins = deploy.example_inputs(model)
    ins, img = all_ins["head_first"], all_ins["backbone"]["img"]
    graph = HeadFirstGraph(model).eval()
    onnx_path = os.path.join(args.work, "head_first.onnx")
    opforge.onnx.export(graph, tuple(ins.values()), onnx_path, input_names=list(ins), output_names=HEAD_OUTPUTS,
                        custom_translation_table=deploy.translation_table())
    if args.backbone:
        bb_path = os.path.join(args.work, "backbone.onnx")
        opforge.onnx.export(BackboneGraph(model), (img,), bb_path, input_names=["img"], output_names=["feature_maps"])
    model = model.to(dev)
    graph = HeadFirstGraph(model).eval()
    ins = {k: v.to(dev) for k, v in ins.items()}
    with torch.no_grad():
        want = {k: v.cpu().numpy() for k, v in zip(HEAD_OUTPUTS, graph(*ins.values()))}
    print(f"full config, first-frame head on {args.device}; inputs and export in {time.time() - t0:.0f} s\n")
    print("| run (cosine against PyTorch FP32) | " + " | ".join(OUTPUTS) + " |")
    print("|---|" + "---|" * len(OUTPUTS))

    with torch.no_grad():
        x = dict(ins)
        x["feature_maps"] = ins["feature_maps"].half().float()
        row("PyTorch, feature maps rounded to FP16", want, {k: v.cpu().numpy() for k, v in zip(HEAD_OUTPUTS, graph(*x.values()))})
        for dt, name in ((torch.float16, "FP16"), (torch.bfloat16, "BF16")):
            with torch.autocast(args.device, dtype=dt):
                out = graph(*ins.values())
            row(f"PyTorch autocast {name} ({args.device})", want, {k: v.float().cpu().numpy() for k, v in zip(HEAD_OUTPUTS, out)})

    feeds = {k: v.cpu().numpy() for k, v in ins.items()}
    # CUDA builds share a timing cache: the pinned variants re-time only the layers whose precision changed.
    tcache = [f"--timingCacheFile={os.path.join(args.work, 'timing.cache')}"] if args.device == "cuda" else []
    head16 = None
    runs = [("opforge FP32", False, ""), ("opforge --fp16", True, "")]
    runs += [(f"opforge --fp16, {p.split('=', 1)[0]} kept in FP32", True, p.split("=", 1)[1]) for p in args.pin]
    for i, (tag, fp16, pins) in enumerate(runs):
        plan = os.path.join(args.work, f"head_first_{i}.plan")
        extra = tcache + ([f"--layerPrecisions={pins}"] if pins else [])
        deploy.opforge_exec(opforge_bin, plugins, onnx_path, plan, fp16=fp16, device=args.device, extra=extra)
        row(tag, want, opforge.Engine.load(plan).run(feeds))
        if fp16 and not pins:
            head16 = plan
            profile(opforge_bin, plugins, plan, args.profile_dir, "head_first_fp16")
    if not args.backbone:
        return

    # The backbone, and the first frame end to end as the 10-frame comparison runs it (FP16 plans in a row).
    print("\n| backbone / end to end (cosine against PyTorch FP32) | feature_maps | " + " | ".join(OUTPUTS) + " |")
    print("|---|" + "---|" * (len(OUTPUTS) + 1))
    bb = BackboneGraph(model).eval()
    imgd = img.to(dev)
    with torch.no_grad():
        feat32 = bb(imgd)
        with torch.autocast(args.device, dtype=torch.float16):
            feat16 = bb(imgd)
            out16 = graph(feat16, ins["projection_mat"], ins["image_wh"])
    want_f = feat32.cpu().numpy()

    def e2e(tag, feat, outs):
        print(f"| {tag} | {cosine(want_f, feat):.6f} | " + " | ".join(f"{cosine(want[k], outs[k]):.6f}" for k in OUTPUTS) +
              " |", flush=True)

    e2e("PyTorch autocast FP16, backbone + head", feat16.float().cpu().numpy(),
        {k: v.float().cpu().numpy() for k, v in zip(HEAD_OUTPUTS, out16)})
    bb_plans = {}
    for fp16 in (False, True):
        plan = os.path.join(args.work, f"backbone_{'fp16' if fp16 else 'fp32'}.plan")
        deploy.opforge_exec(opforge_bin, plugins, bb_path, plan, fp16=fp16, device=args.device, extra=tcache)
        bb_plans[fp16] = plan
    profile(opforge_bin, plugins, bb_plans[True], args.profile_dir, "backbone_fp16")
    head32 = os.path.join(args.work, "head_first_0.plan")
    img_np = img.numpy()
    for bb16, hd16, tag in ((True, False, "opforge FP16 backbone, FP32 head"), (False, True, "opforge FP32 backbone, FP16 head"),
                            (True, True, "opforge FP16 backbone + FP16 head")):
        f = opforge.Engine.load(bb_plans[bb16]).run({"img": img_np})["feature_maps"]
        hf = dict(feeds, feature_maps=f)
        e2e(tag, f, opforge.Engine.load(head16 if hd16 else head32).run(hf))


def profile(opforge_bin, plugins, plan, folder, name):
    """`opforge exec --loadEngine --dumpProfile` of a plan into folder/name.txt (and its `inspect`)."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.txt"), "w") as f:
        for cmd in ([opforge_bin, "inspect", plan, f"--plugins={plugins}"],
                    [opforge_bin, "exec", f"--loadEngine={plan}", f"--plugins={plugins}", "--dumpProfile",
                     "--iterations=20", "--warmUp=200"]):
            p = subprocess.run(cmd, capture_output=True, text=True)
            f.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr + "\n")


if __name__ == "__main__":
    main()
