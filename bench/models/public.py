#!/usr/bin/env python3
"""opforge against the strongest PyTorch peer on public architectures at real sizes (issue 20).

Models (random weights, built from constructors / configs, no hub): torchvision resnet50, vit_b_16,
convnext_tiny, swin_t, efficientnet_b0 (3x224x224), transformers BERT-base (BertConfig() defaults) and
a GPT-2 decoder (GPT2Config() defaults, GPT2Model: hidden states, no KV cache), sequence 128.

Each (model, batch) is exported once with the TorchScript exporter and a static batch (as the issue's
table was measured), then, per precision:

  opforge         `opforge exec --device=DEVICE [--fp16]` builds a plan (min = opt = max), timed by a
                  second process with --loadEngine: the median "GPU Compute Time" of the run (CUDA graph
                  replay where the plan allows it; the CPU's compute time on --device=cpu). The build is
                  timed twice: with an empty timing cache and again with the cache the first build wrote.
  eager           PyTorch, the model on the device (`model.half()` for fp16), CUDA events per forward.
  reduce-overhead torch.compile(mode="reduce-overhead") (CUDA graphs): the fair peer of a plan replayed
                  as one graph.
  max-autotune    torch.compile(mode="max-autotune") while the run is inside --budget-s.

fp32 allows TF32 on both sides (opforge's default, as TensorRT's; PyTorch's cudnn.allow_tf32 and
matmul.allow_tf32), fp32-notf32 on neither (`--noTF32`); fp16 is `model.half()` for PyTorch and `--fp16` on the FP32 export for opforge.
int8 (issue 20, part two) quantizes the export with ONNX Runtime's tools (quant_pre_process, then
quantize_static in the QDQ format: per-channel INT8 weights, UINT8 activations, calibrated on 4 random
batches) and builds the Q/DQ file with `--fp16` for the layers left in float (TensorRT's `--int8 --fp16`);
its PyTorch peers are the fp16 ones (`model.half()`), and its accuracy is written beside it: opforge's
output against ONNX Runtime's CPU run of the same Q/DQ file on the same input (max |diff| / range,
cosine). The floor of each
row is max(FLOPs / tensor-core peak, weight + activation-I/O bytes / copy ceiling), with FLOPs counted by
torch.utils.flop_counter on the eager forward; "% peak" is FLOPs / opforge time / peak. Every ratio comes
from this one run (> 1: opforge is faster). Writes OUT/public_models.md and OUT/public_models.json and
prints the table last.

  python3 bench/models/public.py --bin build-gpu --out OUT [--models resnet50,bert_base] [--batches 1,32]
      [--precisions fp16,fp32] [--budget-s 480] [--skip-max-autotune] [--dump-profile] [--no-cached-build] [--torch-profile]
  python3 bench/models/public.py --device cpu --models resnet50 --batches 1 --precisions fp32 --peers eager
      (the same run on the CPU: checks the plumbing on a machine without a GPU)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# Dense tensor-core peaks of the GH100 chip (H100 SXM and H200 alike; shared/reference/gpu-anchors.md).
PEAK_TFLOPS = {"fp16": 990.0, "fp32": 495.0, "fp32-notf32": 67.0,  # fp32 rows may use TF32 tensor cores
               "int8": 1980.0}  # dense INT8 tensor-core TOPS
# The copy ceiling (TB/s, read + write counted): measured at the start of a CUDA run (the H200's is
# 4.16, an H100's lower); this H200 figure only where nothing was measured (--device=cpu).
COPY_TBPS = 4.16


def measure_copy_tbps():
    """Device-to-device copy rate of 1 GiB through torch's copy_, read + write counted (TB/s)."""
    import torch
    n = 1 << 28  # float32 elements: 1 GiB
    src = torch.empty(n, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        dst.copy_(src)
    end.record()
    end.synchronize()
    tbps = 10 * 2 * n * 4 / (start.elapsed_time(end) * 1e-3) / 1e12
    del src, dst
    torch.cuda.empty_cache()
    return tbps
SEQ = 128
PEERS = ("eager", "reduce-overhead", "max-autotune")


def log(msg):
    print(msg, flush=True)


def run(cmd, timeout=900):
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout, time.time() - t0


def _tuple(module, key=None):
    """The model wrapped to return a tuple of tensors (`key`: the attribute of a transformers output)."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, *args):
            out = self.m(*args)
            if key is not None:
                out = getattr(out, key)
            return out if isinstance(out, tuple) else (out,)

    return Wrapped().eval()


def _vision(ctor):
    def build(batch):
        import torch
        import torchvision
        torch.manual_seed(0)
        m = getattr(torchvision.models, ctor)(weights=None).eval()
        return _tuple(m), {"x": torch.randn(batch, 3, 224, 224)}
    return build


def _bert(batch):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    m = BertModel(BertConfig(), add_pooling_layer=False).eval()
    ids = torch.randint(0, 30522, (batch, SEQ), generator=torch.Generator().manual_seed(1))
    return _tuple(m, "last_hidden_state"), {"input_ids": ids, "attention_mask": torch.ones(batch, SEQ, dtype=torch.int64)}


def _gpt2(batch):
    import torch
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    m = GPT2Model(GPT2Config(use_cache=False)).eval()
    ids = torch.randint(0, 50257, (batch, SEQ), generator=torch.Generator().manual_seed(1))
    return _tuple(m, "last_hidden_state"), {"input_ids": ids}


MODELS = {
    "resnet50": _vision("resnet50"),
    "vit_b_16": _vision("vit_b_16"),
    "convnext_tiny": _vision("convnext_tiny"),
    "swin_t": _vision("swin_t"),
    "efficientnet_b0": _vision("efficientnet_b0"),
    "bert_base": _bert,
    "gpt2": _gpt2,
}


def export(module, inputs, path):
    """TorchScript exporter (the issue's method); where it fails (GPT-2 with transformers 4.5x:
    aten::diff at opset 17), the dynamo exporter at opset 18. Returns the exporter used."""
    import torch
    if os.path.exists(path):
        return "cached"
    tmp = path + ".tmp"
    # Gradients on: under no_grad an eval-mode nn.MultiheadAttention (torchvision's ViT) takes its
    # fast path, aten::_native_multi_head_attention, which the TorchScript exporter cannot write.
    try:
        with torch.enable_grad():
            torch.onnx.export(module, tuple(inputs.values()), tmp, input_names=list(inputs), opset_version=17,
                              dynamo=False, do_constant_folding=True)
        used = "torchscript"
    except Exception as e:
        log(f"{os.path.basename(path)}: TorchScript export failed ({type(e).__name__}: {str(e)[:120]}); dynamo")
        with torch.no_grad():
            torch.onnx.export(module, tuple(inputs.values()), tmp, input_names=list(inputs), opset_version=18,
                              dynamo=True, external_data=False)
        used = "dynamo"
    os.replace(tmp, path)
    return used


def shapes_arg(inputs):
    return ",".join(f"{n}:" + "x".join(str(d) for d in t.shape) for n, t in inputs.items())


def opforge_row(opforge, onnx_path, inputs, prec, device, outdir, tag, iterations, dump_profile,
                cached_build=True, extra_args=()):
    """Builds the plan twice (empty timing cache, then warm; once without `cached_build`) and times it;
    returns a dict of figures."""
    plan = os.path.join(outdir, f"{tag}.plan")
    cache = os.path.join(outdir, f"{tag}.timing")
    if os.path.exists(cache):
        os.remove(cache)
    s = shapes_arg(inputs)
    build = [opforge, "exec", f"--onnx={onnx_path}", f"--device={device}", f"--minShapes={s}", f"--optShapes={s}",
             f"--maxShapes={s}", f"--saveEngine={plan}", "--skipInference"]
    if device == "cuda":
        build.append(f"--timingCacheFile={cache}")
    if prec in ("fp16", "int8"):
        build.append("--fp16")
    elif prec == "fp32-notf32":
        build.append("--noTF32")
    build += list(extra_args)
    if dump_profile:  # the build log then lists every tactic's time per layer
        build.append("--verbose")
    res = {}
    for which in ("build_s", "build_cached_s") if device == "cuda" and cached_build else ("build_s",):
        rc, out, secs = run(build)
        with open(os.path.join(outdir, f"{tag}.{which}.log"), "w") as f:
            f.write(" ".join(build) + "\n" + out)
        if rc != 0:
            raise RuntimeError(f"building {tag} failed ({rc}): {out.strip().splitlines()[-1] if out.strip() else ''}")
        res[which] = secs
    timing = [opforge, "exec", f"--loadEngine={plan}", f"--device={device}", f"--shapes={s}",
              f"--iterations={iterations}", "--warmUp=300", "--duration=2"]
    if dump_profile:
        timing.append("--dumpProfile")
    rc, out, _ = run(timing)
    with open(os.path.join(outdir, f"{tag}.time.log"), "w") as f:
        f.write(" ".join(timing) + "\n" + out)
    if rc != 0:
        raise RuntimeError(f"timing {tag} failed ({rc}): {out.strip().splitlines()[-1] if out.strip() else ''}")
    m = re.search(r"(?:GPU|CPU) Compute Time: .*?median = ([0-9.]+) ms", out) or \
        re.search(r"Latency: .*?median = ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError(f"no compute time in the output of {' '.join(timing)}")
    res["ms"] = float(m.group(1))
    res["plan"] = plan
    if dump_profile:  # which tactic and combination each layer took, beside the profile
        rc, out, _ = run([opforge, "inspect", plan])
        with open(os.path.join(outdir, f"{tag}.inspect.log"), "w") as f:
            f.write(out)
    return res


def quantize_qdq(onnx_path, inputs, outdir, tag):
    """The export quantized by ONNX Runtime's tools (QDQ, per-channel INT8 weights); its path."""
    import numpy as np
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    q = os.path.join(outdir, f"{tag}_qdq.onnx")
    if os.path.exists(q):
        return q
    pre = os.path.join(outdir, f"{tag}_pre.onnx")
    quant_pre_process(onnx_path, pre, skip_symbolic_shape=True)
    rng = np.random.default_rng(0)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = []
            for _ in range(4):
                self.feeds.append({n: (rng.standard_normal(tuple(t.shape)).astype(np.float32) if t.is_floating_point()
                                       else t.numpy()) for n, t in inputs.items()})

        def get_next(self):
            return self.feeds.pop() if self.feeds else None

    quantize_static(pre, q + ".tmp", Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    os.replace(q + ".tmp", q)
    return q


def int8_accuracy(opforge, plan, q_path, inputs, device, outdir, tag):
    """opforge's plan of the Q/DQ file against ONNX Runtime's CPU run of it, on one random input."""
    import numpy as np
    import onnxruntime as ort
    rng = np.random.default_rng(1)
    feeds, loads = {}, []
    for n, t in inputs.items():
        a = rng.standard_normal(tuple(t.shape)).astype(np.float32) if t.is_floating_point() else t.numpy()
        feeds[n] = a
        path = os.path.join(outdir, f"{tag}_in_{n}.npy")
        np.save(path, a)
        loads.append(f"{n}:{path}")
    outd = os.path.join(outdir, f"{tag}_out")
    os.makedirs(outd, exist_ok=True)
    rc, out, _ = run([opforge, "exec", f"--loadEngine={plan}", f"--device={device}", f"--shapes={shapes_arg(inputs)}",
                      f"--loadInputs={','.join(loads)}", f"--saveOutputs={outd}", "--iterations=1", "--warmUp=0",
                      "--duration=0"])
    if rc != 0:
        raise RuntimeError(f"running {tag} on its input failed: {out.strip().splitlines()[-1] if out.strip() else ''}")
    s = ort.InferenceSession(q_path, providers=["CPUExecutionProvider"])
    worst, cos = 0.0, 1.0
    for o, want in zip(s.get_outputs(), s.run(None, feeds)):
        got = np.load(os.path.join(outd, re.sub(r"[^A-Za-z0-9_.-]", "_", o.name) + ".npy")).astype(np.float64)
        want = want.astype(np.float64)
        worst = max(worst, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)))
        cos = min(cos, float((got * want).sum() / max(np.linalg.norm(got) * np.linalg.norm(want), 1e-30)))
    return worst, cos


def median_ms(fn, device, iterations, warmup=20):
    import torch
    for _ in range(warmup):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
        st = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
        en = [torch.cuda.Event(enable_timing=True) for _ in range(iterations)]
        for i in range(iterations):
            st[i].record()
            fn()
            en[i].record()
        torch.cuda.synchronize()
        t = sorted(a.elapsed_time(b) for a, b in zip(st, en))
    else:
        t = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e3)
        t.sort()
    return t[len(t) // 2]


def torch_kernel_profile(fm, x, path, iterations=20):
    """The PyTorch peer's GPU kernels by total time over `iterations` forwards (torch.profiler), written
    to `path`: what opforge's per-layer profile is compared with, kernel by kernel."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        for _ in range(3):
            fm(*x.values())
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iterations):
                fm(*x.values())
            torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if us > 0:
            rows.append((us / iterations, e.count // iterations, e.key))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    with open(path, "w") as f:
        f.write(f"GPU time per forward {total / 1e3:.4f} ms ({iterations} forwards, torch.profiler)\n")
        f.write(f"{'ms/forward':>11} {'%':>6} {'calls':>6}  kernel\n")
        for us, n, k in rows:
            f.write(f"{us / 1e3:11.4f} {100 * us / total:6.1f} {n:6d}  {k[:160]}\n")


def flops_and_bytes(module, inputs):
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        out = module(*inputs.values())
    weights = sum(p.numel() * p.element_size() for p in module.parameters())
    io = sum(t.numel() * t.element_size() for t in inputs.values()) + sum(o.numel() * o.element_size() for o in out)
    return fc.get_total_flops(), weights, io


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("OPFORGE_BINARY_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default="1,32,128")
    ap.add_argument("--precisions", default="fp16,fp32")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--budget-s", type=float, default=480, help="no new max-autotune compile after this many seconds")
    ap.add_argument("--skip-max-autotune", action="store_true")
    ap.add_argument("--dump-profile", action="store_true",
                    help="keep each plan's --dumpProfile and `opforge inspect` in OUT/public/")
    ap.add_argument("--no-cached-build", action="store_true",
                    help="build each plan once (no second build with the warm timing cache)")
    ap.add_argument("--opforge-args", default="",
                    help="extra flags for each plan's build, space-separated (--disablePasses=se_fusion)")
    ap.add_argument("--torch-profile", action="store_true",
                    help="write the kernels of torch.compile's default mode (reduce-overhead's kernels, no "
                         "CUDA graph) by GPU time to OUT/public/TAG.torch_profile.log")
    args = ap.parse_args()
    t_start = time.time()
    import torch
    unknown = [m for m in args.models.split(",") if m not in MODELS]
    if unknown:
        sys.exit(f"public.py: unknown model {unknown[0]!r}; known: {', '.join(MODELS)}")
    peers = [p for p in args.peers.split(",") if p]
    if args.skip_max_autotune and "max-autotune" in peers:
        peers.remove("max-autotune")
    opforge = os.path.join(args.bin, "bin", "opforge")
    outdir = os.path.join(args.out, "public")
    os.makedirs(outdir, exist_ok=True)
    dev = torch.device(args.device)
    if args.device == "cuda":
        torch.backends.cudnn.benchmark = True
        global COPY_TBPS
        COPY_TBPS = round(measure_copy_tbps(), 2)
        log(f"GPU: {torch.cuda.get_device_name(0)}, copy ceiling {COPY_TBPS} TB/s (measured), torch {torch.__version__}, CUDA {torch.version.cuda}; "
            f"cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}, matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}")
    rows, notes = [], []
    for name in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            module, inputs = MODELS[name](batch)
            onnx_path = os.path.join(outdir, f"{name}_b{batch}.onnx")
            try:
                exporter = export(module, inputs, onnx_path)
                if exporter == "dynamo":
                    notes.append(f"{name} b{batch}: exported by the dynamo exporter (TorchScript's failed)")
            except Exception as e:  # the export's own failure is a row of its own
                notes.append(f"{name} b{batch}: export failed: {type(e).__name__}: {str(e)[:200]}")
                continue
            for prec in args.precisions.split(","):
                tag = f"{name}_b{batch}_{prec}"
                row = {"model": name, "batch": batch, "precision": prec}
                m = module.to(dev)
                if args.device == "cuda":  # fp32: TF32 for convolutions and matmuls on both sides
                    torch.backends.cudnn.allow_tf32 = prec != "fp32-notf32"
                    torch.backends.cuda.matmul.allow_tf32 = prec != "fp32-notf32"
                half = prec in ("fp16", "int8")  # int8's PyTorch peers run in FP16
                if half:
                    m = m.half()
                x = {k: (v.to(dev).half() if v.is_floating_point() and half else v.to(dev))
                     for k, v in inputs.items()}
                row["flops"], row["weight_bytes"], row["io_bytes"] = flops_and_bytes(m, x)
                try:
                    model_path = quantize_qdq(onnx_path, inputs, outdir, f"{name}_b{batch}") \
                        if prec == "int8" else onnx_path
                    row["opforge"] = opforge_row(opforge, model_path, inputs, prec, args.device, outdir, tag,
                                                 args.iterations, args.dump_profile,
                                                 not args.no_cached_build, args.opforge_args.split())
                    log(f"{tag}: opforge {row['opforge']['ms']:.4f} ms (build {row['opforge']['build_s']:.1f} s)")
                    if prec == "int8":
                        row["int8_err"], row["int8_cos"] = int8_accuracy(
                            opforge, row["opforge"]["plan"], model_path, inputs, args.device, outdir, tag)
                        log(f"{tag}: against ONNX Runtime max |diff| / range {row['int8_err']:.3g}, "
                            f"cosine {row['int8_cos']:.6f}")
                except Exception as e:
                    notes.append(f"{tag} opforge: {str(e)[:300]}")
                    log(f"{tag}: opforge error: {e}")
                for peer in peers:
                    if peer == "max-autotune" and time.time() - t_start > args.budget_s:
                        notes.append(f"{tag} max-autotune: not compiled (past the {args.budget_s:.0f} s budget)")
                        continue
                    try:
                        if peer == "eager":
                            fm = m
                        else:
                            torch._dynamo.reset()
                            fm = torch.compile(m, mode=peer, dynamic=False)
                        t0 = time.time()
                        with torch.no_grad():
                            fm(*x.values())
                            row[peer] = median_ms(lambda: fm(*x.values()), args.device, args.iterations)
                        log(f"{tag}: {peer} {row[peer]:.4f} ms (first call + timing {time.time() - t0:.0f} s)")
                    except Exception as e:
                        notes.append(f"{tag} {peer}: {type(e).__name__}: {str(e)[:200]}")
                if args.torch_profile and args.device == "cuda":
                    try:
                        torch._dynamo.reset()
                        torch_kernel_profile(torch.compile(m, mode="default", dynamic=False), x,
                                             os.path.join(outdir, f"{tag}.torch_profile.log"))
                        log(f"{tag}: torch.compile kernel profile written")
                    except Exception as e:
                        notes.append(f"{tag} torch profile: {type(e).__name__}: {str(e)[:200]}")
                rows.append(row)
                module = module.float()
    with open(os.path.join(args.out, "public_models.json"), "w") as f:
        json.dump({"rows": rows, "notes": notes, "torch": torch.__version__, "device": args.device}, f, indent=1)

    def f4(v):
        return f"{v:.4f}" if v is not None else "—"

    md = ["| model | batch | prec | opforge ms | eager ms | reduce-overhead ms | max-autotune ms | vs strongest peer | "
          "GFLOP | floor ms | % peak | build s (cold / cached) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        o = r.get("opforge", {}).get("ms")
        best = min((r[p] for p in PEERS if r.get(p)), default=None)
        peak = PEAK_TFLOPS[r["precision"]] * 1e12
        floor = max(r["flops"] / peak, (r["weight_bytes"] + r["io_bytes"]) / (COPY_TBPS * 1e12)) * 1e3
        frac = f"{100 * r['flops'] / (o * 1e-3) / peak:.1f}" if o else "—"
        ob = r.get("opforge", {})
        build = f"{ob['build_s']:.1f} / {ob['build_cached_s']:.1f}" if "build_cached_s" in ob else \
            (f"{ob['build_s']:.1f}" if "build_s" in ob else "—")
        if "int8_err" in r:
            notes.append(f"{r['model']} b{r['batch']} int8: opforge against ONNX Runtime on the Q/DQ file: "
                         f"max |diff| / range {r['int8_err']:.3g}, cosine {r['int8_cos']:.6f}")
        md.append(f"| {r['model']} | {r['batch']} | {r['precision']} | {f4(o)} | {f4(r.get('eager'))} | "
                  f"{f4(r.get('reduce-overhead'))} | {f4(r.get('max-autotune'))} | "
                  f"{f'{best / o:.2f}x' if o and best else '—'} | {r['flops'] / 1e9:.1f} | {floor:.4f} | {frac} | {build} |")
    text = "\n".join(md)
    dev_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    text += (f"\n\nDevice {args.device} ({dev_name}), torch {torch.__version__}. Median latency of one forward (opforge: the plan's "
             "compute time; PyTorch: CUDA events). 'vs strongest peer' = the fastest PyTorch time of the row / "
             "opforge's (> 1: opforge faster). fp16: `model.half()` for PyTorch, `--fp16` on the FP32 export for "
             "opforge. fp32: TF32 allowed on both sides (opforge's default, as TensorRT's; PyTorch with "
             "cudnn.allow_tf32 and matmul.allow_tf32); fp32-notf32: neither (`--noTF32`). Floor: max(FLOPs / peak, bytes / "
             f"{COPY_TBPS} TB/s{' (measured in this run)' if args.device == 'cuda' else ''}) with peaks {PEAK_TFLOPS} TFLOP/s.\n")
    if notes:
        text += "\nNotes:\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    with open(os.path.join(args.out, "public_models.md"), "w") as f:
        f.write(text)
    log(f"\n(total {time.time() - t_start:.0f} s)\n")
    print(text)


if __name__ == "__main__":
    main()
