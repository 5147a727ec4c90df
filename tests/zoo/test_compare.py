"""The zoo's criteria for detection outputs (run_zoo.compare_detections), on made-up detections:
FP32 holds every mask pixel and 98 % of the matched keypoints to their tolerance; with --fp16,
90 % of the matched keypoints must be within 5 % of the largest coordinate and each matched mask's
mean error within 5 %. No model is built: these run in CI in a second."""
import numpy as np
import pytest

import run_zoo

TOL = (1e-3, 1e-3)


def detections(n=10, k=17, seed=0):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 100, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(10, 28, (n, 2))], axis=1).astype(np.float32)
    scores = np.sort(rng.uniform(0.2, 0.9, n))[::-1].astype(np.float32)
    labels = np.ones(n, np.int64)
    points = np.concatenate([rng.uniform(0, 128, (n, k, 2)), np.ones((n, k, 1))], axis=2).astype(np.float32)
    masks = rng.uniform(0, 1, (n, 1, 32, 32)).astype(np.float32)
    return boxes, scores, labels, points, masks


@pytest.fixture(params=["fp32", "fp16"])
def precision(request, monkeypatch):
    monkeypatch.setenv("OPFORGE_ZOO_FP16", "1" if request.param == "fp16" else "0")
    monkeypatch.setenv("OPFORGE_ZOO_TF32", "0")
    return request.param


def test_equal_detections_pass(precision):
    b, s, l, p, m = detections()
    for extra in (p, m):
        assert run_zoo.compare_detections([b, s, l, extra], [b, s, l, extra], TOL)["ok"]


def test_one_keypoint_moved_passes_four_fail_fp32_only(precision):
    b, s, l, p, _ = detections()
    got = p.copy()
    got[6, 3, 0] += 4.9  # one keypoint of 170 (0.6 %), as a heatmap tie moved one in FP32 and FP16
    r = run_zoo.compare_detections([b, s, l, got], [b, s, l, p], TOL)
    assert r["ok"], r
    got[1:4, 5, 1] += 6.0  # four of 170 (2.4 %): more than FP32's 2 %, within FP16's 10 %
    r = run_zoo.compare_detections([b, s, l, got], [b, s, l, p], TOL)
    assert r["ok"] == (precision == "fp16"), r
    assert r["ok"] or "4 of 170 beyond" in r["detail"], r


def test_many_keypoints_moved_fail(precision):
    b, s, l, p, _ = detections()
    got = p.copy()
    got[:, :4, 1] += 20.0  # 40 of 170 keypoints (24 %), well past 5 % of 128 px
    r = run_zoo.compare_detections([b, s, l, got], [b, s, l, p], TOL)
    assert not r["ok"] and "keypoints" in r["note"], r


def test_mask_edges_pass_fp16_a_wrong_mask_fails(precision):
    b, s, l, _, m = detections()
    edge = m.copy()
    edge[2, 0, :, 0] = 1 - edge[2, 0, :, 0]  # one column of one mask: a box moved by a pixel
    r = run_zoo.compare_detections([b, s, l, edge], [b, s, l, m], TOL)
    assert r["ok"] == (precision == "fp16"), r
    wrong = m.copy()
    wrong[2] = 1 - wrong[2]  # a whole mask inverted
    r = run_zoo.compare_detections([b, s, l, wrong], [b, s, l, m], TOL)
    assert not r["ok"] and "mask" in r["note"], r


def test_scores_and_boxes_use_the_fp16_scale(precision):
    b, s, l, p, _ = detections()
    got_s = s + 0.01  # 1.1 % of the top score: past FP32's 1e-3, within FP16's 5 %
    r = run_zoo.compare_detections([b, got_s, l, p], [b, s, l, p], TOL)
    assert r["ok"] == (precision == "fp16"), r
    got_b = b.copy()
    got_b[0] += 30.0  # a box 30 px off matches nothing in either precision
    r = run_zoo.compare_detections([got_b, s, l, p], [b, s, l, p], TOL)
    assert not r["ok"], r
