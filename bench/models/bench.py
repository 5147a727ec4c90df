#!/usr/bin/env python3
"""opforge vs PyTorch on the GPU: the ResNet-style CNN and the transformer encoder layer of
tests/python/models.py, exported to ONNX with a dynamic batch, at batch 1 and 32, FP32 and FP16.

  opforge        CUDA plans built by `opforge exec --device=cuda [--fp16]` (one plan per batch size:
                 min = opt = max), timed by `opforge exec --loadEngine`: the median GPU compute time
                 of a run (CUDA graph replay; input/output copies excluded).
  eager          PyTorch, inputs on the GPU, CUDA events around each forward.
  compile        torch.compile (mode default), the same timing.
  max-autotune   torch.compile(mode="max-autotune") (Triton autotuning and CUDA graphs).
FP32 runs with TF32 disabled in PyTorch (opforge's FP32 kernels are strict FP32); FP16 is
torch.autocast(float16) for PyTorch and --fp16 for opforge (FP32 graph, layers lowered to FP16,
casts at the boundaries). Medians of --iterations runs after warm-up; every ratio comes from this
one run. Writes the markdown table to OUT/bench_models.md and prints it last.

  python3 bench/models/bench.py --bin BUILD_DIR --out OUT [--budget-s 420] [--skip-max-autotune]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "python"))

SHAPES = {"resnet": (3, 64, 64), "transformer": (32, 128)}
BATCHES = (1, 32)
PRECISIONS = ("fp32", "fp16")


def log(msg):
    print(msg, flush=True)


def run(cmd, timeout=600):
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout, time.time() - t0


def shape_arg(name, batch):
    return "x:" + "x".join(str(d) for d in (batch,) + SHAPES[name])


def export_fp16(name, path):
    """The model converted to FP16 (weights and activations), exported on the GPU with a dynamic
    batch (traced on the CPU): a strongly typed FP16 graph (no casts at the layer boundaries)."""
    import torch
    import models
    m, names, shapes = models._spec(name)
    m = m.half().eval()
    example = tuple(torch.randn(2, *s, dtype=torch.float16) for s in shapes)
    axes = {n: {0: "batch"} for n in names}
    axes["y"] = {0: "batch"}
    torch.onnx.export(m, example, path, input_names=names, output_names=["y"], opset_version=17, dynamo=False,
                      dynamic_axes=axes, do_constant_folding=False)


def build_plan(opforge, onnx_path, plan, name, batch, fp16, logdir):
    cmd = [opforge, "exec", f"--onnx={onnx_path}", "--device=cuda", f"--minShapes={shape_arg(name, batch)}",
           f"--optShapes={shape_arg(name, batch)}", f"--maxShapes={shape_arg(name, batch)}", f"--saveEngine={plan}",
           "--skipInference"]
    if fp16:
        cmd.append("--fp16")
    rc, out, secs = run(cmd)
    with open(os.path.join(logdir, os.path.basename(plan) + ".build.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out)
    if rc != 0:
        raise RuntimeError(f"building {plan} failed ({rc}):\n{out[-3000:]}")
    return secs


def time_plan(opforge, plan, name, batch, iterations, logdir):
    cmd = [opforge, "exec", f"--loadEngine={plan}", f"--shapes={shape_arg(name, batch)}", f"--iterations={iterations}",
           "--warmUp=300", "--duration=1"]
    rc, out, _ = run(cmd)
    with open(os.path.join(logdir, os.path.basename(plan) + ".time.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out)
    if rc != 0:
        raise RuntimeError(f"timing {plan} failed ({rc}):\n{out[-3000:]}")
    m = re.search(r"GPU Compute Time: .*?median = ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError(f"no 'GPU Compute Time' in the output of {' '.join(cmd)}")
    graph = "CUDA graph" in out or "graph" in out.lower()
    return float(m.group(1)), graph


def torch_median(fn, x, iterations, warmup):
    import torch
    for _ in range(warmup):
        fn(x)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
    for i in range(iterations):
        starts[i].record()
        fn(x)
        ends[i].record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return t[len(t) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("OPFORGE_BINARY_DIR", os.path.join(HERE, "..", "..", "build")))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--budget-s", type=float, default=420, help="skip max-autotune compiles once the run takes longer")
    ap.add_argument("--skip-max-autotune", action="store_true")
    ap.add_argument("--models", default="resnet,transformer")
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="subset of " + ",".join(PRECISIONS))
    ap.add_argument("--batches", default=",".join(str(b) for b in BATCHES), help="subset of the batch sizes")
    args = ap.parse_args()
    t_start = time.time()
    import torch
    import models

    opforge = os.path.join(args.bin, "bin", "opforge")
    outdir = os.path.join(args.out, "bench_models")
    os.makedirs(outdir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    log(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")

    rows = []  # (model, batch, precision, {impl: ms})
    notes = []
    for name in args.models.split(","):
        onnx_path = os.path.join(outdir, f"{name}.onnx")
        models.export(name, onnx_path)
        m, _, _ = models._spec(name)
        m = m.to(dev).eval()
        for prec in args.precisions.split(","):
            fp16 = prec == "fp16"
            for batch in (int(b) for b in args.batches.split(",")):
                res = {}
                plan = os.path.join(outdir, f"{name}_{prec}_b{batch}.plan")
                try:
                    secs = build_plan(opforge, onnx_path, plan, name, batch, fp16, outdir)
                    res["opforge"], _ = time_plan(opforge, plan, name, batch, args.iterations, outdir)
                    log(f"{name} {prec} batch {batch}: opforge {res['opforge']:.4f} ms (plan built in {secs:.1f} s)")
                except Exception as e:  # a failure is reported in the table, the rest still runs
                    notes.append(f"{name} {prec} b{batch} opforge: {e}")
                    log(f"error: {e}")
                x = torch.randn(batch, *SHAPES[name], device=dev)

                def eager(inp, mod=m):
                    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
                        return mod(inp)

                res["eager"] = torch_median(eager, x, args.iterations, 20)
                for mode, key in (("default", "compile"), ("max-autotune", "max-autotune")):
                    if key == "max-autotune" and (args.skip_max_autotune or time.time() - t_start > args.budget_s):
                        notes.append(f"{name} {prec} b{batch}: max-autotune skipped (time budget {args.budget_s:.0f} s)")
                        continue
                    try:
                        torch._dynamo.reset()
                        t0 = time.time()
                        cm = torch.compile(m, mode=None if mode == "default" else mode, dynamic=False)

                        def comp(inp, mod=cm):
                            with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
                                return mod(inp)

                        comp(x)
                        torch.cuda.synchronize()
                        res[key] = torch_median(comp, x, args.iterations, 20)
                        log(f"{name} {prec} batch {batch}: {key} {res[key]:.4f} ms (compiled in {time.time() - t0:.0f} s)")
                    except Exception as e:
                        notes.append(f"{name} {prec} b{batch} {key}: {type(e).__name__}: {str(e)[:200]}")
                if fp16:  # also the FP16-exported graph (strong typing, no boundary casts)
                    try:
                        half_onnx = os.path.join(outdir, f"{name}_fp16.onnx")
                        if not os.path.exists(half_onnx):
                            export_fp16(name, half_onnx)
                        hplan = os.path.join(outdir, f"{name}_fp16onnx_b{batch}.plan")
                        build_plan(opforge, half_onnx, hplan, name, batch, False, outdir)
                        res["opforge-fp16-onnx"], _ = time_plan(opforge, hplan, name, batch, args.iterations, outdir)
                    except Exception as e:
                        notes.append(f"{name} fp16 b{batch} opforge (FP16 ONNX): {str(e)[:300]}")
                rows.append((name, batch, prec, res))
                log(f"{name} {prec} batch {batch}: " + ", ".join(f"{k} {v:.4f} ms" for k, v in res.items()))

    # Launch overhead per layer with and without CUDA graphs (bench/engine).
    overhead = ""
    lo = os.path.join(args.bin, "bin", "bench_launch_overhead")
    if os.path.exists(lo):
        rc, out, _ = run([lo, f"--plugins={os.path.join(args.bin, 'lib', 'libopforge_ops.so')}"])
        overhead = out.strip().splitlines()[-12:] if out else []
        overhead = "\n".join(overhead)
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"rows": [{"model": r[0], "batch": r[1], "precision": r[2], "ms": r[3]} for r in rows], "notes": notes}, f,
                  indent=1)

    def fmt(v):
        return f"{v:.4f}" if v is not None else "—"

    md = ["| model | batch | precision | opforge ms | opforge FP16-ONNX ms | eager ms | compile ms | max-autotune ms | "
          "compile / opforge | max-autotune / opforge | eager / opforge |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, batch, prec, r in rows:
        o = r.get("opforge")

        def ratio(k):
            return f"{r[k] / o:.2f}x" if o and r.get(k) else "—"

        md.append(f"| {name} | {batch} | {prec} | {fmt(o)} | {fmt(r.get('opforge-fp16-onnx'))} | {fmt(r.get('eager'))} | "
                  f"{fmt(r.get('compile'))} | "
                  f"{fmt(r.get('max-autotune'))} | {ratio('compile')} | {ratio('max-autotune')} | {ratio('eager')} |")
    text = "\n".join(md)
    text += ("\n\nopforge ms: the FP32 export (FP16 rows: built with --fp16, casts inserted at the boundaries); "
             "opforge FP16-ONNX: the model exported in FP16 (strongly typed). Ratios > 1: opforge (first column) is faster. Median latency of one forward (GPU time: CUDA events for PyTorch, "
             "the plan's GPU compute time for opforge). Target: opforge >= torch.compile at batch 1, within 10 % at "
             "batch 32.\n")
    if notes:
        text += "\nNotes:\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    if overhead:
        text += "\nLaunch overhead per layer (bench_launch_overhead):\n```\n" + overhead + "\n```\n"
    with open(os.path.join(args.out, "bench_models.md"), "w") as f:
        f.write(text)
    log(f"\n(total {time.time() - t_start:.0f} s)\n")
    print(text)


if __name__ == "__main__":
    main()
