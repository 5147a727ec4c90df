"""Shared helpers of the Python tests: where the opforge build is, and running `opforge exec`."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def build_dir():
    d = os.environ.get("OPFORGE_BUILD_DIR") or os.environ.get("BUILD_DIR") or str(ROOT / "build")
    return pathlib.Path(d)


def opforge_bin():
    exe = build_dir() / "bin" / "opforge"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build opforge first (scripts/build.sh; BUILD_DIR selects the build folder)")
    return str(exe)


def run(cmd, **kw):
    """Runs a command; a failure shows its output."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise AssertionError(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


def dims(shape):
    return "x".join(str(d) for d in shape)


def build_plan(onnx_path, plan_path, names, shapes, batch_min, batch_opt, batch_max, device="cpu", tf32=False):
    """Builds a plan (for `device`: cpu or cuda) whose inputs have a dynamic batch in [batch_min, batch_max].
    FP32 stays FP32 (--noTF32) unless tf32: these tests hold plans to FP32 tolerances."""
    prof = {}
    for flag, b in (("--minShapes", batch_min), ("--optShapes", batch_opt), ("--maxShapes", batch_max)):
        prof[flag] = ",".join(f"{n}:{dims((b, *s))}" for n, s in zip(names, shapes))
    return run([opforge_bin(), "exec", f"--onnx={onnx_path}", f"--saveEngine={plan_path}", "--skipInference", f"--device={device}"] +
               ([] if tf32 else ["--noTF32"]) + [f"{k}={v}" for k, v in prof.items()])


def export_and_exec(tmp_path, model, x):
    """Exports `model` on (x,) with PyTorch's TorchScript exporter at opset 17 (input "x", output "y"),
    runs it with `opforge exec` on the CPU in FP32; returns opforge's y, PyTorch's and opforge's log."""
    import torch
    onnx_path = tmp_path / "m.onnx"
    torch.onnx.export(model, (x,), str(onnx_path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamo=False)
    np.save(tmp_path / "x.npy", x.numpy())
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([opforge_bin(), "exec", f"--onnx={onnx_path}", "--device=cpu", "--noTF32",
                        f"--loadInputs=x:{tmp_path / 'x.npy'}", f"--saveOutputs={out}", "--iterations=1",
                        "--warmUp=0", "--duration=0"], capture_output=True, text=True, timeout=600)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-3000:]
    with torch.no_grad():
        want = model(x).numpy()
    return np.load(out / "y.npy"), want, log


def run_bin():
    exe = build_dir() / "bin" / "opforge-onnx-run"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build opforge first (scripts/build.sh)")
    return str(exe)


def run_plan(plan_path, inputs, out_dir, iterations=1, warmup=0):
    """Runs a plan on named numpy inputs with opforge-onnx-run; returns ({output name: array},
    median latency in ms)."""
    os.makedirs(out_dir, exist_ok=True)
    feeds = []
    for name, arr in inputs.items():
        p = os.path.join(out_dir, f"in_{name}.npy")
        np.save(p, np.asarray(arr, order="C"))  # (ascontiguousarray makes a 0-d array 1-d)
        feeds.append(f"{name}:{p}")
    res = run([run_bin(), plan_path, f"--inputs={','.join(feeds)}", f"--outputs={out_dir}",
               f"--iterations={iterations}", f"--warmup={warmup}"])
    outs = {}
    for f in os.listdir(out_dir):
        if f.endswith(".npy") and not f.startswith("in_"):
            outs[f[:-4]] = np.load(os.path.join(out_dir, f))
    median = float(res.stdout.split("median=")[1].split()[0])
    return outs, median


def pytest_configure(config):
    # Added for the opforge package's tests (tests/python/test_torch_*.py, test_engine_*.py,
    # test_export_*.py): GPU variants carry this marker and skip themselves without CUDA.
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped when torch.cuda.is_available() is False)")
