"""GridSample far outside the image and at non-finite coordinates, against PyTorch's grid_sample
(the op the exports come from). ONNX Runtime 1.30 is no referee there: for (1e30, 1e30) with
zeros padding it gives 0.25 (PyTorch 0), for +inf with border padding the first pixel (PyTorch the
last), for a NaN coordinate a finite value. Deformable DETR's TorchScript export feeds NaN
coordinates: its linspace over a 1-pixel level computes 0 / 0, so opforge's plan gives NaN where
PyTorch eager (which never computes that NaN) is finite.

Checked here: every mode x padding on far finite coordinates (+-7.3, +-50; +-1e30 but under
reflection, whose mirror image of 1e30 is rounding noise) and points inside, within 1e-5 of PyTorch
(FP32 interpolation of values 1..48); infinities: 0 (zeros) or the edge (border) as PyTorch's nearest
mode gives; NaN: NaN in every mode (PyTorch: NaN for bilinear and bicubic; nearest's 0 and border's
values come from casting NaN to an integer, which opforge does not do). CPU plans, and CUDA plans
where there is a GPU."""
import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper

from conftest import build_plan, run_plan

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
FAR = [(7.3, 0.1), (-7.3, 0.4), (0.2, 50.0), (-50.0, -50.0), (1e30, 1e30), (-1e30, 0.3),
       (0.1, -0.3), (0.7, 0.9), (-0.95, 0.99)]
TORCH_MODE = {"linear": "bilinear", "nearest": "nearest", "cubic": "bicubic"}

HAVE_CUDA = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu,
                                              pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device")])]
CASES = [(m, p) for m in ("linear", "nearest", "cubic") for p in ("zeros", "border", "reflection")]


def _plan(tmp_path, mode, pad, points, device):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2, 4, 6])
    g = helper.make_tensor_value_info("grid", TensorProto.FLOAT, ["n", 1, points, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=0)
    m = helper.make_model(helper.make_graph([node], "gs", [x, g], [y]), opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    path, plan = str(tmp_path / "gs.onnx"), str(tmp_path / "gs.plan")
    onnx.save(m, path)
    build_plan(path, plan, ["x", "grid"], [(2, 4, 6), (1, points, 2)], 1, 2, 2, device=device)
    return plan


def _image():
    return np.arange(2 * 2 * 4 * 6, dtype=np.float32).reshape(2, 2, 4, 6) + 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode,pad", CASES)
def test_far_coordinates_match_pytorch(tmp_path, mode, pad, device):
    pts = [p for p in FAR if pad != "reflection" or abs(p[0]) < 1e29]
    plan = _plan(tmp_path, mode, pad, len(pts), device)
    x = _image()
    grid = np.array([pts, pts[::-1]], dtype=np.float32).reshape(2, 1, len(pts), 2)
    want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode=TORCH_MODE[mode],
                                           padding_mode=pad, align_corners=False).numpy()
    outs, _ = run_plan(plan, {"x": x, "grid": grid}, str(tmp_path / "out"))
    np.testing.assert_allclose(outs["y"], want, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode,pad", CASES)
def test_non_finite_coordinates(tmp_path, mode, pad, device):
    pts = [(NAN, 0.0), (0.0, NAN), (INF, INF), (-INF, -INF), (0.5, 0.5)]
    plan = _plan(tmp_path, mode, pad, len(pts), device)
    x = _image()
    grid = np.array([pts, pts], dtype=np.float32).reshape(2, 1, len(pts), 2)
    y = run_plan(plan, {"x": x, "grid": grid}, str(tmp_path / "out"))[0]["y"]
    assert np.isnan(y[..., :2]).all()
    if pad == "reflection":
        assert np.isnan(y[..., 2:4]).all()  # no mirror image of an infinity
    else:
        # The limits: outside (0) with zeros padding; the last / first pixel with border padding
        # (PyTorch's nearest mode gives the same values).
        want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode="nearest",
                                               padding_mode=pad, align_corners=False).numpy()
        np.testing.assert_allclose(y[..., 2:4], want[..., 2:4], atol=1e-5, rtol=1e-5)
    assert np.isfinite(y[..., 4]).all()
