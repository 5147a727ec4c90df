"""Sparse4Dv3 end to end on the CPU (issue 7's CI part), in the reduced configuration (one camera at 64x192, a
narrow one-block-per-stage ResNet, 48 anchors with 32 cached; the full head structure): the PyTorch model
(examples/sparse4d/sparse4d_model) -> opforge.onnx.export -> FP32 and FP16 plans with `opforge exec` ->
build/bin/sparse4d_demo (C++, 10 frames with the instance bank between them) -> every output against PyTorch.
Then the bad inputs: camera matrices that put the keypoints behind the cameras or outside the images, the
empty cache of the first frame (and a stale cache after a pause), plans and inputs with different anchor
counts; and the loader of official state dicts on a synthetic state dict with the official names.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import ROOT, build_dir, opforge_bin

sys.path.insert(0, str(ROOT / "examples" / "sparse4d"))

import onnx  # noqa: E402

import opforge  # noqa: E402
import sparse4d as driver  # noqa: E402  (examples/sparse4d/sparse4d.py)
from sparse4d_model import (REDUCED, build_model, load_official_state_dict, make_frames,  # noqa: E402
                            write_frames)
from sparse4d_model import deploy  # noqa: E402
from sparse4d_model.head import operation_order  # noqa: E402

NUM_FRAMES = 10


def demo_bin():
    exe = build_dir() / "bin" / "sparse4d_demo"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build opforge with the examples (cmake --build build)")
    return str(exe)


def plugins():
    return str(build_dir() / "lib" / "libopforge_ops.so")


def run_demo(args, expect_ok=True):
    p = subprocess.run([demo_bin(), f"--plugins={plugins()}"] + args, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        raise AssertionError(f"sparse4d_demo failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


@pytest.fixture(scope="module")
def threads():
    n = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is fastest on a shared 2-core machine
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def model(threads):
    return build_model(REDUCED, seed=0)


@pytest.fixture(scope="module")
def work(model, tmp_path_factory):
    """Exported graphs, frames and FP32/FP16 CPU plans of the reduced configuration."""
    d = tmp_path_factory.mktemp("sparse4d")
    onnx_paths = deploy.export_all(model, str(d / "onnx"))
    frames = make_frames(REDUCED, NUM_FRAMES, seed=1)
    write_frames(frames, str(d / "frames"))
    deploy.build_plans(opforge_bin(), plugins(), onnx_paths, str(d / "plans"), ("fp32", "fp16"), "cpu")
    return {"dir": d, "onnx": onnx_paths, "frames": frames}


def test_export_graphs(work):
    """Standard ONNX everywhere except the deformable aggregation, which is the custom node (6 per head)."""
    for name, path in work["onnx"].items():
        m = onnx.load(path)
        custom = [n for n in m.graph.node if n.domain not in ("", "ai.onnx")]
        if name == "backbone":
            assert not custom
            continue
        assert len(custom) == 6 and all(n.op_type == "DeformableAggregation" and n.domain == "opforge"
                                         for n in custom), [(n.domain, n.op_type) for n in custom]
        attrs = {a.name: a for a in custom[0].attribute}
        assert attrs["plugin_namespace"].s == b"opforge"
    # The plans: 6 aggregation layers per head (the op library's layer, not a decomposition).
    for name in ("head_first", "head_later"):
        e = opforge.Engine.load(str(work["dir"] / "plans" / f"{name}_fp32.plan"))
        assert [ly["op"] for ly in e.layers()].count("opforge::DeformableAggregation v1") == 6


def test_fp16_backbone_plan_can_keep_module_scopes_in_fp32(work, tmp_path):
    """build_plans(fp32_scopes=...) runs the named modules of the FP16 backbone in FP32 (found through the
    exporter's module scopes, passed as --layerPrecisions) and the rest in FP16; the default FP16 plan
    (deploy.BACKBONE_FP32_SCOPES, empty) is FP16 throughout."""
    def convs(plan):
        return [ly for ly in opforge.Engine.load(str(plan)).layers() if "Conv" in ly["op"]]

    pins = deploy.fp32_layer_patterns(work["onnx"]["backbone"], deploy.STEM_TO_LAYER2)
    assert "node_" in pins and pins.endswith(":fp32"), pins[:200]
    plans = deploy.build_plans(opforge_bin(), plugins(), {"backbone": work["onnx"]["backbone"]}, str(tmp_path),
                               ("fp16",), "cpu", fp32_scopes=deploy.STEM_TO_LAYER2)
    mixed = convs(plans[("backbone", "fp16")])
    assert mixed[0]["combo"].startswith("FP32"), mixed[0]  # the stem
    assert mixed[-1]["combo"].startswith("FP16"), mixed[-1]  # the FPN
    assert sum(ly["combo"].startswith("FP32") for ly in mixed) < len(mixed) / 2, [ly["combo"] for ly in mixed]
    default = convs(work["dir"] / "plans" / "backbone_fp16.plan")
    assert deploy.BACKBONE_FP32_SCOPES == () and all(ly["combo"].startswith("FP16") for ly in default), \
        [ly["combo"] for ly in default]


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_demo_matches_pytorch(work, model, precision):
    """10 frames through the C++ demo: FP32 closed loop (PyTorch with its own bank) cosine >= 0.99999 on every
    output at this size (the full size drifts further, as PyTorch FP32 does from float64: sparse4d.py) and
    identical tracking ids; every precision synced (PyTorch on the demo's cache each frame): FP32
    >= 0.99999 on the head's outputs, FP16 >= 0.999 on instance features and boxes; the demo's bank step equals
    cache_step() on its outputs."""
    d = work["dir"]
    out = d / f"demo_{precision}"
    p = run_demo([f"--plans={d / 'plans'}", f"--precision={precision}", f"--frames={d / 'frames'}",
                  f"--saveOutputs={out}", f"--saveFeatureMaps={NUM_FRAMES}", "--loops=1"])
    assert "frame 9 (later-frame head" in p.stdout and "| head, later frame |" in p.stdout, p.stdout
    res = driver.compare_precision(model, work["frames"], str(out), precision)
    print(driver.markdown(res, precision, "reduced"))
    assert driver.check_results(res, precision) == []
    syn = res["synced"]
    assert syn["feature_maps"]["cosine"] >= (0.99999 if precision == "fp32" else 0.999)
    if precision == "fp32":
        assert res["closed_loop"]["instance_id"]["equal"] and res["closed_loop"]["cached_id"]["equal"]
        worst = min(r["cosine_same_state"] for r in res["closed_loop"].values()
                    if isinstance(r, dict) and r.get("cosine_same_state") is not None)
        assert worst >= driver.FP32_MIN_COSINE, worst
        assert sum(syn["excluded_rows"]) == 0
        # FP32 plans agree with PyTorch far below the criterion; a plan that skipped a layer would not.
        assert syn["instance_feature"]["max_abs"] < 1e-2 and syn["anchor"]["max_abs"] < 1e-2
    else:
        # at most a few of the 16 rows picked per frame differ (near-ties at the top-k boundary in FP16)
        assert max(syn["excluded_rows"]) <= 3, syn["excluded_rows"]


def test_fp32_closed_loop_bound_catches_a_wrong_ego_motion(model):
    """The FP32 closed-loop bounds (CLOSED_LOOP_*, looser than the per-frame criterion because the recurrence
    amplifies rounding) still fail a real fault: PyTorch against itself with the previous frame's boxes not moved
    into the current frame (T_temp2cur = identity). The faulty run caches other instances from the second frame
    on, so it is the bound over every frame (rows of the instances both runs hold) that catches it."""
    frames = make_frames(REDUCED, NUM_FRAMES, seed=1)
    ref = deploy.reference_sequence(model, frames)

    class NoEgoMotion(deploy.Sparse4DTracker):
        def head_inputs(self, frame, feature_maps):
            first, ins = super().head_inputs(frame, feature_maps)
            if not first:
                ins["T_temp2cur"] = torch.eye(4, dtype=ins["T_temp2cur"].dtype)[None]
            return first, ins

    tr, faulty = NoEgoMotion(model), []
    for fr in frames:
        _, _, outs = tr.step(fr)
        faulty.append({k: v.numpy() for k, v in outs.items()} | {
            "cached_feature": tr.cached[0].numpy(), "cached_anchor": tr.cached[1].numpy(),
            "cached_confidence": tr.cached[2].numpy(), "cached_id": tr.cached_id.numpy()})
    synced_ok = {n: {"max_abs": 0.0, "cosine": 1.0, "finite": True} for n in deploy.HEAD_COMPARED} | {"bank": {}}
    res = {"synced": synced_ok, "closed_loop": deploy.compare_sequence(ref, faulty, frames, REDUCED)}
    fails = driver.check_results(res, "fp32")
    assert any("closed loop" in f and "instances both runs hold" in f for f in fails), (fails, res["closed_loop"])
    # ... and the same sequence against itself passes
    res["closed_loop"] = deploy.compare_sequence(ref, ref, frames, REDUCED)
    assert driver.check_results(res, "fp32") == []


def test_synced_comparison_syncs_near_ties_and_fails_wrong_selections(model):
    """The synced comparison's handling of a decoder-1 selection that differs from PyTorch's: a pick swapped at
    the top-k boundary within the tie tolerance makes PyTorch re-run with the demo's selection (and the frame is
    then compared row for row); the same swap outside the tolerance, or a pick swapped for the least confident
    row, is a wrong selection that check_results fails."""
    import copy
    frames = make_frames(REDUCED, 3, seed=1)
    ref = deploy.reference_sequence(model, frames)
    conf = None

    def swapped_at(rank_out, tol):
        # PyTorch's own outputs as the "demo", frame 1's selection with its last pick exchanged for the row of
        # confidence rank `rank_out` (0 = most confident) among those left out
        nonlocal conf
        got = copy.deepcopy(ref)
        sel = got[1]["selected_index"][0]
        if conf is None:
            ins = deploy.Sparse4DTracker(model)
            ins.cached = tuple(torch.as_tensor(ref[0][k]) for k in ("cached_feature", "cached_anchor",
                                                                    "cached_confidence"))
            ins.prev_time, ins.prev_T = frames[0]["timestamp"], frames[0]["T_global"]
            fm = model.extract_feat(torch.as_tensor(frames[1]["img"]))
            _, head_ins = ins.head_inputs(frames[1], fm)
            conf = deploy._with_selection(model, head_ins, None)[1].double().numpy()
        picked = sel[np.argsort(conf[sel])]  # ascending confidence
        left = np.setdiff1d(np.arange(conf.size), sel)
        left = left[np.argsort(-conf[left])]  # descending
        new = np.sort(np.concatenate([np.setdiff1d(sel, [picked[0]]), [left[rank_out]]]))
        got[1]["selected_index"] = new[None].astype(sel.dtype)
        return deploy.synced_comparison(model, frames, got, "cpu", tol), conf[picked[0]] - conf[left[rank_out]]

    with torch.no_grad():
        res, margin = swapped_at(0, 1.0)  # the boundary pair: within a tolerance of the whole range
        assert margin >= 0
        assert res["synced_picks"][1] == {"swapped": 1, "gap": pytest.approx(margin)} and res["bad_picks"][1] is None
        assert res["excluded_rows"][1] == 0  # PyTorch ran with the demo's selection: every row compared
        res, _ = swapped_at(0, 0.0)  # the same swap, no tolerance: a wrong selection
        assert res["bad_picks"][1]["swapped"] == 1 and res["excluded_rows"][1] == 1
        assert any("no top-k" in f for f in driver.check_results({"synced": res}, "fp32"))
        res, _ = swapped_at(-1, deploy.TIE_TOLERANCE["fp32"])  # the least confident row: wrong at any sane tolerance
        assert res["bad_picks"][1] is not None and res["synced_picks"][1] is None


def _head_first_inputs(model):
    return {k: v.clone() for k, v in deploy.example_inputs(model)["head_first"].items()}


def _behind_cameras(proj):
    """The rig turned around: every camera looks backwards (all anchors are in front of the car)."""
    flip = np.diag([-1.0, -1.0, 1.0, 1.0]).astype(np.float32)  # lidar x, y negated: front <-> back
    return proj @ flip


@pytest.mark.parametrize("case", ["behind", "outside", "zero_depth", "half_behind"])
def test_bad_camera_matrices(work, model, case):
    """Keypoints behind the cameras or outside the images are masked: finite outputs equal to PyTorch, and
    where no keypoint is valid the outputs do not depend on the features at all (NaN features included)."""
    engine = opforge.Engine.load(str(work["dir"] / "plans" / "head_first_fp32.plan"))
    ins = _head_first_inputs(model)
    proj = ins["projection_mat"].numpy()
    if case == "behind":
        proj = _behind_cameras(proj)
    elif case == "outside":
        proj = proj.copy()
        proj[..., 0, 3] += 1e6  # principal point far to the right: u >> 1 in front of the camera
    elif case == "zero_depth":
        proj = proj.copy()
        proj[..., 2, :] = 0.0  # every point at depth 0
    else:
        proj = proj.copy()
        proj[..., 2, :] *= np.where(np.arange(4) == 3, 1.0, -1.0).astype(np.float32)  # depth flipped...
        proj[..., 2, 3] += 25.0  # ...and shifted: near points behind, far points in front
    ins["projection_mat"] = torch.from_numpy(np.ascontiguousarray(proj, dtype=np.float32))
    with torch.no_grad():
        from sparse4d_model.head import project_points  # the deployed projection
        want = model.head.forward_first(**ins)
        anchors = model.head.instance_bank.anchor[None]
        kp = model.head.layers[0].kps_generator(anchors, model.head.instance_bank.instance_feature[None])
        uv = project_points(kp, ins["projection_mat"], ins["image_wh"])
    valid = ((uv > 0) & (uv < 1)).all(-1)
    got = engine.run({k: v.numpy() for k, v in ins.items()})
    for name, w in zip(driver.deploy.HEAD_COMPARED, want):
        g = got[name]
        assert np.all(np.isfinite(g)), f"{case}: {name} has non-finite values"
        c = deploy.compare(g, w.numpy())
        assert c["cosine"] >= 0.99999, (case, name, c)
    if case == "half_behind":
        assert 0 < int(valid.sum()) < valid.numel(), "the case should keep some keypoints valid"
        return
    assert int(valid.sum()) == 0, f"{case}: {int(valid.sum())} keypoints still project into the image"
    # No valid keypoint (the first decoder's, checked above; the refined boxes of later decoders stay where they
    # are): the aggregation never reads a feature, so NaN features change nothing.
    nan_feats = dict(ins, feature_maps=torch.full_like(ins["feature_maps"], float("nan")))
    got_nan = engine.run({k: v.numpy() for k, v in nan_feats.items()})
    for name in driver.deploy.HEAD_COMPARED:
        assert np.all(np.isfinite(got_nan[name])), f"{case}: NaN features leaked into {name}"


def test_first_frame_empty_cache_and_stale_cache(work, model, tmp_path):
    """One frame: the first-frame head runs without a cache and fills the bank; a 3 s pause before frame 2 makes
    the later-frame head ignore the stale cache (every instance gets a new id), as Sparse4D's bank does."""
    frames = make_frames(REDUCED, 4, seed=5, gaps=(2,))
    write_frames(frames[:1], str(tmp_path / "one"))
    write_frames(frames, str(tmp_path / "gap"))
    plans = work["dir"] / "plans"
    p = run_demo([f"--plans={plans}", f"--frames={tmp_path / 'one'}", f"--saveOutputs={tmp_path / 'out1'}"])
    assert "frame 0 (first-frame head" in p.stdout and "later-frame head," not in p.stdout.split("latency")[0]
    got = deploy.load_demo_outputs(str(tmp_path / "out1"), 1)
    ref = deploy.reference_sequence(model, frames[:1])
    res = deploy.compare_sequence(ref, got)
    for name, r in res.items():
        if "equal" in r:
            assert r["equal"], name
        else:
            assert r["finite"] and r["cosine"] >= 0.99999, (name, r)
    assert got[0]["cached_feature"].shape == (1, REDUCED.num_temp_instances, REDUCED.embed_dims)
    assert list(got[0]["instance_id"][0]) == list(range(REDUCED.num_anchor))

    run_demo([f"--plans={plans}", f"--frames={tmp_path / 'gap'}", f"--saveOutputs={tmp_path / 'out4'}"])
    got = deploy.load_demo_outputs(str(tmp_path / "out4"), 4)
    ref = deploy.reference_sequence(model, frames)
    res = deploy.compare_sequence(ref, got)
    assert res["instance_id"]["equal"] and res["cached_id"]["equal"]
    for name in deploy.HEAD_COMPARED:
        assert res[name]["cosine"] >= 0.99999, (name, res[name])
    a = REDUCED.num_anchor
    assert got[1]["instance_id"][0, 0] < a  # frame 1 carries instances of frame 0
    assert got[2]["instance_id"].min() >= 2 * a - REDUCED.num_temp_instances  # frame 2: all new (stale cache)
    assert got[3]["instance_id"][0, :REDUCED.num_temp_instances].max() < got[3]["instance_id"][0, -1]


def test_anchor_count_mismatch(work, model, tmp_path):
    """A plan built for other anchor counts than its inputs: the engine names the input and the dimension; the
    demo refuses plans of different anchor counts before running a frame, and frames of another camera count."""
    plans = work["dir"] / "plans"
    engine = opforge.Engine.load(str(plans / "head_later_fp32.plan"))
    ins = {k: v.numpy() for k, v in deploy.example_inputs(model)["head_later"].items()}
    ins["cached_feature"] = np.zeros((1, 20, REDUCED.embed_dims), np.float32)
    ins["cached_anchor"] = np.zeros((1, 20, 11), np.float32)
    with pytest.raises(opforge.OpforgeError) as e:
        engine.run(ins)
    msg = str(e.value)
    assert "cached_feature" in msg and "32" in msg and "20" in msg, msg

    # A later-frame head exported for 40 anchors (24 cached; 2 decoders keep the export short) against the
    # 48-anchor first-frame head.
    other = REDUCED.replace(num_anchor=40, num_temp_instances=24, num_decoder=2, name="other")
    m = build_model(other, seed=0)
    ex = deploy.example_inputs(m)
    path = tmp_path / "head_later_other.onnx"
    opforge.onnx.export(deploy.HeadLaterGraph(m), tuple(ex["head_later"].values()), str(path),
                        input_names=list(ex["head_later"]), output_names=deploy.HEAD_OUTPUTS_LATER,
                        custom_translation_table=deploy.translation_table())
    deploy.opforge_exec(opforge_bin(), plugins(), str(path), str(tmp_path / "head_later_other.plan"))
    p = run_demo([f"--backbone={plans / 'backbone_fp32.plan'}", f"--headFirst={plans / 'head_first_fp32.plan'}",
                  f"--headLater={tmp_path / 'head_later_other.plan'}", f"--frames={work['dir'] / 'frames'}"],
                 expect_ok=False)
    assert p.returncode != 0 and "frame 0" not in p.stdout
    assert "different anchor counts" in p.stderr and "[1, 40, 256]" in p.stderr and "[1, 48, 256]" in p.stderr, p.stderr

    # Frames with two cameras for a one-camera plan.
    frames = make_frames(REDUCED.replace(num_cams=2), 1, seed=3)
    write_frames(frames, str(tmp_path / "two_cams"))
    p = run_demo([f"--plans={plans}", f"--frames={tmp_path / 'two_cams'}"], expect_ok=False)
    assert p.returncode != 0 and "img.npy is [1, 2, 3, 64, 192]" in p.stderr and "[1, 1, 3, 64, 192]" in p.stderr, \
        p.stderr


# ---- official state dicts ----------------------------------------------------------------------------

def official_names(cfg):
    """The parameter names of an official Sparse4Dv3 checkpoint (mmdet ResNet / FPN, Sparse4DHead with layers
    in operation order), spelled out from the official module structure, plus its training-only DenseDepthNet."""
    names = []
    bn = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
    names += ["img_backbone.conv1.weight"] + [f"img_backbone.bn1.{s}" for s in bn]
    for i, n in enumerate(cfg.stage_blocks):
        for j in range(n):
            pre = f"img_backbone.layer{i + 1}.{j}"
            for k in (1, 2, 3):
                names += [f"{pre}.conv{k}.weight"] + [f"{pre}.bn{k}.{s}" for s in bn]
            if j == 0:
                names += [f"{pre}.downsample.0.weight"] + [f"{pre}.downsample.1.{s}" for s in bn]
    for i in range(4):
        for part in ("lateral_convs", "fpn_convs"):
            names += [f"img_neck.{part}.{i}.conv.weight", f"img_neck.{part}.{i}.conv.bias"]
    wb = ("weight", "bias")
    names += ["head.instance_bank.anchor", "head.instance_bank.instance_feature", "head.fc_before.weight",
              "head.fc_after.weight"]
    for enc in ("pos_fc", "size_fc", "yaw_fc", "vel_fc"):  # 4 x (Linear, ReLU, LayerNorm)
        names += [f"head.anchor_encoder.{enc}.{k}.{s}" for k in (0, 2, 3, 5, 6, 8, 9, 11) for s in wb]
    for i, op in enumerate(operation_order(cfg.num_decoder, cfg.num_single_frame_decoder)):
        pre = f"head.layers.{i}"
        if op in ("gnn", "temp_gnn"):
            names += [f"{pre}.attn.in_proj_weight", f"{pre}.attn.in_proj_bias", f"{pre}.attn.out_proj.weight",
                      f"{pre}.attn.out_proj.bias"]
        elif op == "norm":
            names += [f"{pre}.{s}" for s in wb]
        elif op == "ffn":
            names += [f"{pre}.{m}.{s}" for m in ("pre_norm", "layers.0.0", "layers.1", "identity_fc") for s in wb]
        elif op == "deformable":
            names += [f"{pre}.kps_generator.fix_scale"]
            names += [f"{pre}.{m}.{s}" for m in ("kps_generator.learnable_fc", "output_proj", "camera_encoder.0",
                                                  "camera_encoder.2", "camera_encoder.3", "camera_encoder.5",
                                                  "weights_fc") for s in wb]
        elif op == "refine":
            names += [f"{pre}.layers.{k}.{s}" for k in (0, 2, 4, 5, 7, 9, 10) for s in wb] + [f"{pre}.layers.11.scale"]
            names += [f"{pre}.{b}.{k}.{s}" for b in ("cls_layers", "quality_layers") for k in (0, 2, 3, 5, 6)
                      for s in wb]
    return names


def test_official_state_dict_loader(threads):
    cfg = REDUCED
    model = build_model(cfg, seed=0)
    own = model.state_dict()
    names = official_names(cfg)
    assert len(names) == len(set(names))
    missing_in_model = [n for n in names if n not in own]
    assert not missing_in_model, f"official names the model does not have: {missing_in_model[:10]}"
    assert sorted(own) == sorted(names), f"model names that are not official: {sorted(set(own) - set(names))[:10]}"
    g = torch.Generator().manual_seed(7)
    sd = {}
    for n in names:
        t = own[n]
        sd[n] = (torch.randint(0, 100, t.shape, generator=g) if t.dtype == torch.int64
                 else torch.randn(t.shape, generator=g).abs() + 0.5 if "running_var" in n
                 else torch.randn(t.shape, generator=g) * 0.1)
    sd["depth_branch.depth_layers.0.weight"] = torch.randn(1, 256, 1, 1)  # training-only part: ignored
    ckpt = {"meta": {}, "state_dict": {"module." + k: v for k, v in sd.items()}}  # mmcv/DDP wrapping
    fresh = build_model(cfg, seed=1)
    info = load_official_state_dict(fresh, ckpt)
    assert info["loaded"] == len(names) and info["ignored"] == ["depth_branch.depth_layers.0.weight"]
    after = fresh.state_dict()
    for n in names:
        assert torch.equal(after[n], sd[n].to(after[n].dtype)), n
    # The loaded weights are the ones used: the head's output changes with them, and equals a model built from
    # the same tensors by PyTorch's own load_state_dict.
    ref = build_model(cfg, seed=2)
    ref.load_state_dict({k: v for k, v in sd.items() if not k.startswith("depth_branch")})
    ins = deploy.example_inputs(model)["head_first"]
    with torch.no_grad():
        a, b, c = fresh.head.forward_first(**ins), ref.head.forward_first(**ins), model.head.forward_first(**ins)
    assert torch.equal(a[1], b[1]) and not torch.allclose(a[1], c[1])
    # Errors name what is wrong.
    bad = dict(sd)
    del bad["head.layers.4.attn.in_proj_weight"]
    bad["head.layers.99.weight"] = torch.zeros(3)
    with pytest.raises(KeyError) as e:
        load_official_state_dict(build_model(cfg, 0), bad)
    assert "head.layers.4.attn.in_proj_weight" in str(e.value) and "head.layers.99.weight" in str(e.value)
    full = dict(sd)
    full["head.instance_bank.anchor"] = torch.zeros(900, 11)  # a checkpoint of the published 900 anchors
    with pytest.raises(ValueError) as e:
        load_official_state_dict(build_model(cfg, 0), full)
    assert "head.instance_bank.anchor: checkpoint [900, 11], model [48, 11]" in str(e.value)
