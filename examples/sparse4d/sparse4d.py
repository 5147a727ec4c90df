#!/usr/bin/env python3
"""Sparse4Dv3 on opforge: export, frames, plans, the C++ demo, and the comparison with PyTorch.

    python3 examples/sparse4d/sparse4d.py run --config reduced --out /tmp/s4d          # everything, CPU
    python3 examples/sparse4d/sparse4d.py run --config full --device cuda --out OUT     # on a GPU machine

Steps (each is also a subcommand):
  export    the backbone, first-frame head and later-frame head graphs -> ONNX (opforge.onnx.export)
  frames    10 consecutive random-but-plausible frames -> frame_NNNN/*.npy (what the demo reads)
  build     FP32 and FP16 plans with `opforge exec`
  demo      build/bin/sparse4d_demo over the frames (C++, no Python), outputs saved per frame
  compare   the demo's outputs against PyTorch: FP32 closed loop (PyTorch keeps its own instance bank) and,
            for every precision, synced (PyTorch runs each frame on the demo's cache); max abs error and cosine
            per output, written as JSON and markdown
Run from anywhere; OPFORGE_BUILD_DIR (or --build) names the opforge build tree (bin/opforge,
bin/sparse4d_demo, lib/libopforge_ops.so).
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from sparse4d_model import CONFIGS, build_model, make_frames, write_frames  # noqa: E402
from sparse4d_model import deploy  # noqa: E402

# Acceptance thresholds of the issue: FP32 every output; FP16 instance features and boxes.
FP32_MIN_COSINE = 0.99999
# FP32 closed loop (each run keeps its own instance bank, so rounding differences feed back through the
# recurrence and grow): a sanity bound, not the criterion, which applies per frame (synced). The recurrence
# amplifies any difference: PyTorch FP32 itself ends 0.99985 (quality) / 0.99998 (instance features) from a
# float64 run over the frames of equal state at full size, and a 1e-5 relative perturbation of the features alone
# gives 0.99992 after 10 frames (bench/results/sparse4d_fp64_drift.md). Real faults (a wrong cache, time step or
# mask) land far below 0.999.
CLOSED_LOOP_MIN_COSINE = 0.999
# ... and over every frame, on the rows of the instances both runs hold (once near-equal confidences made them cache
# different instances, the rest are not comparable): PyTorch against opforge FP32 at full size, 0.99883 (quality,
# frame 9) with 98.5 % of the rows matched; a fault that changes which instances are cached from the second frame on
# (a wrong ego motion: 0.89-0.92 on the reduced configuration) has no frame of equal state to fail in, so this is
# what catches it.
CLOSED_LOOP_MATCHED_MIN_COSINE = 0.99
CLOSED_LOOP_MIN_MATCHED = 0.9
FP16_MIN_COSINE = 0.999
FP16_CHECKED = ("instance_feature", "anchor")


def build_dir(args):
    d = getattr(args, "build", None) or os.environ.get("OPFORGE_BUILD_DIR") or str(ROOT / "build")
    return pathlib.Path(d).resolve()


def tools(args):
    b = build_dir(args)
    return str(b / "bin" / "opforge"), str(b / "lib" / "libopforge_ops.so"), str(b / "bin" / "sparse4d_demo")


def frame_list(cfg, args):
    gaps = tuple(int(x) for x in args.gaps.split(",") if x) if getattr(args, "gaps", "") else ()
    return make_frames(cfg, args.frames, seed=args.data_seed, gaps=gaps)


def cmd_export(args, model=None):
    model = model or build_model(CONFIGS[args.config], args.seed)
    t = time.time()
    paths = deploy.export_all(model, os.path.join(args.out, "onnx"), dynamo=not args.torchscript)
    print(f"exported {', '.join(paths.values())} in {time.time() - t:.1f} s")
    return paths


def cmd_frames(args):
    cfg = CONFIGS[args.config]
    folder = os.path.join(args.out, "frames")
    write_frames(frame_list(cfg, args), folder)
    print(f"wrote {args.frames} frames to {folder}")
    return folder


def cmd_build(args, onnx_paths=None):
    opforge_bin, plugins, _ = tools(args)
    onnx_dir = os.path.join(args.out, "onnx")
    onnx_paths = onnx_paths or {g: os.path.join(onnx_dir, f"{g}.onnx") for g in deploy.GRAPHS}
    t = time.time()
    extra = [f"--timingCacheFile={args.timing_cache}"] if args.timing_cache else []
    plans, logs = deploy.build_plans(opforge_bin, plugins, onnx_paths, os.path.join(args.out, "plans"),
                                     args.precisions.split(","), args.device, extra=extra, return_logs=True)
    with open(os.path.join(args.out, "build.log"), "w") as f:
        for (g, prec), log in logs.items():
            f.write(f"==== {g} {prec}\n{log}\n")
    print(f"built {len(plans)} plans in {time.time() - t:.1f} s (logs: {os.path.join(args.out, 'build.log')})")
    return plans


def run_demo(args, precision, loops=1, save=True, extra=()):
    _, plugins, demo = tools(args)
    out = os.path.join(args.out, f"demo_{precision}")
    cmd = [demo, f"--plans={os.path.join(args.out, 'plans')}", f"--precision={precision}",
           f"--frames={os.path.join(args.out, 'frames')}", f"--plugins={plugins}", f"--loops={loops}"]
    if save:
        cmd += [f"--saveOutputs={out}", f"--saveFeatureMaps={args.frames}"]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"sparse4d_demo failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return out, p.stdout


def precision_list(args):
    return args.precisions.split(",")


def cmd_demo(args):
    for prec in precision_list(args):
        _, log = run_demo(args, prec, loops=args.loops)
        print(log)


def check_results(results, precision):
    """The issue's acceptance criteria; returns a list of failures."""
    fails = []
    closed, synced = results.get("closed_loop"), results["synced"]
    if closed is not None and precision == "fp32":  # FP16 closed loop: reported (see README)
        # Row by row while both runs hold the same instances (from the first frame to the first frame where
        # near-equal confidences made them cache different ones); in every frame on the instances both hold, and
        # most rows must be such instances; every frame finite.
        for n, r in closed.items():
            if n.startswith("_") or "equal" in r:
                continue  # ids: reported (their numbering shifts once the runs cache different instances)
            c = r.get("cosine_same_state", r["cosine"])
            if not r["finite"]:
                fails.append(f"fp32 closed loop: {n} is not finite")
                continue
            if c is not None and c < CLOSED_LOOP_MIN_COSINE:
                fails.append(f"fp32 closed loop: {n} cosine {c:.9f} < {CLOSED_LOOP_MIN_COSINE} in the frames of equal "
                             "state")
            if r["cosine"] < CLOSED_LOOP_MATCHED_MIN_COSINE:
                fails.append(f"fp32 closed loop: {n} cosine {r['cosine']:.9f} < {CLOSED_LOOP_MATCHED_MIN_COSINE} "
                             f"in frame {r['worst_frame']} (rows of the instances both runs hold)")
            if r.get("matched", 1.0) < CLOSED_LOOP_MIN_MATCHED:
                fails.append(f"fp32 closed loop: {n}: only {100 * r['matched']:.1f} % of the rows are the same "
                             f"instances in both runs (< {100 * CLOSED_LOOP_MIN_MATCHED:.0f} %)")
    for n in (deploy.HEAD_COMPARED if precision == "fp32" else FP16_CHECKED):
        r = synced[n]
        thr = FP32_MIN_COSINE if precision == "fp32" else FP16_MIN_COSINE
        if not (r["finite"] and r["cosine"] >= thr):
            fails.append(f"{precision} synced: {n} cosine {r['cosine']} < {thr}")
    for k, p in enumerate(synced.get("bad_picks", [])):
        if p:
            fails.append(f"{precision} synced: frame {k}: the demo's decoder-1 selection is no top-k of PyTorch's "
                         f"confidences ({p['swapped']} picks, gap {p['gap']:.3g} > {deploy.TIE_TOLERANCE[precision]} x "
                         f"{p['max_abs_confidence']:.3g})")
    for part, r in synced["bank"].items():
        if r["cosine"] < 0.999999:
            fails.append(f"{precision}: the demo's bank step differs from cache_step() ({part}: {r})")
    return fails


def ref_device(args):
    if args.ref_device:
        return args.ref_device
    return "cuda" if args.device == "cuda" and torch.cuda.is_available() else "cpu"


def compare_precision(model, frames, demo_out, precision, device="cpu"):
    got = deploy.load_demo_outputs(demo_out, len(frames))
    results = {"synced": deploy.synced_comparison(model, frames, got, device, deploy.TIE_TOLERANCE[precision])}
    ref = deploy.reference_sequence(model, frames, device)
    results["closed_loop"] = deploy.compare_sequence(ref, got, frames, model.cfg)
    if precision == "fp32":  # the float64 oracle: how far FP32 arithmetic itself drifts through the recurrence
        ref64 = deploy.reference_sequence(model, frames, device, dtype=torch.float64)
        results["closed_loop_fp64"] = deploy.compare_sequence(ref64, got, frames, model.cfg)
        results["torch_fp32_vs_fp64"] = deploy.compare_sequence(ref64, ref, frames, model.cfg)
    return results


def markdown(results, precision, cfg_name):
    out = []
    syn = {k: v for k, v in results["synced"].items()
           if k not in ("excluded_rows", "bank", "synced_picks", "bad_picks")}
    out.append(deploy.format_table(syn, f"**{cfg_name}, {precision}, synced** (PyTorch runs each frame on the "
                                        "demo's cache of the previous frame):\n"))
    ex = results["synced"]["excluded_rows"]
    out.append(f"\nrows left out of the head comparison (top-k picks that differ at the boundary), per frame: {ex}")
    picks = [(k, p) for k, p in enumerate(results["synced"].get("synced_picks", [])) if p]
    if picks:
        out.append("near-ties at the decoder-1 top-k that the plan decided the other way (PyTorch re-run with the "
                   "demo's selection): " + ", ".join(f"frame {k}: {p['swapped']} pick(s), confidence gap {p['gap']:.3g}"
                                                     for k, p in picks))
    bad = [(k, p) for k, p in enumerate(results["synced"].get("bad_picks", [])) if p]
    if bad:
        out.append("**decoder-1 selections that are no top-k of PyTorch's confidences**: " +
                   ", ".join(f"frame {k}: {p['swapped']} pick(s), gap {p['gap']:.3g}" for k, p in bad))
    b = results["synced"]["bank"]
    out.append("demo bank step vs cache_step() on the demo's outputs: " +
               ", ".join(f"{k} max abs {v['max_abs']:.3g} cosine {v['cosine']:.9f}" for k, v in b.items()))
    if "closed_loop" in results:
        cl = results["closed_loop"]
        out.append(deploy.format_table(cl, f"\n**{cfg_name}, {precision}, closed loop** (PyTorch keeps its own "
                                           "instance bank; rows matched by instance):\n"))
        n = cl.get("_same_state_frames")
        if n is not None:
            total = cl["feature_maps"]["frames"]
            out.append(f"both runs hold the same instances in frames 0-{n - 1} of {total}" if n == total else
                       f"both runs hold the same instances in frames 0-{n - 1}; from frame {n} on they cache different "
                       "instances (near-equal confidences at the top-k boundary), so only matched rows are compared")
            worst = min((r["cosine_same_state"] for r in cl.values()
                         if isinstance(r, dict) and r.get("cosine_same_state") is not None), default=None)
            if worst is not None:
                out.append(f"min cosine over every output in those frames: {worst:.9f}")
    if "closed_loop_fp64" in results:
        ours, ref = results["closed_loop_fp64"], results["torch_fp32_vs_fp64"]
        out.append(f"\n**{cfg_name}, {precision}, closed loop against the float64 run** (PyTorch in float64 on the "
                   "CPU, its own bank; rows matched by instance; distance = 1 - min cosine over the frames):\n")
        out.append("| output | opforge FP32: min cosine | PyTorch FP32: min cosine | distance ratio |")
        out.append("|---|---|---|---|")
        for n, a in ours.items():
            if n.startswith("_") or "equal" in a or n not in ref:
                continue
            b = ref[n]
            d_a, d_b = 1.0 - a["cosine"], 1.0 - b["cosine"]
            ratio = f"{d_a / d_b:.2f}" if d_b > 0 else ("0" if d_a == 0 else "inf")
            out.append(f"| {n} | {a['cosine']:.9f} | {b['cosine']:.9f} | {ratio} |")
        out.append(f"same instances as the float64 run: opforge frames 0-{ours.get('_same_state_frames', 0) - 1}, "
                   f"PyTorch FP32 frames 0-{ref.get('_same_state_frames', 0) - 1}")
    return "\n".join(out)


def strip(results):
    """JSON-ready (drop the per-frame lists)."""
    def s(d):
        return {k: (s(v) if isinstance(v, dict) else v) for k, v in d.items() if k != "per_frame"}
    return s(results)


def cmd_compare(args, model=None):
    cfg = CONFIGS[args.config]
    dev = ref_device(args)
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference: FP32 without TF32
    torch.backends.cudnn.allow_tf32 = False
    model = (model or build_model(cfg, args.seed)).to(dev)
    frames = frame_list(cfg, args)
    all_fails, report = [], {"reference_device": dev}
    md = []
    for prec in precision_list(args):
        res = compare_precision(model, frames, os.path.join(args.out, f"demo_{prec}"), prec, dev)
        report[prec] = strip(res)
        md.append(markdown(res, prec, cfg.name))
        all_fails += check_results(res, prec)
    text = "\n\n".join(md)
    print(text)
    with open(os.path.join(args.out, "consistency.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "consistency.md"), "w") as f:
        f.write(text + "\n")
    if all_fails:
        print("FAILED:\n  " + "\n  ".join(all_fails))
        return 1
    print("all consistency criteria met")
    return 0


def cmd_run(args):
    torch.set_num_threads(max(1, args.threads))
    model = build_model(CONFIGS[args.config], args.seed)
    os.makedirs(args.out, exist_ok=True)
    onnx_paths = cmd_export(args, model)
    cmd_frames(args)
    cmd_build(args, onnx_paths)
    rc = 0
    if not args.skip_compare:
        for prec in precision_list(args):
            _, log = run_demo(args, prec, loops=args.loops)
            with open(os.path.join(args.out, f"demo_{prec}.log"), "w") as f:
                f.write(log)
            print(log)
        rc = cmd_compare(args, model)
    if args.latency_loops > 0:
        for prec in precision_list(args):
            times = os.path.join(args.out, f"demo_{prec}_times.json")
            _, log = run_demo(args, prec, loops=args.latency_loops, save=False,
                              extra=[f"--exportTimes={times}", "--show=0"])
            with open(os.path.join(args.out, f"demo_{prec}_latency.log"), "w") as f:
                f.write(log)
            print(log)
    return rc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "export", "frames", "build", "demo", "compare"])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="reduced")
    ap.add_argument("--out", required=True, help="working folder (onnx/, frames/, plans/, demo_*/)")
    ap.add_argument("--seed", type=int, default=0, help="weights seed")
    ap.add_argument("--data-seed", type=int, default=1, help="frames seed")
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--gaps", default="", help="frame indices preceded by a 3 s pause (cache ignored), e.g. 5")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="plan backend")
    ap.add_argument("--loops", type=int, default=1, help="demo: run the sequence N times (latency)")
    ap.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads")
    ap.add_argument("--torchscript", action="store_true", help="export with the TorchScript exporter")
    ap.add_argument("--build", help="opforge build tree (default $OPFORGE_BUILD_DIR or <repo>/build)")
    ap.add_argument("--latency-loops", type=int, default=0,
                    help="run: afterwards, time the demo over N loops of the sequence (demo_<prec>_times.json)")
    ap.add_argument("--ref-device", help="PyTorch reference device (default: cuda for CUDA plans, else cpu)")
    ap.add_argument("--timing-cache", help="build: opforge timing cache file (CUDA)")
    ap.add_argument("--skip-compare", action="store_true",
                    help="run: no saved demo outputs and no comparison with PyTorch (latency only)")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    fn = {"run": cmd_run, "export": cmd_export, "frames": cmd_frames, "build": cmd_build, "demo": cmd_demo,
          "compare": cmd_compare}[args.command]
    rc = fn(args)
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    sys.exit(main())
