#!/usr/bin/env python3
"""Which part of the backbone's FP16 rounding costs the feature maps their accuracy? PyTorch on the CPU.

    python3 examples/sparse4d/fp16_backbone_parts.py [--threads 2]

Full configuration (6 cameras at 256x704, ResNet-50 + FPN, random weights, seed 0), first frame. For each set of
parts (stem = conv1/bn1/maxpool and the input image; layer1..layer4; fpn) the weights of their convolutions and the
outputs of their convolutions, BatchNorms and bottleneck blocks are rounded to FP16 — what an FP16 plan stores —
and the packed feature maps are compared with FP32 (cosine). Tells which modules to keep in FP32 in an FP16 plan
(sparse4d_model.deploy.BACKBONE_FP32_SCOPES; with the current initialisation, none).
"""
import argparse
import copy
import pathlib
import sys

import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from sparse4d_model import CONFIGS, build_model  # noqa: E402
from sparse4d_model.model import make_frames  # noqa: E402

PARTS = ("stem", "layer1", "layer2", "layer3", "layer4", "fpn")


def part_of(name):
    if name.startswith("img_neck"):
        return "fpn"
    if name.startswith("img_backbone.layer"):
        return name.split(".")[1]
    return "stem"


def cosine(a, b):
    a, b = a.double().ravel(), b.double().ravel()
    return float(a @ b / a.norm() / b.norm())


def to_tf32(t):
    """Round FP32 to TF32 (10 mantissa bits), to nearest (ties away), keeping FP32 storage."""
    i = t.contiguous().view(torch.int32)
    return ((i + 0x1000) & ~0x1FFF).view(torch.float32)


def with_rounding(model, fp16_parts=(), tf32_parts=()):
    """A copy of the model whose backbone/FPN parts in fp16_parts store FP16 (convolution weights and the outputs
    of convolutions, BatchNorms and bottleneck blocks rounded to FP16) and whose parts in tf32_parts convolve in
    TF32 (inputs and weights rounded to TF32, outputs FP32, as cuDNN's TF32 tensor-core convolutions)."""
    m = copy.deepcopy(model)
    for name, mod in m.named_modules():
        if not name.startswith(("img_backbone", "img_neck")):
            continue
        part = part_of(name)
        if part in fp16_parts:
            if isinstance(mod, nn.Conv2d):
                with torch.no_grad():
                    mod.weight.copy_(mod.weight.half().float())
                    if mod.bias is not None:
                        mod.bias.copy_(mod.bias.half().float())
            if isinstance(mod, (nn.Conv2d, nn.BatchNorm2d)) or type(mod).__name__ == "Bottleneck":
                mod.register_forward_hook(lambda _m, _i, out: out.half().float())
        elif part in tf32_parts and isinstance(mod, nn.Conv2d):
            with torch.no_grad():
                mod.weight.copy_(to_tf32(mod.weight))
            mod.register_forward_pre_hook(lambda _m, inp: (to_tf32(inp[0]),))
    return m


def features_with_fp16(model, img, parts, tf32_parts=()):
    m = with_rounding(model, parts, tf32_parts)
    with torch.no_grad():
        return m.extract_feat(img.half().float() if "stem" in parts else img)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = build_model(CONFIGS["full"], 0).eval()
    img = torch.as_tensor(make_frames(model.cfg, 1, seed=1)[0]["img"])
    with torch.no_grad():
        want = model.extract_feat(img)
    print("| parts rounded to FP16 | feature cosine | 1 - cosine |\n|---|---|---|")
    for parts in [PARTS] + [(p,) for p in PARTS] + [("stem", "layer1"), ("layer2", "layer3", "layer4", "fpn"),
                                                       ("layer3", "layer4", "fpn")]:
        c = cosine(want, features_with_fp16(model, img, parts))
        print(f"| {' + '.join(parts)} | {c:.7f} | {1 - c:.2e} |", flush=True)


if __name__ == "__main__":
    main()
