#!/usr/bin/env python3
"""Runs the model zoo (tests/zoo/models.py) through opforge on the CPU, as a user would:

  1. export each model with each exporter (TorchScript: torch.onnx.export(dynamo=False,
     dynamic_axes=...); dynamo: torch.onnx.export(dynamo=True, dynamic_shapes=...)) once, into a
     cache folder keyed by the torch version (with the example inputs and PyTorch eager's outputs);
     a failing export is recorded as "export failed" with PyTorch's message;
  2. build and run the ONNX file with `opforge exec --onnx=... --device=cpu --minShapes/--optShapes/
     --maxShapes (dynamic batch, and sequence length for language models) --loadInputs --saveOutputs`;
  3. compare opforge's outputs with PyTorch eager (max abs error, max relative error, cosine;
     |opforge - eager| <= atol + rtol * |eager| with the model's FP32 tolerance);
  4. time opforge (`opforge exec`'s median latency) against ONNX Runtime (CPU execution provider)
     on the same file, both on one thread (OPENBLAS_NUM_THREADS=1, intra_op_num_threads=1).

Status of a case: pass / WRONG (opforge's result differs from PyTorch while ONNX Runtime matches) /
export mismatch (ONNX Runtime differs from PyTorch too: the exported file is not the model) /
build error (message) / run error (message) / timeout / export failed (message).

    python3 tests/zoo/run_zoo.py                       # every model, both exporters, timed
    python3 tests/zoo/run_zoo.py --models bert,gpt2 --exporters dynamo
    python3 tests/zoo/run_zoo.py --ci                  # the CI subset
    python3 tests/zoo/run_zoo.py --list

Results: a JSON (--json, default tests/zoo/results.json; entries of earlier runs are kept unless
--fresh) and the table docs/model-zoo.md (--markdown; generated from the whole JSON).
Environment: OPFORGE_BUILD_DIR (default <repo>/build), OPFORGE_ZOO_CACHE (default
<build>/zoo-cache).
"""
import argparse
import collections
import concurrent.futures
import datetime
import fnmatch
import hashlib
import inspect
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import time
import traceback
import warnings

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

EXPORTERS = ("torchscript", "dynamo")
BUILD_TIMEOUT_S = int(os.environ.get("OPFORGE_ZOO_TIMEOUT", "600"))


def device():
    """The backend the plans are built for: OPFORGE_ZOO_DEVICE=cpu (default) or cuda (--device)."""
    return os.environ.get("OPFORGE_ZOO_DEVICE", "cpu")


def fp16():
    """OPFORGE_ZOO_FP16=1 (--fp16): plans built with `--fp16` (FP16 tactics allowed, FP32 I/O)."""
    return os.environ.get("OPFORGE_ZOO_FP16", "0") == "1"


def tf32():
    """OPFORGE_ZOO_TF32=1: FP32 plans as `opforge exec` builds them by default, FP32 convolutions and
    GEMMs allowed on TF32 tensor cores, held to the FP16 criteria (TF32 rounds each product's inputs
    to FP16's 10-bit mantissa). Otherwise FP32 plans are built with --noTF32 and held to the FP32
    criteria."""
    return os.environ.get("OPFORGE_ZOO_TF32", "0") == "1"


def reduced():
    """Whether this run's arithmetic has a 10-bit mantissa somewhere (--fp16, or TF32)."""
    return fp16() or tf32()


# With --fp16 the per-model FP32 tolerance does not apply: FP16 arithmetic (10-bit mantissa) over a
# network drifts by about 1e-3 relative. A case passes when every output keeps cosine >= 0.999
# against PyTorch's FP32 eager result and |opforge - eager| <= FP16_REL * max|eager| elementwise
# (5 % of the output's scale); the FP32 criteria stay as they are.
FP16_MIN_COSINE = 0.999
FP16_REL = 0.05


# ------------------------------------------------------------------------------------- paths
def build_dir():
    return pathlib.Path(os.environ.get("OPFORGE_BUILD_DIR") or os.environ.get("BUILD_DIR") or ROOT / "build")


def opforge_bin():
    return build_dir() / "bin" / "opforge"


def cache_root(cache=None):
    import torch
    base = pathlib.Path(cache or os.environ.get("OPFORGE_ZOO_CACHE") or build_dir() / "zoo-cache")
    return base / f"torch-{torch.__version__}"


def _versions():
    import torch
    v = {"torch": torch.__version__}
    for mod in ("torchvision", "timm", "transformers", "onnx", "onnxscript"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            v[mod] = None
    return v


def _source_closure(fn, module):
    """Source of fn and of every function or class of `module` that it uses, transitively."""
    seen, todo, parts = set(), [fn], []
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        try:
            src = inspect.getsource(f)
        except (OSError, TypeError):
            continue
        # Without the decorator: the entry's note, tolerance or CI flag do not change the export.
        parts.append(src[src.find("\ndef ") + 1:] if src.startswith("@") and "\ndef " in src else src)
        codes = [f.__code__] if hasattr(f, "__code__") else \
            [v.__code__ for v in vars(f).values() if hasattr(v, "__code__")]
        while codes:
            c = codes.pop()
            codes += [k for k in c.co_consts if inspect.iscode(k)]
            for n in c.co_names:
                v = getattr(module, n, None)
                if (inspect.isfunction(v) or inspect.isclass(v)) and getattr(v, "__module__", None) == module.__name__:
                    todo.append(v)
    return "\n".join(sorted(parts))


def entry_key(e):
    """Changes when the entry's constructor (and the helpers of models.py it calls), its dims or the
    versions of the libraries that build it change."""
    import models
    h = hashlib.sha256()
    h.update(_source_closure(e.build, models).encode())
    h.update(repr((e.dims, e.ranges)).encode())
    h.update(repr(sorted(_versions().items())).encode())
    return h.hexdigest()[:16]


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(text):
    for line in ANSI.sub("", str(text)).splitlines():
        line = line.strip()
        if line:
            return line
    return ANSI.sub("", str(text)).strip()


def _export_message(ex):
    """First line of PyTorch's message; where it is the dynamo exporter's generic wrapper ("Failed
    to export the model with torch.export. This is step 1/3 ..."), the first line of its cause."""
    msg = f"{type(ex).__name__}: {first_line(ex)}"
    cause = ex.__cause__ or ex.__context__
    if cause is not None and first_line(cause) and first_line(cause) not in msg:
        if ". This is step" in msg:
            msg = f"{msg.split('. This is step')[0]}: {type(cause).__name__}: {first_line(cause)}"
        else:
            msg += f" -- caused by {type(cause).__name__}: {first_line(cause)}"
    return msg[:600]


# ------------------------------------------------------------------------------------- export
def _flatten(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res += _flatten(o)
    return res


def _onnx_io(path):
    import onnx
    m = onnx.load(str(path), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in i.type.tensor_type.shape.dim]
        ins.append({"name": i.name, "dims": dims})
    opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=None)
    return ins, [o.name for o in m.graph.output], opset, len(m.graph.node)


def export_case(e, exporter, cache=None, refresh=False, log=print):
    """Exports entry e with the exporter into the cache (once); returns the case's meta dict."""
    d = cache_root(cache) / f"{e.name}__{exporter}"
    meta_path = d / "meta.json"
    key = entry_key(e)
    if meta_path.exists() and not refresh:
        meta = json.loads(meta_path.read_text())
        if meta.get("key") == key and (meta["status"] != "ok" or (d / "model.onnx").exists()):
            meta["cached"] = True
            return meta
    import torch
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        f.unlink()
    torch.set_num_threads(1)
    model, inputs = e.build()
    names = list(inputs)
    args = tuple(inputs.values())
    with torch.no_grad():
        expected = _flatten(model(*args))
    out_names = [f"out{i}" for i in range(len(expected))]
    for n, t in inputs.items():
        np.save(d / f"in_{n}.npy", t.numpy())
    for i, t in enumerate(expected):
        np.save(d / f"want_{i}.npy", t.detach().numpy())
    meta = {"model": e.name, "exporter": exporter, "key": key, "versions": _versions(), "inputs": names,
            "outputs": out_names}
    onnx_path = d / "model.onnx"
    tmp_path = d / "model.tmp.onnx"
    t0 = time.time()
    try:
        # Not under torch.no_grad(): users export a model as it is (under no_grad, eval-mode
        # nn.MultiheadAttention takes its fused fast path, which the TorchScript exporter rejects).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "torchscript":
                torch.onnx.export(model, args, str(tmp_path), dynamo=False, input_names=names,
                                  output_names=out_names, dynamic_axes={n: dict(ax) for n, ax in e.dims.items()} or None)
            else:
                dims = {}
                for dn, (lo, hi) in e.ranges.items():
                    dims[dn] = torch.export.Dim(dn, min=lo, max=hi)
                shapes = {n: {a: dims[dn] for a, dn in e.dims.get(n, {}).items()} or None for n in names}
                prog = torch.onnx.export(model, args, dynamo=True, input_names=names, output_names=out_names,
                                         dynamic_shapes=shapes if e.dims else None)
                prog.save(str(tmp_path), external_data=False)
        tmp_path.rename(onnx_path)
        meta["status"] = "ok"
        ins, outs, opset, nodes = _onnx_io(onnx_path)
        meta.update(onnx_inputs=ins, onnx_outputs=outs, opset=opset, nodes=nodes)
        if len(outs) != len(expected):
            meta["status"] = "export failed"
            meta["message"] = (f"the ONNX file has {len(outs)} outputs, the model {len(expected)}")
    except Exception as ex:  # noqa: BLE001  (any exporter failure is recorded, with its message)
        meta["status"] = "export failed"
        meta["message"] = _export_message(ex)
        meta["traceback"] = traceback.format_exc()[-4000:]
    meta["export_s"] = round(time.time() - t0, 2)
    meta_path.write_text(json.dumps(meta, indent=1))
    meta["cached"] = False
    log(f"  exported {e.name} [{exporter}]: {meta['status']} in {meta['export_s']} s")
    return meta


# ------------------------------------------------------------------------------------- opforge
def _dims(shape):
    return "x".join(str(int(x)) for x in shape)


def profile_flags(e, meta, inputs):
    """--minShapes/--optShapes/--maxShapes for the inputs whose dims the ONNX file leaves symbolic:
    batch and sequence ranges from the entry, the example size as opt."""
    symbolic = False
    mins, opts, maxs = [], [], []
    onnx_in = {i["name"]: i["dims"] for i in meta["onnx_inputs"]}
    for n, arr in inputs.items():
        lo, hi = list(arr.shape), list(arr.shape)
        for axis, d in enumerate(onnx_in.get(n, [])):
            if isinstance(d, str):
                symbolic = True
                dn = e.dims.get(n, {}).get(axis)
                if dn in e.ranges:
                    lo[axis], hi[axis] = e.ranges[dn]
        mins.append(f"{n}:{_dims(lo)}")
        opts.append(f"{n}:{_dims(arr.shape)}")
        maxs.append(f"{n}:{_dims(hi)}")
    if not symbolic:
        return []
    return ["--minShapes=" + ",".join(mins), "--optShapes=" + ",".join(opts), "--maxShapes=" + ",".join(maxs)]


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def opforge_command(e, meta, case_dir, out_dir, iterations=1):
    inputs = {n: np.load(case_dir / f"in_{n}.npy") for n in meta["inputs"]}
    onnx_names = [i["name"] for i in meta["onnx_inputs"]]
    load = ",".join(f"{n}:{case_dir / f'in_{n}.npy'}" for n in inputs if n in onnx_names)
    used = {n: a for n, a in inputs.items() if n in onnx_names}
    cmd = [str(opforge_bin()), "exec", f"--onnx={case_dir / 'model.onnx'}", f"--device={device()}"]
    if fp16():
        cmd.append("--fp16")
    elif not tf32():
        cmd.append("--noTF32")
    cmd += profile_flags(e, meta, used)
    if load:
        cmd.append(f"--loadInputs={load}")
    cmd += [f"--saveOutputs={out_dir}", f"--iterations={iterations}", "--warmUp=0", "--duration=0"]
    return cmd


def _error_text(stdout, stderr):
    """opforge's error message without the file name; an unsupported-ops list becomes one line
    naming the ops."""
    lines = (stderr + "\n" + stdout).splitlines()
    for k, line in enumerate(lines):
        if "opforge: error:" not in line:
            continue
        msg = line.split("opforge: error:", 1)[1].strip()
        msg = re.sub(r"^\S+\.onnx: ", "", msg)
        if "use ops that no loaded library provides" in msg:
            ops = []
            for nxt in lines[k + 1:]:
                m = re.match(r"\s+node '.*': op '([^']*)', namespace '([^']*)'", nxt)
                if not m:
                    break
                op = f"{m.group(2)}::{m.group(1)}" if m.group(2) else m.group(1)
                if op not in ops:
                    ops.append(op)
            msg = f"unsupported ops: {', '.join(ops)} ({msg.split(' use ')[0]})"
        return msg
    for line in lines:
        if "error" in line.lower():
            return line.strip()
    return first_line(stderr or stdout or "no output")


def compare(got, want, tol):
    """Returns (ok, max_abs, max_rel, cosine, note)."""
    atol, rtol = tol
    if reduced() and np.issubdtype(want.dtype, np.floating) and want.size:
        scale = float(np.abs(want[np.isfinite(want)]).max()) if np.isfinite(want).any() else 0.0
        atol, rtol = FP16_REL * scale, 0.0
    if got.shape != want.shape:
        return False, None, None, None, f"shape {list(got.shape)}, PyTorch {list(want.shape)}"
    if not np.issubdtype(want.dtype, np.floating):
        ok = bool(np.array_equal(got.astype(want.dtype), want))
        diff = float(np.abs(got.astype(np.int64) - want.astype(np.int64)).max()) if want.size else 0.0
        return ok, diff, None, None, "" if ok else f"{int((got != want).sum())} integer values differ"
    if want.size == 0:
        return True, 0.0, 0.0, 1.0, ""
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(g)) and not np.array_equal(np.isfinite(g), np.isfinite(w)):
        return False, float("inf"), float("inf"), None, "non-finite values"
    fin = np.isfinite(w)
    err = np.abs(g - w)[fin]
    max_abs = float(err.max()) if err.size else 0.0
    scale = float(np.abs(w[fin]).max()) if err.size else 0.0
    max_rel = max_abs / scale if scale > 0 else max_abs
    den = np.linalg.norm(g[fin]) * np.linalg.norm(w[fin])
    cos = float(np.dot(g[fin].ravel(), w[fin].ravel()) / den) if den > 0 else (1.0 if max_abs == 0 else 0.0)
    ok = bool(np.all(err <= atol + rtol * np.abs(w[fin])))
    return ok, max_abs, max_rel, cos, ""


MIN_COSINE = 0.99999  # FP32, on top of the elementwise bound (outputs of a small scale)


EXTRA_NAME = {4: "masks", 3: "keypoints"}
EXTRA_TOL_MASK = 1e-3  # mask probabilities of a matched detection (FP32; --fp16: FP16_REL)
KEYPOINT_FP16_SHARE = 0.9  # --fp16: the share of matched keypoints within tolerance (see below)
KEYPOINT_FP32_SHARE = 0.98  # FP32: the same, for ties a summation order decides (see below)


def compare_detections(outs, wants, tol):
    """boxes [N, 4], scores [N], labels [N] of one image. Random weights give many anchors nearly
    (or exactly) the same score, so the order of the top-k / NMS survivors is not an opforge
    property: sorted scores must agree elementwise, and every detection must match one of the
    other side's (same label, score and box within tolerance), except detections whose score ties
    the lowest kept score (the cut-off), which may be swapped for another of the same score."""
    (gb, gs, gl), (wb, ws, wl) = outs[:3], wants[:3]
    # A fourth output (masks [N, 1, H, W], keypoints [N, K, 3]) belongs to its detection: compared
    # between the detections matched, its worst error reported as a note past the tolerance
    # (masks: probabilities; keypoints: pixels, as boxes).
    gx, wx = (outs[3], wants[3]) if len(outs) == 4 and len(wants) == 4 else (None, None)
    extra_worst = 0.0
    atol, rtol = tol
    box_atol = atol * 100  # boxes and keypoints are in pixels
    if reduced() and ws.size:
        # The FP16 rule of every other output, per output: 5 % of its largest magnitude (scores by
        # the top score, boxes and keypoints by the largest coordinate, in pixels).
        atol, rtol = FP16_REL * float(np.abs(ws).max()), 0.0
        box_atol = FP16_REL * float(np.abs(wb).max()) if wb.size else 0.0
    if gs.shape != ws.shape:
        return {"ok": False, "max_abs": None, "max_rel": None, "cosine": None,
                "note": f"{gs.shape[0]} detections, PyTorch {ws.shape[0]}"}
    if ws.size == 0:
        return {"ok": True, "max_abs": 0.0, "max_rel": 0.0, "cosine": 1.0, "note": ""}
    sg, sw = np.sort(gs)[::-1], np.sort(ws)[::-1]
    s_err = float(np.abs(sg - sw).max())
    note = "" if np.all(np.abs(sg - sw) <= atol + rtol * np.abs(sw)) else f"sorted scores differ by {s_err:.3g}"
    box_tol = box_atol + rtol * np.abs(wb)
    used = np.zeros(len(ws), bool)
    cut = float(sw.min())
    worst = s_err
    unmatched = 0
    point_errs, mask_means = [], []
    for i in range(len(gs)):
        cand = [j for j in range(len(ws)) if not used[j] and gl[i] == wl[j] and abs(gs[i] - ws[j]) <= atol + rtol * abs(ws[j])
                and np.all(np.abs(gb[i] - wb[j]) <= box_tol[j])]
        if cand:
            j = min(cand, key=lambda j: float(np.abs(gb[i] - wb[j]).max()))
            used[j] = True
            worst = max(worst, float(np.abs(gb[i] - wb[j]).max()))
            if gx is not None:
                extra_worst = max(extra_worst, float(np.abs(gx[i].astype(np.float64) - wx[j]).max()))
                if gx.ndim == 3 and gx.shape == wx.shape:  # each keypoint's error (x, y)
                    point_errs.extend(np.abs(gx[i, :, :2].astype(np.float64) - wx[j, :, :2]).max(axis=1))
                if gx.ndim == 4 and gx.shape == wx.shape:  # each mask's mean error
                    mask_means.append(float(np.abs(gx[i].astype(np.float64) - wx[j]).mean()))
        elif abs(gs[i] - cut) > atol + rtol * abs(cut):
            unmatched += 1
    if unmatched and not note:
        note = f"{unmatched} of {len(gs)} detections match none of PyTorch's"
    if gx is not None:
        mask_tol = FP16_REL if reduced() else EXTRA_TOL_MASK  # probabilities: FP16 by their scale, 1
        # keypoints [N, K, 3] (x, y, visibility): pixels, as boxes; FP16 by the largest coordinate
        point_tol = FP16_REL * float(np.abs(wx[..., :2]).max()) if reduced() and wx.size else atol * 100
        # A keypoint is the argmax of a heatmap resized to its box. With FP16 storage the heatmaps of
        # random weights tie or swap near their maximum, and the argmax jumps: PyTorch's own FP32
        # model with its activations rounded to FP16 moved 1 keypoint of 170 by 4.9 pixels (opforge's
        # CUDA FP16 plan the same one by 4.87). So with --fp16 at least KEYPOINT_FP16_SHARE of the
        # matched keypoints must be within the tolerance, not all. FP32 ties too: with torch 2.15's
        # random weights, detection 7's keypoint 12 has its two largest heatmap values 1.65206838
        # and 1.65206099 (4.5e-6 apart, 5 rows apart), and opforge's CPU plan picks the second with
        # one OpenBLAS thread, the first with two (the order of a convolution's sums), so in FP32
        # KEYPOINT_FP32_SHARE of them (all but one in 50).
        far = float(np.mean(np.asarray(point_errs) > point_tol)) if point_errs else 0.0
        if gx.shape != wx.shape and not note:
            note = f"{EXTRA_NAME.get(gx.ndim, 'fourth output')} {gx.shape}, PyTorch {wx.shape}"
        elif gx.ndim == 3:
            share = KEYPOINT_FP16_SHARE if reduced() else KEYPOINT_FP32_SHARE
            if far > 1 - share + 1e-12 and not note:
                note = (f"{far:.0%} of the matched keypoints differ by more than {point_tol:.3g} px "
                        f"(worst {extra_worst:.3g})")
        elif gx.ndim == 4 and reduced():
            # A mask is pasted into its box: where FP16 moves the box by a fraction of a pixel, the
            # pixels along the mask's edge change by up to the whole probability. So with --fp16 each
            # matched mask's mean error must be within FP16_REL, its worst pixel reported.
            worst_mean = max(mask_means, default=0.0)
            if worst_mean > FP16_REL and not note:
                note = f"a matched mask differs by {worst_mean:.3g} on average (worst pixel {extra_worst:.3g})"
        elif extra_worst > (mask_tol if gx.ndim == 4 else point_tol) and not note:
            note = f"{EXTRA_NAME.get(gx.ndim, 'fourth output')} of matched detections differ by {extra_worst:.3g}"
        worst = max(worst, extra_worst)
    detail = ""
    if gx is not None and gx.ndim == 3 and point_errs:
        detail = (f"keypoints: {int(np.sum(np.asarray(point_errs) > point_tol))} of {len(point_errs)} beyond "
                  f"{point_tol:.3g} px (worst {extra_worst:.3g})")
    elif gx is not None and gx.ndim == 4 and mask_means:
        detail = f"masks: worst mean error {max(mask_means):.3g}, worst pixel {extra_worst:.3g}"
    return {"ok": not note, "max_abs": worst, "max_rel": s_err / max(float(np.abs(ws).max()), 1e-12),
            "cosine": None, "note": note, "detail": detail}


def compare_all(outs, wants, tol, kind="allclose"):
    """Compares lists of arrays; returns a summary dict (worst over outputs)."""
    if kind == "detection" and len(outs) in (3, 4):
        return compare_detections(outs, wants, tol)
    res = {"ok": True, "max_abs": 0.0, "max_rel": 0.0, "cosine": 1.0, "note": ""}
    for i, (g, w) in enumerate(zip(outs, wants)):
        ok, a, r, c, note = compare(g, w, tol)
        min_cos = FP16_MIN_COSINE if reduced() else MIN_COSINE
        if ok and c is not None and c < min_cos:
            ok, note = False, f"cosine {c:.7f} < {min_cos}"
        if not ok:
            res["ok"] = False
            if not res["note"]:
                res["note"] = f"out{i}: {note}" if note else f"out{i}: max |diff| {a:.3g}"
        if a is None:
            res["max_abs"] = None
            continue
        if res["max_abs"] is not None:
            res["max_abs"] = max(res["max_abs"], a)
        if r is not None:
            res["max_rel"] = max(res["max_rel"], r)
        if c is not None:
            res["cosine"] = min(res["cosine"], c)
    return res


def run_ort(meta, case_dir, iterations=0, in_dir=None):
    """ONNX Runtime (CPU EP, one thread) on the case's inputs (or those saved in `in_dir`): (outputs, median
    ms or None, error)."""
    import onnxruntime as ort
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        sess = ort.InferenceSession(str(case_dir / "model.onnx"), so, providers=["CPUExecutionProvider"])
        names = {i.name for i in sess.get_inputs()}
        feeds = {n: np.load((in_dir or case_dir) / f"in_{n}.npy") for n in meta["inputs"] if n in names}
        outs = sess.run(meta["onnx_outputs"], feeds)
        ms = None
        if iterations:
            sess.run(meta["onnx_outputs"], feeds)
            times = []
            for _ in range(iterations):
                t0 = time.perf_counter()
                sess.run(meta["onnx_outputs"], feeds)
                times.append((time.perf_counter() - t0) * 1e3)
            ms = float(np.median(times))
        return outs, ms, None
    except Exception as ex:  # noqa: BLE001
        return None, None, first_line(ex)[:300]


def run_case(e, exporter, cache=None, refresh=False, iterations=10, time_ort=True, log=print, work=None):
    """Export (cached), build and run with opforge, compare; returns a result dict."""
    t0 = time.time()
    r = {"model": e.name, "family": e.family, "source": e.source, "exporter": exporter}
    meta = export_case(e, exporter, cache, refresh, log)
    r["export_s"] = meta.get("export_s")
    r["export_cached"] = meta.get("cached", False)
    if meta["status"] != "ok":
        r.update(status="export failed", message=meta.get("message", ""))
        r["wall_s"] = round(time.time() - t0, 2)
        return r
    r["opset"] = meta.get("opset")
    r["nodes"] = meta.get("nodes")
    r["dynamic"] = sorted({d for i in meta["onnx_inputs"] for d in i["dims"] if isinstance(d, str)})
    case_dir = cache_root(cache) / f"{e.name}__{exporter}"
    out_dir = pathlib.Path(work or case_dir) / f"opforge_out_{os.getpid()}"
    import shutil
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cmd = opforge_command(e, meta, case_dir, out_dir, iterations)
    r["command"] = " ".join(cmd)
    plan = out_dir / "model.plan"
    batch_dynamic = any(isinstance(d, str) and e.dims.get(i["name"], {}).get(0) == "batch"
                        for i in meta["onnx_inputs"] for d in i["dims"][:1])
    if batch_dynamic:
        cmd = cmd + [f"--saveEngine={plan}"]
    t1 = time.time()
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        r.update(status="timeout", message=f"opforge exec ran over {BUILD_TIMEOUT_S} s")
        r["wall_s"] = round(time.time() - t0, 2)
        return r
    r["opforge_s"] = round(time.time() - t1, 2)
    if p.returncode != 0:
        built = "[I] built " in p.stdout
        r.update(status="run error" if built else "build error", message=_error_text(p.stdout, p.stderr)[:600])
        if p.returncode < 0:
            r["message"] = f"opforge exec died with signal {-p.returncode}: " + r["message"]
        r["wall_s"] = round(time.time() - t0, 2)
        return r
    m = re.search(r"Latency: min = [^,]*, max = [^,]*, mean = [^,]*, median = ([0-9.eE+-]+) ms", p.stdout)
    r["opforge_ms"] = float(m.group(1)) if m else None
    wants = [np.load(case_dir / f"want_{i}.npy") for i in range(len(meta["outputs"]))]
    outs = []
    for n in meta["onnx_outputs"]:
        f = out_dir / f"{_sanitize(n)}.npy"
        if not f.exists():
            r.update(status="run error", message=f"opforge wrote no {f.name}")
            return r
        outs.append(np.load(f))
    cmp = compare_all(outs, wants, e.tol, e.compare)
    r.update(max_abs=cmp["max_abs"], max_rel=cmp["max_rel"], cosine=cmp["cosine"], tol=list(e.tol))
    ort_outs, ort_ms, ort_err = run_ort(meta, case_dir, iterations if time_ort else 0) if (time_ort or not cmp["ok"]) \
        else (None, None, None)
    r["ort_ms"] = ort_ms
    if ort_err:
        r["ort_error"] = ort_err
    if ort_outs is not None:
        oc = compare_all(ort_outs, wants, e.tol, e.compare)
        r["ort_max_abs"] = oc["max_abs"]
        r["ort_ok"] = oc["ok"]
    if cmp["ok"] and batch_dynamic:
        # The same plan at batch 1 (another shape of its profile): the first sample of the example
        # batch, compared with the first sample of PyTorch's outputs (no model here mixes samples).
        b1 = out_dir / "b1"
        b1.mkdir(exist_ok=True)
        onnx_in = {i["name"]: i["dims"] for i in meta["onnx_inputs"]}
        loads, shapes = [], []
        for n in meta["inputs"]:
            if n not in onnx_in:
                continue
            a = np.load(case_dir / f"in_{n}.npy")
            if isinstance(onnx_in[n][0], str):
                a = a[:1]
            np.save(b1 / f"in_{n}.npy", a)
            loads.append(f"{n}:{b1 / f'in_{n}.npy'}")
            shapes.append(f"{n}:{_dims(a.shape)}")
        cmd1 = [str(opforge_bin()), "exec", f"--loadEngine={plan}", f"--device={device()}", "--shapes=" + ",".join(shapes),
                "--loadInputs=" + ",".join(loads), f"--saveOutputs={b1}", "--iterations=1", "--warmUp=0", "--duration=0"]
        p1 = subprocess.run(cmd1, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env)
        if p1.returncode != 0:
            cmp = {"ok": False, "note": "batch 1 of the same plan: " + _error_text(p1.stdout, p1.stderr)[:400]}
            r["command"] += " --saveEngine=model.plan; then " + " ".join(cmd1)
            r.update(status="run error", message=cmp["note"])
            r["wall_s"] = round(time.time() - t0, 2)
            return r
        outs1 = [np.load(b1 / f"{_sanitize(n)}.npy") for n in meta["onnx_outputs"]]
        c1 = compare_all(outs1, [w[:1] for w in wants], e.tol, e.compare)
        r["batch1_max_abs"] = c1["max_abs"]
        if not c1["ok"]:
            cmp = {"ok": False, "note": "batch 1 of the same plan: " + c1["note"]}
            r["command"] += f" --saveEngine={plan}; then " + " ".join(cmd1)
            # The referee at batch 1: a model that mixes the samples of a batch (timm 1.0.29's GCViT) has a
            # batch-1 output other than the first sample of the example batch's; ONNX Runtime then differs
            # from that sample too, and opforge must match ONNX Runtime.
            ort1, _, _ = run_ort(meta, case_dir, 0, in_dir=b1)
            ort_outs = None
            if ort1 is not None:
                oc1 = compare_all(ort1, [w[:1] for w in wants], e.tol, e.compare)
                if not oc1["ok"] and compare_all(outs1, ort1, e.tol, e.compare)["ok"]:
                    ort_outs, r["ort_ok"] = ort1, False
                    outs = outs1
    if cmp["ok"]:
        r["status"] = "pass"
        if cmp.get("detail"):  # how close a pass came (the --fp16 detection rules' margins)
            r["message"] = cmp["detail"]
    elif ort_outs is not None and not r["ort_ok"] and compare_all(outs, ort_outs, e.tol, e.compare)["ok"]:
        r["status"] = "export mismatch"
        r["message"] = "ONNX Runtime differs from PyTorch as well, and opforge matches ONNX Runtime: " + cmp["note"]
    else:
        r["status"] = "WRONG"
        r["message"] = cmp["note"]
    import shutil
    shutil.rmtree(out_dir, ignore_errors=True)
    r["wall_s"] = round(time.time() - t0, 2)
    return r


# ------------------------------------------------------------------------------------- report
def error_group(msg):
    """The cause of a build error without node and tensor names."""
    s = re.sub(r"node '[^']*' ", "", msg or "")
    s = re.sub(r"input '[^']*'", "input '…'", s) if "must be known" not in s else s
    s = re.sub(r"\b\d+(x\d+)+\b", "…", s)
    s = re.sub(r"'[^']*/[^']*'", "'…'", s)
    return s[:220]


def _fmt(x, spec):
    return "" if x is None else format(x, spec)


def write_markdown(results, path, meta):
    rows = sorted(results.values(), key=lambda r: (ORDER.get(r["model"], 999), EXPORTERS.index(r["exporter"])
                                                   if r["exporter"] in EXPORTERS else 9))
    counts = collections.Counter(r["status"] for r in rows)
    lines = [
        "# Model zoo",
        "",
        "Generated by `python3 tests/zoo/run_zoo.py` (do not edit by hand). Public architectures from",
        "torchvision, timm and transformers with random weights at small sizes (`tests/zoo/models.py`),",
        "each exported by both PyTorch exporters (TorchScript `dynamo=False` with `dynamic_axes`, dynamo",
        "with `dynamic_shapes`; dynamic batch, and sequence length for language models), built and run by",
        "`opforge exec --device=cpu` with a min/opt/max profile and compared with PyTorch eager on the",
        "example inputs (FP32 tolerance per model: |opforge - eager| <= atol + rtol |eager|). Times: median",
        "latency on one thread, opforge (`opforge exec`, OPENBLAS_NUM_THREADS=1) and ONNX Runtime (CPU EP,",
        "intra_op_num_threads=1) on the same file and inputs; the machine was shared, so take them as rough.",
        "Where the batch is dynamic, the saved plan also runs at batch 1 (`--loadEngine --shapes`), compared",
        "with the first sample of PyTorch's outputs. Status: pass / WRONG (opforge differs from PyTorch) /",
        "export mismatch (ONNX Runtime differs too) / build error / run error / export failed (PyTorch's",
        "exporter failed; its message). CI: `python3 -m pytest tests/zoo` runs the CI subset (models marked",
        "below; `OPFORGE_ZOO=all` runs all), known gaps are strict xfails (`KNOWN_GAPS` in `test_zoo.py`).",
        "",
        f"Run: {meta.get('date', '')}; {meta.get('host', '')}; plans for `--device={meta.get('device', 'cpu')}`; " +
        ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items() if v) +
        (f"; opforge build `{meta['build']}`" if meta.get("build") else "") +
        (f"; the last run took {meta['last_run_s']:.0f} s for {meta['last_run_cases']} cases" if meta.get("last_run_s") else ""),
        "",
        "Summary: " + ", ".join(f"**{n}** {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])) +
        f" ({len(rows)} cases, {len({r['model'] for r in rows})} models).",
        "",
        "| model | family | exporter | status | max abs err | max rel err | cosine | opforge ms | ORT ms | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        st = r["status"]
        if st != "pass" and r.get("message"):
            msg = r["message"].replace("|", "\\|").replace("\n", " ")
            st = f"{st} ({msg[:200]})"
        ratio = ""
        if r.get("opforge_ms") and r.get("ort_ms"):
            ratio = f"{r['opforge_ms'] / r['ort_ms']:.2f}x"
        cos = r.get("cosine")
        lines.append(f"| {r['model']} | {r['family']} | {r['exporter']} | {st} | {_fmt(r.get('max_abs'), '.2g')} | "
                     f"{_fmt(r.get('max_rel'), '.2g')} | {'' if cos is None else f'{cos:.7f}'} | "
                     f"{_fmt(r.get('opforge_ms'), '.3f')} | {_fmt(r.get('ort_ms'), '.3f')} | {ratio} |")
    groups = collections.defaultdict(list)
    for r in rows:
        if r["status"] in ("build error", "run error", "timeout"):
            groups[(r["status"], error_group(r.get("message", "")))].append(f"{r['model']} ({r['exporter']})")
    if groups:
        lines += ["", "## Build errors by cause", "", "| count | status | cause | cases |", "|---|---|---|---|"]
        for (st, g), cases in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            g = g.replace("|", "\\|")
            lines.append(f"| {len(cases)} | {st} | {g} | {', '.join(cases)} |")
    exp = collections.defaultdict(list)
    for r in rows:
        if r["status"] == "export failed":
            exp[r.get("message", "")[:160]].append(f"{r['model']} ({r['exporter']})")
    if exp:
        lines += ["", "## Export failures (PyTorch's message)", "", "| count | message | cases |", "|---|---|---|"]
        for g, cases in sorted(exp.items(), key=lambda kv: -len(kv[1])):
            g = g.replace("|", "\\|")
            lines.append(f"| {len(cases)} | {g} | {', '.join(cases)} |")
    ratios = [r["opforge_ms"] / r["ort_ms"] for r in rows if r.get("opforge_ms") and r.get("ort_ms")]
    if ratios:
        lines += ["", f"opforge / ONNX Runtime latency over the {len(ratios)} timed cases: median "
                  f"{np.median(ratios):.2f}x, min {min(ratios):.2f}x, max {max(ratios):.2f}x."]
    lines += ["", "Models (`tests/zoo/models.py`):", ""]
    import models
    for n, e in models.ZOO.items():
        lines.append(f"- `{n}` ({e.family}, {e.source}){': ' + e.note if e.note else ''}"
                     f"{' — CI subset' if e.ci else ''}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


ORDER = {}


# ------------------------------------------------------------------------------------- main
def select(names, ci=False):
    import models
    ORDER.update({n: i for i, n in enumerate(models.ZOO)})
    if not names:
        sel = list(models.ZOO.values())
    else:
        sel = []
        for pat in names.split(","):
            hit = [e for n, e in models.ZOO.items() if fnmatch.fnmatch(n, pat.strip()) and e not in sel]
            if not hit and not any(fnmatch.fnmatch(n, pat.strip()) for n in models.ZOO):
                raise SystemExit(f"no model matches '{pat}' (--list shows them)")
            sel += hit
    if ci:
        sel = [e for e in sel if e.ci]
    return sel


def _worker(args):
    name, exporter, cache, refresh, iterations, time_ort = args
    import models
    return run_case(models.ZOO[name], exporter, cache, refresh, iterations, time_ort, log=lambda *_: None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="", help="comma-separated names or globs (default: all)")
    ap.add_argument("--exporters", default=",".join(EXPORTERS), help="torchscript,dynamo")
    ap.add_argument("--ci", action="store_true", help="only the CI subset")
    ap.add_argument("--jobs", type=int, default=1, help="cases at a time (default 1)")
    ap.add_argument("--cache", default=None, help="export cache (default $OPFORGE_ZOO_CACHE or <build>/zoo-cache)")
    ap.add_argument("--refresh", action="store_true", help="export again even when the cache has the case")
    ap.add_argument("--iterations", type=int, default=10, help="timed runs of opforge and ONNX Runtime (default 10)")
    ap.add_argument("--no-time", action="store_true", help="correctness only (one opforge run, no ONNX Runtime timing)")
    ap.add_argument("--json", default=str(HERE / "results.json"))
    ap.add_argument("--markdown", default=None,
                    help="table to write (default docs/model-zoo.md, only for a CPU FP32 run into the default --json: "
                         "other runs would replace the zoo's table with theirs)")
    ap.add_argument("--fresh", action="store_true", help="forget the results of earlier runs in --json")
    ap.add_argument("--device", choices=("cpu", "cuda"), default=None,
                    help="backend of the plans (default $OPFORGE_ZOO_DEVICE or cpu); cuda: correctness on the GPU, "
                         "compared with PyTorch's FP32 eager result on the CPU")
    ap.add_argument("--fp16", action="store_true", help="build with --fp16 (FP16 criteria: see FP16_MIN_COSINE)")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--export-only", action="store_true", help="fill the export cache; build nothing")
    ap.add_argument("--markdown-only", action="store_true", help="write --markdown from --json; run nothing")
    a = ap.parse_args(argv)
    if a.device:
        os.environ["OPFORGE_ZOO_DEVICE"] = a.device
    if a.fp16:
        os.environ["OPFORGE_ZOO_FP16"] = "1"
    if a.markdown is None and a.json == str(HERE / "results.json") and device() == "cpu" and not reduced():
        a.markdown = str(ROOT / "docs" / "model-zoo.md")
    sel = select(a.models, a.ci)
    if a.list:
        for e in sel:
            print(f"{e.name:40s} {e.family:16s} {e.source:13s} {'ci' if e.ci else '  '} {e.note}")
        return 0
    exporters = [x.strip() for x in a.exporters.split(",") if x.strip()]
    for x in exporters:
        if x not in EXPORTERS:
            raise SystemExit(f"unknown exporter '{x}' (torchscript, dynamo)")
    exporters_ = exporters
    if a.markdown_only:
        if a.markdown is None:
            raise SystemExit("--markdown-only: give --markdown (the default table is written only from the default "
                             "--json of a CPU FP32 run)")
        data = json.loads(pathlib.Path(a.json).read_text())
        write_markdown({f"{r['model']}/{r['exporter']}": r for r in data["results"]}, a.markdown, data["meta"])
        return 0
    if a.export_only:
        import models
        t0 = time.time()
        for e in sel:
            for x in exporters_:
                m = export_case(e, x, a.cache, a.refresh, log=lambda *_: None)
                print(f"{e.name:38s} {x:11s} {m['status']:14s} {m.get('export_s', 0):6.1f} s"
                      f"{' (cached)' if m.get('cached') else ''} {m.get('message', '')[:200]}", flush=True)
        print(f"exports done in {time.time() - t0:.0f} s")
        return 0
    if not opforge_bin().exists():
        raise SystemExit(f"{opforge_bin()} is missing: build opforge first (scripts/build.sh), or set OPFORGE_BUILD_DIR")
    iterations = 1 if a.no_time else a.iterations
    jpath = pathlib.Path(a.json)
    results = {}
    if jpath.exists() and not a.fresh:
        old = json.loads(jpath.read_text())
        results = {f"{r['model']}/{r['exporter']}": r for r in old.get("results", [])}
    cases = [(e.name, x) for e in sel for x in exporters]
    t0 = time.time()

    def record(r):
        results[f"{r['model']}/{r['exporter']}"] = r
        extra = r.get("message", "")
        err = f" max|err| {r['max_abs']:.2g}" if r.get("max_abs") is not None else ""
        tm = f" opforge {r['opforge_ms']:.2f} ms ORT {r['ort_ms']:.2f} ms" if r.get("opforge_ms") and r.get("ort_ms") else ""
        print(f"{r['model']:38s} {r['exporter']:11s} {r['status']:15s}{err}{tm} [{r.get('wall_s', 0):.0f} s] "
              f"{extra if r['status'] != 'pass' else extra[:160]}", flush=True)  # failures: the whole message

    if a.jobs <= 1:
        import models
        for name, x in cases:
            try:
                record(run_case(models.ZOO[name], x, a.cache, a.refresh, iterations, not a.no_time))
            except Exception as ex:  # noqa: BLE001  (a harness problem in one case must not stop the run)
                record({"model": name, "family": models.ZOO[name].family, "exporter": x, "status": "harness error",
                        "message": first_line(ex)})
    else:
        import multiprocessing as mp

        import models
        with concurrent.futures.ProcessPoolExecutor(a.jobs, mp_context=mp.get_context("spawn")) as pool:
            futs = {pool.submit(_worker, (n, x, a.cache, a.refresh, iterations, not a.no_time)): (n, x)
                    for n, x in cases}
            for f in concurrent.futures.as_completed(futs):
                try:
                    record(f.result())
                except Exception as ex:  # noqa: BLE001  (as above: one case's harness problem is that case's)
                    n, x = futs[f]
                    record({"model": n, "family": models.ZOO[n].family, "exporter": x, "status": "harness error",
                            "message": first_line(ex)})
    total = time.time() - t0
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": f"{platform.machine()}, {os.cpu_count()} CPUs", "versions": _versions(),
            "build": str(build_dir()), "last_run_s": round(total, 1), "last_run_cases": len(cases),
            "device": device() + (" --fp16" if fp16() else " (TF32)" if tf32() else "")}
    jpath.write_text(json.dumps({"meta": meta, "results": sorted(results.values(), key=lambda r: (ORDER.get(r["model"], 999),
                                                                                              r["exporter"]))},
                                indent=1))
    if a.markdown:
        write_markdown(results, a.markdown, meta)
    counts = collections.Counter(results[f"{n}/{x}"]["status"] for n, x in cases)
    print(f"{len(cases)} cases in {total:.0f} s: " + ", ".join(f"{v} {k}" for k, v in counts.most_common()))
    return 1 if counts.get("WRONG") else 0


if __name__ == "__main__":
    sys.exit(main())
