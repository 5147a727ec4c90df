#!/usr/bin/env python3
"""How much does the random-weight backbone amplify the rounding of reduced precision? PyTorch on the CPU.

    python3 examples/sparse4d/init_sensitivity.py [--threads 2]

Full configuration (6 cameras at 256x704, ResNet-50 + FPN, seed 0), first frame; the packed feature maps compared
with FP32 (cosine) when the backbone and FPN run with
  - fp16: convolution weights and the outputs of convolutions, BatchNorms and bottleneck blocks rounded to FP16
          (what an FP16 plan stores; fp16_backbone_parts.py does the same per part);
  - tf32: the inputs and weights of every convolution rounded to TF32 (10-bit mantissa, round to nearest),
          outputs FP32: what cuDNN's TF32 tensor-core convolutions do (PyTorch's default for FP32 convolutions);
  - fp16 with the stem, layer1 and layer2 in FP32 (deploy.STEM_TO_LAYER2);
for two initialisations that differ only in the scale of each residual branch's last BatchNorm (bn3): U(0.5, 1.5)
as every other BatchNorm (until 2026-12-01) and U(0.1, 0.4) (sparse4d_model.model.BN3_SCALE, the current one).
"""
import argparse
import copy
import pathlib
import sys

import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fp16_backbone_parts import PARTS, cosine, part_of  # noqa: E402
from sparse4d_model import CONFIGS, build_model  # noqa: E402
from sparse4d_model.model import BN3_SCALE, BN_SCALE, make_frames  # noqa: E402


def to_tf32(t):
    """Round FP32 to TF32 (10 mantissa bits), to nearest (ties away), keeping FP32 storage."""
    i = t.contiguous().view(torch.int32)
    return ((i + 0x1000) & ~0x1FFF).view(torch.float32)


def features(model, img, fp16_parts=(), tf32_parts=()):
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
    with torch.no_grad():
        return m.extract_feat(img.half().float() if "stem" in fp16_parts else img)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    low = ("stem", "layer1", "layer2")
    runs = [("fp16", PARTS, ()), ("tf32", (), PARTS), ("fp16, stem..layer2 FP32", tuple(p for p in PARTS if p not in low), ())]
    print("| bn3 scale | backbone precision | feature cosine | 1 - cosine |\n|---|---|---|---|")
    for label, scale in (("U(0.5, 1.5) (until 2026-12-01)", BN_SCALE), ("U(0.1, 0.4) (current)", BN3_SCALE)):
        model = build_model(CONFIGS["full"], 0, bn3_scale=scale).eval()
        img = torch.as_tensor(make_frames(model.cfg, 1, seed=1)[0]["img"])
        with torch.no_grad():
            want = model.extract_feat(img)
        for name, f16, t32 in runs:
            c = cosine(want, features(model, img, f16, t32))
            print(f"| {label} | {name} | {c:.7f} | {1 - c:.2e} |", flush=True)


if __name__ == "__main__":
    main()
