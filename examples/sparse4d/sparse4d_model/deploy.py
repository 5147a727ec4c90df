"""Deployment helpers shared by examples/sparse4d/sparse4d.py and the tests: ONNX export of the three graphs
with opforge.onnx.export, plan building with `opforge exec`, and the per-output comparison."""
import ast
import copy
import os
import subprocess

import numpy as np
import torch

import opforge

from .model import (HEAD_INPUTS_FIRST, HEAD_INPUTS_LATER, HEAD_OUTPUTS, HEAD_OUTPUTS_LATER, BackboneGraph, HeadFirstGraph,
                    HeadLaterGraph, Sparse4DTracker, make_frames)

GRAPHS = ("backbone", "head_first", "head_later")

# Module scopes the FP16 backbone plan keeps in FP32 (`opforge exec --layerPrecisions`, found through the exporter's
# module scopes): none. Until the residual branches' last BatchNorms got small scales (init_random_weights), the
# random ResNet-50 amplified the FP16 rounding of its stride-2/4 stages so much that the plan had to keep the stem,
# layer1 and layer2 in FP32 (STEM_TO_LAYER2) to reach the 0.999 target, at 1.46 ms of FP32 convolutions;
# bench/results/sparse4d_fp16_probe_cpu.md has both measurements.
STEM_TO_LAYER2 = ("model.img_backbone.conv1", "model.img_backbone.bn1", "model.img_backbone.maxpool",
                  "model.img_backbone.layer1", "model.img_backbone.layer2")
BACKBONE_FP32_SCOPES = ()


def fp32_layer_patterns(onnx_path, scopes):
    """`--layerPrecisions` value keeping the nodes of the given module scopes in FP32: the dynamo exporter records
    each node's module path in its metadata (pkg.torch.onnx.name_scopes); the TorchScript exporter puts it in the
    node name (/model/img_backbone/layer1/...). Fused layers join node names with '+', so each node is matched
    alone, first, last or inside a fused name. Empty when no node matches."""
    import onnx

    graph = onnx.load(onnx_path, load_external_data=False).graph
    names = []
    for n in graph.node:
        found = next((ast.literal_eval(p.value) for p in n.metadata_props if p.key == "pkg.torch.onnx.name_scopes"), [])
        found = list(found) + [n.name.replace("/", ".").strip(".")]
        if any(f == s or f.startswith(s + ".") or ("." + s + ".") in ("." + f + ".") for f in found for s in scopes):
            names.append(n.name)
    return ",".join(f"{p}:fp32" for n in names for p in (n, n + "+*", "*+" + n, "*+" + n + "+*"))


def example_inputs(model, seed=1):
    """Inputs of each graph from two plausible frames (the later-frame head gets a real cache)."""
    frames = make_frames(model.cfg, 2, seed=seed)
    tr = Sparse4DTracker(model)
    _, ins_first, _ = tr.step(frames[0])
    _, ins_later, _ = tr.step(frames[1])
    return {"backbone": {"img": torch.as_tensor(frames[0]["img"])},
            "head_first": {k: ins_first[k] for k in HEAD_INPUTS_FIRST},
            "head_later": {k: ins_later[k] for k in HEAD_INPUTS_LATER}}


def _sort_stable(self, *, stable=None, dim=-1, descending=False):
    """aten.sort.stable -> ONNX TopK over the whole axis. ONNX TopK keeps equal values in index order (lower
    index first), which is what a stable sort does; the dynamo exporter has no translation of its own."""
    from onnxscript import opset18 as op
    k = op.Shape(self, start=dim) if dim < 0 else op.Shape(self, start=dim, end=dim + 1)
    values, indices = op.TopK(self, k, axis=dim, largest=1 if descending else 0, sorted=1)
    return values, indices


def translation_table():
    """Translations the Sparse4D graphs need beyond opforge's (for opforge.onnx.export(dynamo=True))."""
    return {torch.ops.aten.sort.stable: _sort_stable}


def export_all(model, folder, dynamo=True, inputs=None):
    """Exports backbone.onnx, head_first.onnx, head_later.onnx (static shapes, batch 1) into `folder`.
    Returns {graph: path}."""
    os.makedirs(folder, exist_ok=True)
    inputs = inputs or example_inputs(model)
    modules = {"backbone": (BackboneGraph(model), ["feature_maps"]),
               "head_first": (HeadFirstGraph(model), HEAD_OUTPUTS),
               "head_later": (HeadLaterGraph(model), HEAD_OUTPUTS_LATER)}
    paths = {}
    for name in GRAPHS:
        module, outs = modules[name]
        ins = inputs[name]
        path = os.path.join(folder, f"{name}.onnx")
        kw = {"custom_translation_table": translation_table()} if dynamo else {}
        opforge.onnx.export(module.eval(), tuple(ins.values()), path, dynamo=dynamo, input_names=list(ins),
                            output_names=outs, **kw)
        paths[name] = path
    return paths


def opforge_exec(opforge_bin, plugins, onnx_path, plan_path, fp16=False, device="cpu", extra=()):
    """Builds (and saves) a plan with the CLI: `opforge exec --onnx --saveEngine --skipInference`."""
    cmd = [opforge_bin, "exec", f"--onnx={onnx_path}", f"--plugins={plugins}", f"--saveEngine={plan_path}",
           "--skipInference", f"--device={device}"] + (["--fp16"] if fp16 else []) + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"opforge exec failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def build_plans(opforge_bin, plugins, onnx_paths, folder, precisions=("fp32", "fp16"), device="cpu", extra=(),
                return_logs=False, fp32_scopes=BACKBONE_FP32_SCOPES):
    """{(graph, precision): plan path}: every graph in every precision, saved under `folder`
    (and the CLI's logs with return_logs). The FP16 backbone keeps the modules of `fp32_scopes` in FP32."""
    os.makedirs(folder, exist_ok=True)
    plans, logs = {}, {}
    for prec in precisions:
        for name, path in onnx_paths.items():
            plan = os.path.join(folder, f"{name}_{prec}.plan")
            pinned = fp32_scopes and name == "backbone" and prec == "fp16"
            pins = fp32_layer_patterns(path, fp32_scopes) if pinned else ""
            logs[(name, prec)] = opforge_exec(opforge_bin, plugins, path, plan, fp16=(prec == "fp16"), device=device,
                                              extra=list(extra) + ([f"--layerPrecisions={pins}"] if pins else []))
            plans[(name, prec)] = plan
    return (plans, logs) if return_logs else plans


def compare(got, want):
    """max |got - want| and cosine similarity of two arrays (float64)."""
    a = np.asarray(got, dtype=np.float64).ravel()
    b = np.asarray(want, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch: {np.asarray(got).shape} vs {np.asarray(want).shape}")
    if not np.all(np.isfinite(a)):
        return {"max_abs": float("inf"), "cosine": float("nan"), "finite": False}
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else float(na == nb)
    return {"max_abs": err, "cosine": cos, "finite": True}


def load_demo_outputs(folder, num_frames):
    """The demo's --saveOutputs files: folder/frame_XXXX/<name>.npy -> [{name: array}] per frame."""
    out = []
    for k in range(num_frames):
        d = os.path.join(folder, f"frame_{k:04d}")
        out.append({f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")})
    return out


def reference_sequence(model, frames, device="cpu", dtype=torch.float32, backbone_fn=None):
    """PyTorch over the frames with the instance bank: per frame {feature_maps, the head's outputs, tracking ids,
    the cache after the frame (cached_feature, cached_anchor, cached_confidence, cached_id)} as numpy arrays.
    dtype=torch.float64: a float64 copy of the model on the CPU (the oracle: opforge's FP64 aggregation is a CPU
    kernel), whatever `device` says. backbone_fn(img) -> feature_maps replaces the model's backbone."""
    if dtype != torch.float32:
        model, device = copy.deepcopy(model).to("cpu", dtype), "cpu"
    tr = Sparse4DTracker(model, device=device, dtype=dtype)
    ref = []
    for fr in frames:
        fm, _, outs = tr.step(fr, backbone_fn=backbone_fn)
        r = {"feature_maps": fm.cpu().numpy()}
        r.update({k: v.cpu().numpy() for k, v in outs.items()})
        r.update(cached_feature=tr.cached[0].cpu().numpy(), cached_anchor=tr.cached[1].cpu().numpy(),
                 cached_confidence=tr.cached[2].cpu().numpy(), cached_id=tr.cached_id.cpu().numpy())
        ref.append(r)
    return ref


FLOAT_OUTPUTS = ("feature_maps", "instance_feature", "anchor", "classification", "quality", "cached_feature",
                 "cached_anchor", "cached_confidence")
ID_OUTPUTS = ("instance_id", "cached_id")
ROW_OUTPUTS = ("instance_feature", "anchor", "classification", "quality")
CACHE_OUTPUTS = ("cached_feature", "cached_anchor", "cached_confidence")


def instance_origins(seq, frames, cfg):
    """Who every output row is, per frame of one run: (frame where the instance appeared, its row in that frame's
    decoder-1 output), followed through the cache with the tracking ids. Returns [(row keys, cached keys)]."""
    nt = cfg.num_temp_instances
    id_origin, out, cached, prev_t = {}, [], None, None
    for f, (o, fr) in enumerate(zip(seq, frames)):
        recent = cached is not None and abs(float(fr["timestamp"] - prev_t)) <= cfg.max_time_interval
        if recent:
            rows = list(cached) + [(f, int(j)) for j in np.asarray(o["selected_index"]).reshape(-1)]
        else:
            rows = [(f, r) for r in range(cfg.num_anchor)]
        for r, i in enumerate(np.asarray(o["instance_id"]).reshape(-1)):
            id_origin.setdefault(int(i), rows[r])
        cached = [id_origin[int(i)] for i in np.asarray(o["cached_id"]).reshape(-1)]
        assert len(cached) == nt
        out.append((rows, cached))
        prev_t = fr["timestamp"]
    return out


def _matched(keys_a, keys_b):
    pos_b = {k: i for i, k in enumerate(keys_b)}
    ia = [i for i, k in enumerate(keys_a) if k in pos_b]
    return np.array(ia, dtype=np.int64), np.array([pos_b[keys_a[i]] for i in ia], dtype=np.int64)


def compare_sequence(ref, got, frames=None, cfg=None):
    """Per output over all frames: worst max |error|, worst cosine (and its frame). With frames and cfg, rows are
    matched by instance identity (instance_origins) instead of by position, and the fraction of rows present in
    both runs is reported ("matched", the worst frame's): where near-equal confidences make the two runs cache a
    different instance, the runs go on with different instances, which are not compared. Ids: whether they are
    identical. Returns {output: {...}}."""
    res = {}
    keys = None
    if frames is not None:
        ok = all("selected_index" in g or k == 0 for k, g in enumerate(got))
        keys = (instance_origins(ref, frames, cfg), instance_origins(got, frames, cfg)) if ok else None
    for name in FLOAT_OUTPUTS + ID_OUTPUTS:
        rows = [(k, g[name], r[name]) for k, (g, r) in enumerate(zip(got, ref)) if name in g and name in r]
        if not rows:
            continue
        if name in ID_OUTPUTS:
            bad = [k for k, a, b in rows if a.shape != b.shape or not np.array_equal(a, b)]
            res[name] = {"equal": not bad, "frames_differing": bad, "frames": len(rows)}
            continue
        per, matched = [], []
        for k, a, b in rows:
            if keys is not None and name in ROW_OUTPUTS + CACHE_OUTPUTS:
                which = 0 if name in ROW_OUTPUTS else 1
                ig, ir = _matched(keys[1][k][which], keys[0][k][which])
                matched.append(len(ig) / max(1, a.shape[1]))
                a, b = a[:, ig], b[:, ir]
            per.append((k, compare(a, b)))
        worst = min(per, key=lambda kc: (kc[1]["cosine"] if kc[1]["finite"] else -2.0))
        res[name] = {"max_abs": max(c["max_abs"] for _, c in per), "cosine": worst[1]["cosine"],
                     "worst_frame": worst[0], "finite": all(c["finite"] for _, c in per), "frames": len(rows),
                     "per_frame": [c for _, c in per]}
        if matched:
            res[name]["matched"] = min(matched)
            res[name]["matched_per_frame"] = matched
    if keys is not None:
        # The first frame where the runs hold different instances (rows or cache): up to there the two runs are in
        # the same state and must agree row by row; afterwards only matched rows are compared.
        agree = len(ref)
        for k in range(len(ref)):
            if set(keys[0][k][0]) != set(keys[1][k][0]) or set(keys[0][k][1]) != set(keys[1][k][1]):
                agree = k
                break
        for name, r in res.items():
            if "per_frame" in r:
                cs = [c["cosine"] for c in r["per_frame"][:agree]]
                r["cosine_same_state"] = min(cs) if cs else None
        res["_same_state_frames"] = agree
    return res


def format_table(results, title=""):
    """Markdown table of compare_sequence results."""
    lines = [title] if title else []
    results = {k: v for k, v in results.items() if not k.startswith("_")}
    matched = any("matched" in r for r in results.values())
    lines += ["| output | frames | max abs error | min cosine (frame) |" + (" rows matched (worst frame) |" if matched else ""),
              "|---|---|---|---|" + ("---|" if matched else "")]
    for name, r in results.items():
        if "equal" in r:
            text = "identical" if r["equal"] else "differ in frames " + str(r["frames_differing"])
            lines.append(f"| {name} | {r['frames']} | {text} | |" + (" |" if matched else ""))
        else:
            m = f" {100 * r['matched']:.1f} % |" if "matched" in r else (" |" if matched else "")
            lines.append(f"| {name} | {r['frames']} | {r['max_abs']:.3g} | {r['cosine']:.9f} ({r['worst_frame']}) |" + m)
    return "\n".join(lines)


HEAD_COMPARED = ("instance_feature", "anchor", "classification", "quality")


def _with_selection(model, ins, index):
    """forward_later with the decoder-1 selection imposed (index [B, A - Nt], row indices) when given, and the
    decoder-1 confidences PyTorch computed: (outputs, confidence [A])."""
    head, seen = model.head, {}
    original = head.update

    def update(instance_feature, anchor, cls, *rest):
        seen["confidence"] = cls.max(dim=-1).values[0]
        return original(instance_feature, anchor, cls, *rest, index=index)
    head.update = update
    try:
        res = head.forward_later(**ins)
    finally:
        del head.update
    return res, seen.get("confidence")


# How far apart (relative to the largest |confidence|) two decoder-1 confidences may be for the demo's pick of
# one over the other at the top-k boundary to count as a near-tie of the plan's precision rather than a wrong
# selection. FP32: the full-size plans agree with PyTorch to ~2e-5 relative (instance features 1 - cosine 3e-10 on
# the first frame), and a gap of 1.9e-5 (4.4e-6 of the largest |confidence|) at frame 1 of the full run flipped;
# FP16 rounds at ~1e-3.
TIE_TOLERANCE = {"fp32": 1e-4, "fp16": 2e-2}


@torch.no_grad()
def synced_comparison(model, frames, got, device="cpu", tie_tolerance=None):
    """PyTorch run on the demo's state: frame k's head gets the cache the demo kept after frame k-1, so each
    frame measures the plans' numerical error alone (no divergence of the cache selection between frames).
    Where the later-frame head's top-k selection differs from PyTorch's (selected_index):
      - with tie_tolerance (relative to the largest |confidence|): if the demo's picks are a top-k of PyTorch's
        own confidences within that tolerance (every picked row at least the best row left out minus the
        tolerance), they are a near-tie that the plan's rounding decided the other way: PyTorch is run again with
        the demo's selection imposed and every row is compared ("synced_picks" counts the picks swapped, with the
        largest gap); otherwise the selection is wrong ("bad_picks" records it, a failure);
      - without it, or for a wrong selection, the rows picked differently are left out of the head's comparison
        ("excluded_rows" counts them).
    Also checks the demo's bank step against cache_step() on the demo's own outputs.
    Returns {output: {...}} like compare_sequence, plus "excluded_rows", "synced_picks", "bad_picks" per frame
    and "bank"."""
    from .head import cache_step
    from .model import Sparse4DTracker
    cfg = model.cfg
    nt = cfg.num_temp_instances
    tr = Sparse4DTracker(model, device=device)
    per = {n: [] for n in ("feature_maps",) + HEAD_COMPARED}
    excluded, bank, synced_picks, bad_picks = [], [], [], []
    t = lambda a: torch.as_tensor(np.asarray(a)).to(device)  # noqa: E731
    for k, (fr, g) in enumerate(zip(frames, got)):
        fm = model.extract_feat(t(fr["img"]))
        per["feature_maps"].append(compare(g["feature_maps"], fm.cpu().numpy()) if "feature_maps" in g else None)
        if k == 0:
            tr.cached = None
        else:
            prev = got[k - 1]
            tr.cached = (t(prev["cached_feature"]), t(prev["cached_anchor"]), t(prev["cached_confidence"]))
        first, ins = tr.head_inputs(fr, fm)
        res, conf = (model.head.forward_first(**ins), None) if first else _with_selection(model, ins, None)
        rows_g = rows_w = np.arange(cfg.num_anchor)
        recent = not first and abs(float(fr["timestamp"] - tr.prev_time)) <= cfg.max_time_interval
        n_excl, picks, bad = 0, None, None
        if recent and tie_tolerance is not None:
            sel_w, sel_g = res[4].cpu().numpy()[0], np.asarray(g["selected_index"][0])
            if set(sel_w.tolist()) != set(sel_g.tolist()):
                conf = conf.double().cpu().numpy()
                left_out = np.setdiff1d(np.arange(conf.shape[0]), sel_g)
                gap = float(conf[left_out].max() - conf[sel_g].min())  # > 0: a row left out beats a pick
                swapped = len(np.setdiff1d(sel_g, sel_w))
                if gap <= tie_tolerance * float(np.abs(conf).max()):
                    index = torch.as_tensor(g["selected_index"], dtype=torch.int64, device=res[4].device)
                    res, _ = _with_selection(model, ins, index)
                    picks = {"swapped": swapped, "gap": gap}
                else:
                    bad = {"swapped": swapped, "gap": gap, "max_abs_confidence": float(np.abs(conf).max())}
        synced_picks.append(picks)
        bad_picks.append(bad)
        want = {n: v.cpu().numpy() for n, v in zip(HEAD_COMPARED, res)}
        if recent:
            sel_w = res[4].cpu().numpy()[0]
            sel_g = g["selected_index"][0]
            common = np.intersect1d(sel_g, sel_w)
            n_excl = len(sel_w) - len(common)
            pos_g = nt + np.searchsorted(sel_g, common) if cfg.sort_selected else None
            pos_w = nt + np.searchsorted(sel_w, common) if cfg.sort_selected else None
            if not cfg.sort_selected:
                pos_g = nt + np.array([np.where(sel_g == c)[0][0] for c in common], dtype=np.int64)
                pos_w = nt + np.array([np.where(sel_w == c)[0][0] for c in common], dtype=np.int64)
            rows_g = np.concatenate([np.arange(nt), pos_g])
            rows_w = np.concatenate([np.arange(nt), pos_w])
        excluded.append(n_excl)
        for n in HEAD_COMPARED:
            per[n].append(compare(g[n][:, rows_g], want[n][:, rows_w]))
        # The demo's bank step, recomputed from its own outputs.
        prev_conf = None if k == 0 else t(got[k - 1]["cached_confidence"])
        cf, ca, cc = cache_step(t(g["instance_feature"]), t(g["anchor"]), t(g["classification"]), prev_conf, nt,
                                cfg.confidence_decay)
        bank.append({"feature": compare(g["cached_feature"], cf.cpu().numpy()),
                     "anchor": compare(g["cached_anchor"], ca.cpu().numpy()),
                     "confidence": compare(g["cached_confidence"], cc.cpu().numpy())})
        tr.prev_time, tr.prev_T = fr["timestamp"], fr["T_global"]
    res = {}
    for n, lst in per.items():
        lst = [(k, c) for k, c in enumerate(lst) if c is not None]
        if not lst:
            continue
        worst = min(lst, key=lambda kc: (kc[1]["cosine"] if kc[1]["finite"] else -2.0))
        res[n] = {"max_abs": max(c["max_abs"] for _, c in lst), "cosine": worst[1]["cosine"], "worst_frame": worst[0],
                  "finite": all(c["finite"] for _, c in lst), "frames": len(lst), "per_frame": [c for _, c in lst]}
    res["excluded_rows"] = excluded
    res["synced_picks"] = synced_picks
    res["bad_picks"] = bad_picks
    res["bank"] = {part: {"max_abs": max(b[part]["max_abs"] for b in bank),
                          "cosine": min(b[part]["cosine"] for b in bank)} for part in ("feature", "anchor", "confidence")}
    return res
