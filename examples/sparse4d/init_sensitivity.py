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
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fp16_backbone_parts import PARTS, cosine, features_with_fp16  # noqa: E402
from sparse4d_model import CONFIGS, build_model  # noqa: E402
from sparse4d_model.model import BN3_SCALE, BN_SCALE, make_frames  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    low = ("stem", "layer1", "layer2")
    runs = [("fp16", PARTS, ()), ("tf32", (), PARTS),
            ("fp16, stem..layer2 FP32", tuple(p for p in PARTS if p not in low), ())]
    print("| bn3 scale | backbone precision | feature cosine | 1 - cosine |\n|---|---|---|---|")
    for label, scale in (("U(0.5, 1.5) (until 2026-12-01)", BN_SCALE), ("U(0.1, 0.4) (current)", BN3_SCALE)):
        model = build_model(CONFIGS["full"], 0, bn3_scale=scale).eval()
        img = torch.as_tensor(make_frames(model.cfg, 1, seed=1)[0]["img"])
        with torch.no_grad():
            want = model.extract_feat(img)
        for name, f16, t32 in runs:
            c = cosine(want, features_with_fp16(model, img, f16, t32))
            print(f"| {label} | {name} | {c:.7f} | {1 - c:.2e} |", flush=True)


if __name__ == "__main__":
    main()
