"""FP8 (E4M3FN, E5M2) conversions against ml_dtypes, the float8 implementation ONNX's reference
uses: a Cast FLOAT -> FLOAT8 -> FLOAT model run by opforge on the CPU, saturating and not, over every
FP8 value, every midpoint between neighbours (the ties that round to even), values just off them,
the subnormal range, values past the largest finite one, and infinities and NaN. Exact agreement is
required (NaN with NaN)."""
import numpy as np
import pytest

from conftest import opforge_bin, run

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper  # noqa: E402

TYPES = {"e4m3": (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
         "e5m2": (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2)}


def _inputs(np_type):
    codes = np.arange(256, dtype=np.uint8).view(np_type).astype(np.float32)
    finite = np.unique(codes[np.isfinite(codes)])
    mids = (finite[:-1].astype(np.float64) + finite[1:]) / 2
    off = np.concatenate([mids * (1 + 1e-6), mids * (1 - 1e-6)])
    big = float(ml_dtypes.finfo(np_type).max)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, big * 1.03, big * 1.2, -big * 1.5, 1e30, -1e-30,
                float(ml_dtypes.finfo(np_type).smallest_subnormal) / 3]
    rng = np.random.default_rng(0)
    rand = rng.standard_normal(4000) * np.exp(rng.uniform(-12, 12, 4000))
    return np.concatenate([finite, mids, off, specials, rand]).astype(np.float32)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("kind", sorted(TYPES))
def test_fp8_round_trip_matches_ml_dtypes(kind, saturate, tmp_path):
    onnx_type, np_type = TYPES[kind]
    x = _inputs(np_type)
    g = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["q"], to=onnx_type, saturate=saturate),
         helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
        "fp8", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [x.size])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    path = tmp_path / "fp8.onnx"
    onnx.save(m, str(path))
    np.save(tmp_path / "x.npy", x)
    run([opforge_bin(), "exec", f"--onnx={path}", "--device=cpu", f"--loadInputs=x:{tmp_path / 'x.npy'}",
         f"--saveOutputs={tmp_path}", "--iterations=1", "--warmUp=0", "--duration=0"])
    got = np.load(tmp_path / "y.npy")
    if saturate:
        want = onnx.numpy_helper.saturate_cast(x, np_type).astype(np.float32)
    else:
        want = x.astype(np_type).astype(np.float32)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (f"{bad.size} of {x.size} differ, e.g. x={x[bad[:5]]}: opforge {got[bad[:5]]}, "
                           f"ml_dtypes {want[bad[:5]]}")
    # Signs of zeros survive too.
    zeros = (want == 0) & ~np.isnan(want)
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
