#!/usr/bin/env python3
"""Markdown report of a Sparse4Dv3 GPU run (scripts/gpu-test.sh sparse4d, the CTest groups gpu-bench-sparse4d*):
consistency with PyTorch, latency per module of the opforge plans (sparse4d_demo --exportTimes) and of PyTorch
(bench_torch.py), the ratios from this one run, and the issue's targets.

    python3 examples/sparse4d/report.py --work WORK --torch torch.json --out report.md
"""
import argparse
import datetime
import json
import os
import subprocess

MODULES = [("backbone", "backbone"), ("head_first", "head, first frame"), ("head_later", "head, later frame"),
           ("frame", "frame, end to end")]


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt(x):
    return "n/a" if x is None else f"{x:.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="sparse4d.py run --out folder")
    ap.add_argument("--torch", required=True, help="bench_torch.py --out file")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    ours = {}
    for prec in ("fp32", "fp16"):
        p = os.path.join(args.work, f"demo_{prec}_times.json")
        if os.path.exists(p):
            ours[prec] = load(p)
    peers = load(args.torch) if os.path.exists(args.torch) else {"modes": {}}
    cons_md = os.path.join(args.work, "consistency.md")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    lines = ["# Sparse4Dv3 on opforge: consistency and latency", ""]
    dev = next(iter(ours.values()), {}).get("device", "?")
    lines.append(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}; opforge plans "
                 f"on {dev}; PyTorch {peers.get('torch', '?')} on {peers.get('device', '?')}, config "
                 f"{peers.get('config', '?')}.")
    lines.append("")
    lines.append("## Consistency with PyTorch (10 consecutive frames)")
    lines.append("")
    if os.path.exists(cons_md):
        with open(cons_md) as f:
            lines.append(f.read().strip())
    else:
        lines.append("(no consistency.md: the run did not get that far)")
    lines.append("")
    lines.append("## Latency, ms (median; wall clock of each synchronous step, inputs on the GPU)")
    lines.append("")
    cols = [("opforge FP32", ours.get("fp32"), None), ("opforge FP16", ours.get("fp16"), None)]
    for mode in peers["modes"]:
        cols.append((f"PyTorch {mode}", None, peers["modes"][mode]))
    lines.append("| module | " + " | ".join(c[0] for c in cols) + " |")
    lines.append("|---|" + "---|" * len(cols))

    def value(col, key):
        _, o, p = col
        if o is not None:
            m = o["modules"].get(key)
            return m["median_ms"] if m else None
        if p is not None:
            m = p.get(key)
            return m["median_ms"] if m else None
        return None

    for key, label in MODULES:
        lines.append(f"| {label} | " + " | ".join(fmt(value(c, key)) for c in cols) + " |")
    for key, label in (("upload", "upload of the frame (opforge)"), ("bank", "bank step incl. copies (opforge)")):
        lines.append(f"| {label} | " + " | ".join(fmt(value(c, key)) if c[1] is not None else "" for c in cols) + " |")
    for prec, o in ours.items():
        g = o.get("cuda_graph", {})
        dm = {k: v.get("device_median_ms") for k, v in o["modules"].items() if "device_median_ms" in v}
        lines.append("")
        lines.append(f"opforge {prec}: CUDA graph replay backbone {g.get('backbone')}, first-frame head "
                     f"{g.get('head_first')}, later-frame head {g.get('head_later')}; GPU time (events) per run: " +
                     ", ".join(f"{k} {v:.3f} ms" for k, v in dm.items()) +
                     f"; {o['loops']} loops x {o['frames']} frames")
    # Ratios and targets.
    lines.append("")
    lines.append("## Ratios from this run and the issue's targets")
    lines.append("")
    lines.append("| comparison | precision | PyTorch ms | opforge ms | speed-up | target | met |")
    lines.append("|---|---|---|---|---|---|---|")
    verdicts = []
    for prec in ("fp32", "fp16"):
        o = ours.get(prec)
        if o is None:
            continue
        for key, label in (("head_first", "head, first frame"), ("head_later", "head, later frame")):
            mine = o["modules"].get(key, {}).get("median_ms")
            for mode, target in (("eager", 3.0), ("compile[default]", 1.3)):
                p = peers["modes"].get(f"{mode} {prec}", {}).get(key, {}).get("median_ms")
                if mine is None or p is None:
                    continue
                ratio = p / mine
                ok = ratio >= target
                verdicts.append(ok)
                lines.append(f"| {label} vs {mode} | {prec} | {p:.3f} | {mine:.3f} | {ratio:.2f}x | >= {target}x | "
                             f"{'yes' if ok else 'NO'} |")
        mine = o["modules"].get("backbone", {}).get("median_ms")
        p = peers["modes"].get(f"compile[default] {prec}", {}).get("backbone", {}).get("median_ms")
        if mine is not None and p is not None:
            ok = mine <= 1.10 * p
            verdicts.append(ok)
            lines.append(f"| backbone vs compile[default] | {prec} | {p:.3f} | {mine:.3f} | {p / mine:.2f}x | "
                         f">= 0.91x (within 10 %) | {'yes' if ok else 'NO'} |")
        for mode in ("eager", "compile[default]"):
            mine = o["modules"].get("frame", {}).get("median_ms")
            p = peers["modes"].get(f"{mode} {prec}", {}).get("frame", {}).get("median_ms")
            if mine is not None and p is not None:
                lines.append(f"| frame end to end vs {mode} | {prec} | {p:.3f} | {mine:.3f} | {p / mine:.2f}x | | |")
    lines.append("")
    lines.append(f"targets met: {sum(verdicts)} of {len(verdicts)}")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
