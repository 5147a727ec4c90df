"""Explicitly quantized zoo models (issue 20, part two): a model's cached export (test_zoo.py fills the
cache), pre-processed and quantized by ONNX Runtime's tools (quant_pre_process, quantize_static in
the QDQ format: per-channel INT8 weights, UINT8 activations, calibrated on the case's input), built
by opforge on the CPU, and compared with ONNX Runtime on the same file.

A case passes when
  - opforge folds every Conv and every MatMul of the quantized file into QLinearConv /
    QLinearMatMul (ONNX Runtime's quantizer puts each between DequantizeLinear and QuantizeLinear),
  - and opforge's outputs equal one of ONNX Runtime's two executions of the file within 1e-5 of the
    output's range (last-bit differences of float ops after the last quantized layer): with its
    graph optimizations (ORT_ENABLE_ALL: integer QLinearConv / QLinearMatMul, and on transformers
    also integer Add, Softmax and Gemm) or without them (ORT_DISABLE_ALL: the Q/DQ chain in float).
    The two differ from each other where a value lands on the other side of a rounding boundary;
    opforge's integer products (requantized in FP32 as ONNX Runtime's integer kernels do) with float
    elementwise ops sit exactly on one or the other.

The weights are quantized with reduce_range on an x86 CPU without VNNI (tests/python/cpu_int8.py:
ONNX Runtime's integer kernels saturate there with full-range weights). Observed (2026-12-06, both
exporters, AVX2 without VNNI, reduce_range): resnet18, mobilenet_v3_small, squeezenet1_1 match
ORT_ENABLE_ALL exactly (max |diff| 0; squeezenet's dynamo export 1.0e-7), bert, gpt2, vit_b_16
ORT_DISABLE_ALL exactly. Before opforge requantized in FP32 (it rounded acc * m + zero point in FP64,
as ONNX's numpy reference does), mobilenet_v3_small's TorchScript export matched neither (1.3 % of
the range): one value of 3072 in features.4 was the FP32 tie 16.5 that FP64 put at 16.50000065,
and the step spread. Left out, with the
reason: raft_small, fcos_resnet50_fpn (ONNX Runtime's two executions differ by 0.92 and 97 too: an
iterative refinement and detection ranking carry a one-step difference far), nf_resnet26 (2-3 % on the logits against
both: its float AveragePool of quantized values puts 6,872 of 32,768 values on a rounding tie of the
next QuantizeLinear; the averages differ in the last bit and 276 round the other way), t5 (ONNX Runtime fails
on its own quantized file: a Gather index of -2^63 + 24). `OPFORGE_ZOO` selects as in test_zoo.py
(ci: the subset below).
"""
import os
import re

import numpy as np
import pytest

pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quant = pytest.importorskip("onnxruntime.quantization")
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402

import models  # noqa: E402
from cpu_int8 import int8_accumulates_exactly  # noqa: E402
import run_zoo  # noqa: E402

QDQ_MODELS = ["resnet18", "mobilenet_v3_small", "squeezenet1_1", "bert", "gpt2", "vit_b_16"]
SELECT = os.environ.get("OPFORGE_ZOO", "ci").strip()


class _Calibration(quant.CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = [feeds]

    def get_next(self):
        return self.feeds.pop() if self.feeds else None


def _ort(path, feeds, level):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = level
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


def _cases():
    for name in QDQ_MODELS:
        for x in run_zoo.EXPORTERS:
            marks = []
            if SELECT not in ("ci", "all") and name not in [p.strip() for p in SELECT.split(",")]:
                marks.append(pytest.mark.skip(reason=f"not selected by OPFORGE_ZOO={SELECT}"))
            yield pytest.param(name, x, marks=marks, id=f"{name}-{x}")


@pytest.mark.parametrize("name,exporter", list(_cases()))
def test_zoo_qdq(name, exporter, tmp_path):
    if run_zoo.device() != "cpu" or run_zoo.fp16():
        pytest.skip("the Q/DQ zoo runs on the CPU in FP32 (ONNX Runtime's CPU provider is the referee)")
    e = models.ZOO[name]
    meta = run_zoo.export_case(e, exporter, log=print)
    if meta["status"] != "ok":
        pytest.skip(f"export failed: {meta.get('message', '')}")
    case_dir = run_zoo.cache_root() / f"{e.name}__{exporter}"
    onnx_names = [i["name"] for i in meta["onnx_inputs"]]
    feeds = {n: np.load(case_dir / f"in_{n}.npy") for n in meta["inputs"] if n in onnx_names}
    pre, q = str(tmp_path / "pre.onnx"), str(tmp_path / "qdq.onnx")
    quant_pre_process(str(case_dir / "model.onnx"), pre, skip_symbolic_shape=True)
    quant.quantize_static(pre, q, _Calibration(dict(feeds)), quant_format=quant.QuantFormat.QDQ, per_channel=True,
                          activation_type=quant.QuantType.QUInt8, weight_type=quant.QuantType.QInt8,
                          reduce_range=not int8_accumulates_exactly())
    nodes = [n.op_type for n in onnx.load(q).graph.node]

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    loads = ",".join(f"{n}:{case_dir / f'in_{n}.npy'}" for n in feeds)
    shapes = ",".join(f"{n}:{run_zoo._dims(a.shape)}" for n, a in feeds.items())
    cmd = [str(run_zoo.opforge_bin()), "exec", f"--onnx={q}", "--device=cpu", "--noTF32", f"--shapes={shapes}",
           f"--loadInputs={loads}", f"--saveOutputs={out_dir}", "--iterations=1", "--warmUp=0", "--duration=0"]
    import subprocess
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=run_zoo.BUILD_TIMEOUT_S,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    log = p.stdout + p.stderr
    for kind, what in (("Conv", "convolutions fused to QLinearConv"), ("MatMul", "matrix products fused to QLinearMatMul")):
        m = re.search(r"(\d+) Q/DQ " + what, log)
        assert (int(m.group(1)) if m else 0) == nodes.count(kind), f"{kind}: {m.group(0) if m else 0} of {nodes.count(kind)}\n{log[-3000:]}"

    got = {}
    for f in os.listdir(out_dir):
        if f.endswith(".npy"):
            got[f[:-4]] = np.load(out_dir / f)
    report = []
    best = None
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        names, wants = _ort(q, feeds, level)
        worst = 0.0
        for n, want in zip(names, wants):
            y = got[run_zoo._sanitize(n)]
            assert y.shape == want.shape, f"output {n}: shape {y.shape}, ONNX Runtime {want.shape}"
            if want.dtype.kind == "f":
                assert np.all(np.isfinite(y) == np.isfinite(want)), f"output {n}: non-finite values differ"
                span = float(np.abs(want[np.isfinite(want)]).max()) if want.size else 0.0
                err = np.abs(y.astype(np.float64) - want)[np.isfinite(want)]
                worst = max(worst, float(err.max()) / max(span, 1e-12) if err.size else 0.0)
            else:
                worst = max(worst, 0.0 if np.array_equal(y, want) else np.inf)
        report.append(f"ONNX Runtime {str(level).split('.')[-1]}: max |diff| / range {worst:.3g}")
        best = worst if best is None else min(best, worst)
    print(f"{name} [{exporter}]: {nodes.count('Conv')} Conv, {nodes.count('MatMul')} MatMul fused; " + "; ".join(report))
    assert best <= 1e-5, f"opforge matches neither of ONNX Runtime's executions: {report}"
