"""run_zoo's check of a dynamic-batch plan at batch 1 and its referee. The zoo compares the plan's batch-1 output
with the first sample of PyTorch's example batch; a model that mixes the samples of a batch (timm 1.0.29's GCViT
did) has another batch-1 output, and ONNX Runtime at batch 1 on the same file says so: the case is then an
export mismatch, not WRONG. Two made-up harness models (not zoo entries), exported, built and run on the CPU in
a few seconds each."""
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import torch  # noqa: E402
from torch import nn  # noqa: E402

import models  # noqa: E402
import run_zoo  # noqa: E402


class _MixesSamples(nn.Module):
    def forward(self, x):
        return x - x.mean(0, keepdim=True)  # each sample depends on the others


class _PerSample(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2 - 1


def _mixes():
    torch.manual_seed(0)
    return _MixesSamples().eval(), {"x": torch.randn(2, 5)}


def _per_sample():
    torch.manual_seed(0)
    return _PerSample().eval(), {"x": torch.randn(2, 5)}


def _entry(name, build):
    return models.Entry(name, "harness", "test", build, {"x": {0: "batch"}}, {"batch": (1, 4)}, (1e-5, 1e-5))


@pytest.mark.parametrize("name,build,status", [("mixes_samples", _mixes, "export mismatch"),
                                               ("per_sample", _per_sample, "pass")])
def test_batch_one_is_refereed_by_onnx_runtime(tmp_path, name, build, status):
    r = run_zoo.run_case(_entry(name, build), "torchscript", cache=tmp_path / "cache", iterations=1,
                         time_ort=False, log=lambda *a: None, work=tmp_path)
    assert r["status"] == status, r
    if status == "export mismatch":
        assert "batch 1" in r["message"], r["message"]
        assert r["batch1_max_abs"] > 0.01
    else:
        assert r["batch1_max_abs"] <= 1e-5
