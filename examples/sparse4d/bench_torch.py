#!/usr/bin/env python3
"""PyTorch latency of Sparse4Dv3 per module, the peers of the opforge plans (scripts/gpu-test.sh sparse4d latency).

Modes: eager FP32, eager autocast FP16, torch.compile FP32, torch.compile autocast FP16 (default inductor
mode; --compile-modes adds others, e.g. reduce-overhead). FP32 runs with TF32 off (as opforge's FP32 plans:
cuBLASLt without TF32, cuDNN FMA math). Modules: backbone (images -> packed features), head on the first frame,
head on a later frame (with a cache), and the whole frame (backbone + later-frame head + the instance bank's
cache step on the GPU). Each is timed as opforge's demo times its steps: wall clock from the call to the end of
a torch.cuda.synchronize(), inputs already on the GPU; median of --reps runs after --warmup runs.

    python3 examples/sparse4d/bench_torch.py --config full --out torch.json
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

from sparse4d_model import CONFIGS, Sparse4DTracker, build_model, cache_step, make_frames  # noqa: E402
from sparse4d_model.backbone import pack_features  # noqa: E402


def timed(fn, reps, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": statistics.median(ts), "min_ms": min(ts), "runs": reps}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", choices=sorted(CONFIGS), default="full")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--compile-modes", default="default", help="comma list of torch.compile modes")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--precisions", default="fp32,fp16",
                    help="comma list: fp32 (TF32 off), fp16 (autocast)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    cfg = CONFIGS[args.config]
    model = build_model(cfg, args.seed).to(dev)
    head = model.head
    frames = make_frames(cfg, 2, seed=1)
    tr = Sparse4DTracker(model, device=dev)
    with torch.no_grad():
        _, ins_first, _ = tr.step(frames[0])
        img = torch.as_tensor(frames[1]["img"]).to(dev)
        _, ins_later, _ = tr.step(frames[1])
    prev_conf = tr.cached[2]
    nt, decay = cfg.num_temp_instances, cfg.confidence_decay

    def backbone():
        return model.extract_feat(img)

    def head_first():
        return head.forward_first(**ins_first)

    def head_later():
        return head.forward_later(**ins_later)

    def frame_fn(bb, hl):
        def f():
            fm = bb(img)
            ins = dict(ins_later, feature_maps=fm)
            out = hl(*[ins[k] for k in ("feature_maps", "projection_mat", "image_wh", "cached_feature",
                                        "cached_anchor", "T_temp2cur", "time_interval")])
            return cache_step(out[0].float(), out[1].float(), out[2].float(), prev_conf, nt, decay)
        return f

    results = {"device": torch.cuda.get_device_name(dev) if cuda else "cpu", "torch": torch.__version__,
               "config": cfg.name, "reps": args.reps, "modes": {}}
    modes = [("eager", None)]
    if not args.no_compile:
        modes += [(f"compile[{m}]", m) for m in args.compile_modes.split(",") if m]
    for name, cmode in modes:
        for prec in args.precisions.split(","):
            key = f"{name} {prec}"
            print(f"--- {key}", flush=True)
            half = prec == "fp16"
            ctx = (lambda: torch.autocast(dev.type, dtype=torch.float16)) if half else torch.no_grad
            extract = model.extract_feat
            if cmode is None:
                bb_fn = extract
                hf_fn = head.forward_first
                hl_fn = head.forward_later
            else:
                kw = {} if cmode == "default" else {"mode": cmode}
                torch._dynamo.reset()
                bb_fn = torch.compile(extract, fullgraph=True, **kw)
                hf_fn = torch.compile(head.forward_first, fullgraph=True, **kw)
                hl_fn = torch.compile(head.forward_later, fullgraph=True, **kw)
            r = {}
            t0 = time.time()
            with torch.no_grad(), ctx():
                r["backbone"] = timed(lambda: bb_fn(img), args.reps, args.warmup, sync)
                r["head_first"] = timed(lambda: hf_fn(**ins_first), args.reps, args.warmup, sync)
                r["head_later"] = timed(lambda: hl_fn(**ins_later), args.reps, args.warmup, sync)
                r["frame"] = timed(frame_fn(bb_fn, hl_fn), args.reps, args.warmup, sync)
            r["wall_s"] = time.time() - t0
            results["modes"][key] = r
            print(json.dumps(r), flush=True)
            with open(args.out, "w") as f:  # after every mode: a run cut short keeps what it measured
                json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
