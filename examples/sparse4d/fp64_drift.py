#!/usr/bin/env python3
"""How far PyTorch FP32 itself drifts from float64 over a closed-loop sequence (each run keeps its own instance
bank): the yardstick for the FP32 closed-loop comparison of sparse4d.py (FP64_DRIFT_FACTOR).

    python3 examples/sparse4d/fp64_drift.py --config full --features both --threads 2

--features own: the FP32 run uses its own FP32 backbone (what any FP32 deployment does);
--features fp64: both runs get the float64 backbone's features (the FP32 run rounded to FP32), so only the head's
recurrence differs; both: one after the other. --noise EPS adds a third FP32 run on the float64 features times
(1 + EPS * N(0, 1)) (fixed seed): how a relative perturbation of that size grows through the recurrence. CPU only (opforge's FP64 aggregation is a CPU kernel); the full
configuration takes about 4 minutes on 2 cores. Prints markdown tables (min cosine per output over the frames,
matched rows; over the frames where both runs hold the same instances).
"""
import argparse
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

from sparse4d_model import CONFIGS, build_model, make_frames  # noqa: E402
from sparse4d_model import deploy  # noqa: E402


def table(res, title):
    lines = [title, "", "| output | max abs error | min cosine (all frames, matched rows) | min cosine (frames of equal state) |",
             "|---|---|---|---|"]
    for n, r in res.items():
        if n.startswith("_"):
            continue
        if "equal" in r:
            lines.append(f"| {n} | {'identical' if r['equal'] else 'differ in frames ' + str(r['frames_differing'])} | | |")
        else:
            lines.append(f"| {n} | {r['max_abs']:.3g} | {r['cosine']:.9f} | {r.get('cosine_same_state', float('nan')):.9f} |")
    lines.append(f"\nboth runs hold the same instances in frames 0-{res['_same_state_frames'] - 1} of {len(res['feature_maps']['per_frame'])}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="reduced")
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="weights seed")
    ap.add_argument("--data-seed", type=int, default=1, help="frames seed")
    ap.add_argument("--features", choices=["own", "fp64", "both"], default="both")
    ap.add_argument("--noise", type=float, default=0.0, help="also a run on perturbed float64 features")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    model = build_model(CONFIGS[args.config], args.seed).eval()
    frames = make_frames(model.cfg, args.frames, seed=args.data_seed)
    t = time.time()
    ref64 = deploy.reference_sequence(model, frames, "cpu", dtype=torch.float64)
    print(f"float64 run: {time.time() - t:.1f} s", file=sys.stderr)
    print(f"# PyTorch FP32 against float64, closed loop, {model.cfg.name} configuration, {args.frames} frames, "
          f"torch {torch.__version__}, CPU\n")
    if args.features in ("own", "both"):
        t = time.time()
        ref32 = deploy.reference_sequence(model, frames, "cpu")
        print(f"FP32 run (own backbone): {time.time() - t:.1f} s", file=sys.stderr)
        print(table(deploy.compare_sequence(ref64, ref32, frames, model.cfg),
                    "## FP32 end to end (its own FP32 backbone)") + "\n")
    if args.features in ("fp64", "both"):
        feats = iter([torch.as_tensor(r["feature_maps"]) for r in ref64])
        t = time.time()
        ref32 = deploy.reference_sequence(model, frames, "cpu", backbone_fn=lambda img: next(feats).float())
        print(f"FP32 run (float64 features): {time.time() - t:.1f} s", file=sys.stderr)
        print(table(deploy.compare_sequence(ref64, ref32, frames, model.cfg),
                    "## FP32 head on the float64 backbone's features (rounded to FP32)") + "\n")
    if args.noise > 0:
        g = torch.Generator().manual_seed(5)
        feats = iter([torch.as_tensor(r["feature_maps"]) for r in ref64])

        def noisy(img):
            f = next(feats)
            return (f * (1 + args.noise * torch.randn(f.shape, generator=g, dtype=f.dtype))).float()

        t = time.time()
        ref32 = deploy.reference_sequence(model, frames, "cpu", backbone_fn=noisy)
        print(f"FP32 run (perturbed float64 features): {time.time() - t:.1f} s", file=sys.stderr)
        print(table(deploy.compare_sequence(ref64, ref32, frames, model.cfg),
                    f"## FP32 head on the float64 features times (1 + {args.noise:g} N(0, 1))") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
