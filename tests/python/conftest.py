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
