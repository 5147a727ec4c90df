#!/usr/bin/env python3
"""Runs opforge_gpu_bench and the PyTorch peers (bench/gpu/peers.py) in one go, prints one table
with the ratios against the peers and the targets of ISSUE 5, writes it as Markdown, and draws the
achieved bandwidth of every op and tactic against the copy ceiling beside the peers (PNG).

  python3 bench/gpu/report.py --bench build-gpu/bin/opforge_gpu_bench --out OUTDIR [--quick]
  python3 bench/gpu/report.py --ours ours.json --peers peers.json --out OUTDIR   # no re-run

Outputs in OUTDIR: ours.json, peers.json, table.md, bandwidth.png (when matplotlib is there).
"""
import argparse
import json
import os
import subprocess
import sys

CEILING_TBS = 4.16

# ISSUE 5's targets: (op, config prefix, dtype) -> (kind, value, text)
TARGETS = [
    ("example::circ_pad_plugin", "x 8x64x256x256", "FP32", "tbs", 3.6, ">= 3.6 TB/s (F.pad 1.9)"),
    ("opforge::FusedGelu", "gelu(gelu(x)) 64Mi", "FP32", "ms", 0.15, "<= 0.15 ms (eager 0.268, compile 0.209)"),
    ("example::non_zero_plugin", "x 4096x4096", "FP32", "ms", 0.10, "<= 0.10 ms with read-back (torch 0.188)"),
    ("sample::elemwise_add_plugin_", "64Mi in place", "FP32", "ratio", 0.97, ">= 0.97x add_ speed"),
    ("opforge::DeformableAggregation", "A 900, 70% valid", "FP32", "ms", 0.12, "<= 0.12 ms (original 0.775)"),
]
# Published peers with no runnable implementation here (../shared/reference/gpu-anchors.md).
STATIC_PEERS = [
    dict(source="anchor", op="opforge::DeformableAggregation", config="A 900, 70% valid", dtype="FP32",
         impl="original Sparse4D kernel (anchors)", mode="eager", median_ms=0.775, bytes=102e6,
         note="measured elsewhere on an H200; not run here"),
]


def load(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def tbs(r):
    return r["bytes"] / (r["median_ms"] * 1e-3) / 1e12


def best_peer(peers, r):
    cands = [p for p in peers if p["op"] == r["op"] and p["config"] == r["config"] and p["dtype"] == r["dtype"]
             and p["source"] != "ceiling"]
    return min(cands, key=lambda p: p["median_ms"]) if cands else None


def target_of(r):
    for op, cfg, dt, kind, val, text in TARGETS:
        if r["op"] == op and r["config"].startswith(cfg) and r["dtype"] == dt:
            return kind, val, text
    return None


def verdict(r, peer):
    t = target_of(r)
    if not t:
        return ""
    kind, val, text = t
    if kind == "tbs":
        ok = tbs(r) >= val
    elif kind == "ms":
        ok = r["median_ms"] <= val
    else:
        ok = peer is not None and peer["median_ms"] / r["median_ms"] >= val
    text = ("MEETS " if ok else "MISSES ") + text
    if r["op"] == "opforge::DeformableAggregation" and r["dtype"] == "FP32":
        err = r.get("max_abs_err", -1)
        text += "; max abs err " + ("< 1e-4 OK" if 0 <= err < 1e-4 else "NOT < 1e-4")
    return text


def table(ours, peers):
    lines = ["| op | config | type | implementation | mode | median ms | TB/s | % of 4.16 | vs best peer | max abs err | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in ours + peers:
        k = (r["op"], r["config"], r["dtype"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        group = [r for r in ours if (r["op"], r["config"], r["dtype"]) == k]
        group += [r for r in peers if (r["op"], r["config"], r["dtype"]) == k]
        for r in group:
            peer = best_peer(peers, r) if r["source"] == "opforge" else None
            ratio = f"{peer['median_ms'] / r['median_ms']:.2f}x ({peer['impl']})" if peer else ""
            err = r.get("max_abs_err", -1)
            err_s = "" if err is None or err < 0 else (f"{err:.2e}" if err < 1e299 else "FAILED")
            lines.append(f"| {r['op']} | {r['config']} | {r['dtype']} | {r['impl']} | {r['mode']} | {r['median_ms']:.4f} | "
                         f"{tbs(r):.3f} | {100 * tbs(r) / CEILING_TBS:.1f}% | {ratio} | {err_s} | "
                         f"{verdict(r, peer) if r['source'] == 'opforge' else ''} |")
    return "\n".join(lines)


def plot(ours, peers, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print(f"report.py: no matplotlib ({e}); no plot", file=sys.stderr)
        return False
    groups = [
        ("circ_pad fp32", "example::circ_pad_plugin", "x 8x64x256x256", "FP32"),
        ("GELU(GELU) fp32", "opforge::FusedGelu", "gelu(gelu(x)) 64Mi", "FP32"),
        ("non_zero fp32", "example::non_zero_plugin", "x 4096x4096", "FP32"),
        ("add_ fp32", "sample::elemwise_add_plugin_", "64Mi in place", "FP32"),
        ("deform. agg. fp32\nA 900, 70%", "opforge::DeformableAggregation", "A 900, 70% valid", "FP32"),
        ("deform. agg. fp16\nA 900, 70%", "opforge::DeformableAggregation", "A 900, 70% valid", "FP16"),
    ]
    fig, ax = plt.subplots(figsize=(14, 6))
    xt, xl = [], []
    x = 0.0
    for label, op, cfg, dt in groups:
        bars = [r for r in ours if r["op"] == op and r["config"].startswith(cfg) and r["dtype"] == dt]
        bars += [r for r in peers if r["op"] == op and r["config"].startswith(cfg) and r["dtype"] == dt]
        if not bars:
            continue
        start = x
        for r in bars:
            color = "tab:blue" if r["source"] == "opforge" else \
                ("tab:gray" if r["source"] in ("anchor", "ceiling") else "tab:orange")
            v = tbs(r)
            ax.bar(x, v, width=0.8, color=color)
            name = r["impl"] + ("" if r["mode"] == "eager" else f" [{r['mode']}]")
            ax.text(x, v + 0.05, name, rotation=90, ha="center", va="bottom", fontsize=7)
            x += 1
        xt.append((start + x - 1) / 2)
        xl.append(label)
        x += 1.5
    ax.axhline(CEILING_TBS, color="red", linestyle="--", label=f"copy ceiling {CEILING_TBS} TB/s")
    ax.set_xticks(xt)
    ax.set_xticklabels(xl, fontsize=8)
    ax.set_ylabel("achieved bandwidth, TB/s (floor bytes / median time)")
    ax.set_ylim(0, CEILING_TBS * 1.6)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="tab:blue", label="opforge tactics"), Patch(color="tab:orange", label="PyTorch peers"),
                       Patch(color="tab:gray", label="published (gpu-anchors.md) or copy ceiling at the size"),
                       plt.Line2D([0], [0], color="red", linestyle="--", label=f"copy ceiling {CEILING_TBS} TB/s")],
              loc="upper right", fontsize=8)
    ax.set_title("opforge contrib ops on the GPU: achieved bandwidth vs the copy ceiling and the PyTorch peers")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="path of opforge_gpu_bench (runs it)")
    ap.add_argument("--ours", help="an existing ours.json (no run)")
    ap.add_argument("--peers", help="an existing peers.json (no run)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--only", default="", help="only the ops whose registry key contains this text (both sides)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    ours_path = a.ours or os.path.join(a.out, "ours.json")
    peers_path = a.peers or os.path.join(a.out, "peers.json")
    status = 0
    if not a.ours:
        if not a.bench:
            ap.error("--bench or --ours is required")
        cmd = [a.bench, "--json", ours_path, "--reps", str(a.reps)] + (["--quick"] if a.quick else []) + \
            (["--only", a.only] if a.only else [])
        print("$ " + " ".join(cmd), flush=True)
        status |= subprocess.call(cmd)
    if not a.peers:
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers.py"), "--json", peers_path,
               "--reps", str(a.reps)] + (["--quick"] if a.quick else []) + (["--only", a.only] if a.only else [])
        print("$ " + " ".join(cmd), flush=True)
        status |= subprocess.call(cmd)
    ours = load(ours_path)
    peers = load(peers_path) + [p for p in STATIC_PEERS if a.only in p["op"]]
    md = table(ours, peers)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("# opforge contrib ops on the GPU (one run: opforge_gpu_bench + bench/gpu/peers.py)\n\n")
        f.write(f"Bandwidth = floor bytes (every input read once, every output written once) / median time; "
                f"ceiling = {CEILING_TBS} TB/s (device-to-device copy on the H200). Errors against float64 references.\n\n")
        f.write(md + "\n")
    if plot(ours, peers, os.path.join(a.out, "bandwidth.png")):
        print(f"plot: {os.path.join(a.out, 'bandwidth.png')}")
    print("\n" + md)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
