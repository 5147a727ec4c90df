#!/usr/bin/env python3
"""CPU benchmark: opforge vs ONNX Runtime on the four models of the differential tests
(tests/python/models.py) at batch 1 and 8, same thread count, median latency and the ratio.

    python3 bench/cpu/bench.py [--threads=1] [--iterations=50] [--warmup=5] [--build=build]
                               [--markdown=bench/results/cpu_onnxruntime.md]

Both run the same ONNX file (TorchScript export, opset 17, dynamic batch). opforge: one plan
built for batches 1..8, timed by build/bin/opforge-onnx-run (execute() only, inputs already in
the context); its GEMMs use OpenBLAS with OPENBLAS_NUM_THREADS=threads. ONNX Runtime: CPU
execution provider, intra_op_num_threads=threads, inter_op_num_threads=1, sequential execution,
graph optimizations at their default (all), timed around session.run().
"""
import argparse
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", str(ROOT / "build")))
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    os.environ["OPFORGE_BUILD_DIR"] = args.build

    import onnxruntime as ort
    import torch
    import models
    from conftest import build_plan, run_plan

    def load():
        try:
            with open("/proc/loadavg") as f:
                return f.read().split()[0]
        except OSError:
            return "?"

    load_start = load()
    work = pathlib.Path(tempfile.mkdtemp(prefix="opforge-bench-"))
    rows = []
    for name in models.MODELS:
        onnx_path = str(work / f"{name}.onnx")
        plan = str(work / f"{name}.plan")
        names, shapes = models.export(name, onnx_path)
        build_plan(onnx_path, plan, names, shapes, 1, 8, 8)
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        for batch in (1, 8):
            rng = np.random.default_rng(0)
            feeds = {n: rng.standard_normal((batch, *s)).astype(np.float32) for n, s in zip(names, shapes)}
            for _ in range(args.warmup):
                sess.run(None, feeds)
            t = []
            for _ in range(args.iterations):
                t0 = time.perf_counter()
                sess.run(None, feeds)
                t.append((time.perf_counter() - t0) * 1e3)
            ort_ms = statistics.median(t)
            _, of_ms = run_plan(plan, feeds, str(work / f"{name}_b{batch}"), iterations=args.iterations,
                                warmup=args.warmup)
            rows.append((name, batch, of_ms, ort_ms))
            print(f"{name:12s} batch {batch}: opforge {of_ms:8.3f} ms   onnxruntime {ort_ms:8.3f} ms   "
                  f"ratio {of_ms / ort_ms:5.2f}", flush=True)

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    table = ["| model | batch | opforge median (ms) | ONNX Runtime median (ms) | ratio (opforge / ORT) |",
             "|---|---|---|---|---|"]
    for name, batch, a, b in rows:
        table.append(f"| {name} | {batch} | {a:.3f} | {b:.3f} | {a / b:.2f} |")
    header = (f"threads {args.threads}, {args.iterations} timed iterations after {args.warmup} warm-up, "
              f"CPU: {cpu} ({os.cpu_count()} logical cores), load average {load_start} at the start and {load()} at "
              f"the end (other work shared the machine), onnxruntime {ort.__version__}, torch {torch.__version__}")
    print(header)
    print("\n".join(table))
    if args.markdown:
        cmd = "python3 bench/cpu/bench.py " + " ".join(sys.argv[1:])
        new = not os.path.exists(args.markdown)
        text = ("# CPU: opforge vs ONNX Runtime\n\n" if new else "") + (
            f"Command (from the repository root, after `scripts/build.sh`):\n\n"
            f"```sh\n{cmd}\n```\n\n{header}.\n\n" + "\n".join(table) + "\n")
        with open(args.markdown, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
