"""PyTorch's convolutions on the shapes of opforge_conv_bench (relu(conv(x, w) + b), cuDNN with
benchmark mode), NCHW and channels-last, for comparison with the cuDNN tactics opforge times.

    python3 bench/gpu/conv_peers.py [--dtype fp16|fp32|bf16] [--batch 6] [--height 256] [--width 704]
"""
import argparse

import torch
import torch.nn.functional as F


def shapes(h, w):
    return [
        ("stem 7x7/2 3->64", 3, 64, 7, 2, h, w),
        ("l1 1x1 64->64", 64, 64, 1, 1, h // 4, w // 4),
        ("l1 3x3 64->64", 64, 64, 3, 1, h // 4, w // 4),
        ("l1 1x1 64->256", 64, 256, 1, 1, h // 4, w // 4),
        ("l1 1x1 256->64", 256, 64, 1, 1, h // 4, w // 4),
        ("l2 3x3/2 128->128", 128, 128, 3, 2, h // 4, w // 4),
        ("l2 1x1 128->512", 128, 512, 1, 1, h // 8, w // 8),
        ("l2 1x1 512->128", 512, 128, 1, 1, h // 8, w // 8),
        ("l2 3x3 128->128", 128, 128, 3, 1, h // 8, w // 8),
        ("l3 1x1 1024->256", 1024, 256, 1, 1, h // 16, w // 16),
        ("l3 3x3 256->256", 256, 256, 3, 1, h // 16, w // 16),
        ("l3 1x1 256->1024", 256, 1024, 1, 1, h // 16, w // 16),
        ("l4 1x1 2048->512", 2048, 512, 1, 1, h // 32, w // 32),
        ("l4 3x3 512->512", 512, 512, 3, 1, h // 32, w // 32),
        ("l4 1x1 512->2048", 512, 2048, 1, 1, h // 32, w // 32),
        ("fpn 3x3 256->256 /4", 256, 256, 3, 1, h // 4, w // 4),
    ]


def median_ms(fn, reps):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "fp32", "bf16"])
    ap.add_argument("--batch", type=int, default=6)
    ap.add_argument("--height", type=int, default=256)
    ap.add_argument("--width", type=int, default=704)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    dt = {"fp16": torch.float16, "fp32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    print(f"# PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {args.dtype}, batch {args.batch}")
    print("| conv | GFLOP | NCHW ms | TFLOP/s | channels-last ms | TFLOP/s |\n|---|---|---|---|---|---|")
    tot = [0.0, 0.0]
    for name, c, m, k, s, hi, wi in shapes(args.height, args.width):
        x = torch.randn(args.batch, c, hi, wi, device="cuda", dtype=dt)
        w = torch.randn(m, c, k, k, device="cuda", dtype=dt) / (c * k * k) ** 0.5
        b = torch.randn(m, device="cuda", dtype=dt)
        y = F.conv2d(x, w, b, s, k // 2)
        gflop = 2 * y.numel() * c * k * k * 1e-9
        r = []
        for cl in (False, True):
            xx = x.contiguous(memory_format=torch.channels_last) if cl else x
            ww = w.contiguous(memory_format=torch.channels_last) if cl else w
            r.append(median_ms(lambda: F.relu(F.conv2d(xx, ww, b, s, k // 2), inplace=True), args.reps))
        tot[0] += r[0]
        tot[1] += r[1]
        print(f"| {name} | {gflop:.2f} | {r[0]:.4f} | {gflop / r[0]:.0f} | {r[1]:.4f} | {gflop / r[1]:.0f} |")
    print(f"\nsum: NCHW {tot[0]:.3f} ms, channels-last {tot[1]:.3f} ms")


if __name__ == "__main__":
    main()
