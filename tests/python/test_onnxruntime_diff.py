"""Differential tests: PyTorch models exported to ONNX, run by opforge (CPU) and by ONNX Runtime
(CPU) on the same random inputs at two batch sizes of one plan (dynamic batch).

Exporters: the TorchScript exporter (torch.onnx.export(dynamo=False), opset 17, exporter constant
folding off so the files keep BatchNormalization and the dynamic-shape arithmetic) and the
dynamo exporter (dynamo=True, opset 18).

Tolerances (FP32, |opforge - ort| <= atol + rtol * |ort|), written per model: the kernels sum in
another order than ONNX Runtime (OpenBLAS sgemm, im2col convolution, double accumulation in
normalizations), so deep or wide reductions get looser bounds than elementwise work.
"""
import os

import numpy as np
import pytest

from conftest import build_plan, run_plan

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
import models  # noqa: E402  (needs torch)

TOLERANCES = {
    # name: (atol, rtol). Observed max |diff| when written (both exporters, batches 1 and 5):
    # resnet 1.3e-7 (logits ~0.3), fpn 1.9e-6 (outputs ~3), mlp 3.7e-8 (probabilities),
    # transformer 1.2e-6 (outputs ~4). The bounds leave about 10x room.
    "resnet": (2e-6, 1e-4),       # 9 convolutions (BatchNorm folded into them by opforge)
    "fpn": (2e-5, 1e-4),          # convolutions + nearest / bilinear resize
    "mlp": (5e-7, 1e-5),          # softmax probabilities in [0, 1]
    "transformer": (2e-5, 1e-4),  # attention + layer norms
}
# The same models on CUDA plans (cuDNN convolutions, cuBLASLt GEMMs, GPU reductions): the order of
# summation differs from ONNX Runtime's, so the bounds are wider; FP32 math throughout (no TF32).
# They passed on the H200 (bench/results/gpu_tests_h200.md); the observed differences were not
# recorded there yet (the test prints them: pytest -s).
CUDA_TOLERANCES = {
    "resnet": (2e-5, 1e-3),
    "fpn": (1e-4, 1e-3),
    "mlp": (5e-6, 1e-4),
    "transformer": (1e-4, 1e-3),
}
BATCHES = (1, 5)

HAVE_CUDA = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu,
                                              pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device")])]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("diff")


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", models.MODELS)
@pytest.mark.parametrize("device", DEVICES)
def test_matches_onnxruntime(name, dynamo, device, workdir):
    tag = f"{name}_{'dynamo' if dynamo else 'ts'}_{device}"
    onnx_path = str(workdir / f"{tag}.onnx")
    plan_path = str(workdir / f"{tag}.plan")
    names, shapes = models.export(name, onnx_path, dynamo=dynamo)
    build_plan(onnx_path, plan_path, names, shapes, 1, 4, 8, device=device)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
    atol, rtol = (CUDA_TOLERANCES if device == "cuda" else TOLERANCES)[name]
    rng = np.random.default_rng(7)
    for batch in BATCHES:
        feeds = {n: rng.standard_normal((batch, *s)).astype(np.float32) for n, s in zip(names, shapes)}
        want = sess.run(["y"], feeds)[0]
        got, _ = run_plan(plan_path, feeds, str(workdir / f"{tag}_b{batch}"))
        y = got["y"]
        assert y.shape == want.shape, f"{tag} batch {batch}: shape {y.shape}, ONNX Runtime {want.shape}"
        assert y.dtype == want.dtype
        assert np.all(np.isfinite(y)), f"{tag} batch {batch}: non-finite output"
        err = np.abs(y - want)
        bound = atol + rtol * np.abs(want)
        worst = np.unravel_index(np.argmax(err - bound), err.shape)
        print(f"{tag} batch {batch}: max |diff| {err.max():.3g}")
        assert np.all(err <= bound), (f"{tag} batch {batch}: max |diff| {err.max():.3g} (at {worst}: {y[worst]} vs "
                                      f"{want[worst]}) exceeds atol {atol} + rtol {rtol}")


def test_plan_has_batchnorm_folded(workdir):
    """The ResNet export keeps BatchNormalization nodes; opforge folds every one into its Conv."""
    onnx_path = str(workdir / "resnet_fold.onnx")
    names, shapes = models.export("resnet", onnx_path)
    import onnx
    kinds = [n.op_type for n in onnx.load(onnx_path).graph.node]
    assert kinds.count("BatchNormalization") == 9
    res = build_plan(onnx_path, str(workdir / "resnet_fold.plan"), names, shapes, 1, 2, 4)
    assert "9 BatchNormalization folded into Conv" in res.stdout, res.stdout
