"""ConvNeXt's residual stream kept channels-last (transpose_sinking), on torchvision's ConvNeXt
(a small configuration, random weights) exported by PyTorch's TorchScript exporter, built and run
on the CPU and compared with PyTorch.

Each block permutes its [N, H, W, C] result back to [N, C, H, W] before the residual Add; the pass
moves that permutation below the Add, where it meets the next block's and the downsample's
(0, 2, 3, 1) and they cancel. The log's counters say how often; the output must still match."""
import re
import subprocess

import numpy as np
import pytest

from conftest import opforge_bin

torch = pytest.importorskip("torch")
tv = pytest.importorskip("torchvision")


def _count(log, what):
    m = re.search(r"(\d+) " + re.escape(what), log)
    return int(m.group(1)) if m else 0


def test_convnext_residual_stream_stays_channels_last(tmp_path):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    torch.manual_seed(0)
    stages = [CNBlockConfig(16, 32, 2), CNBlockConfig(32, 64, 3), CNBlockConfig(64, None, 2)]
    m = ConvNeXt(stages, num_classes=10).eval()
    x = torch.randn(2, 3, 64, 64)
    onnx_path = tmp_path / "m.onnx"
    torch.onnx.export(m, (x,), str(onnx_path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamo=False)
    np.save(tmp_path / "x.npy", x.numpy())
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([opforge_bin(), "exec", f"--onnx={onnx_path}", "--device=cpu", "--noTF32",
                        f"--loadInputs=x:{tmp_path / 'x.npy'}", f"--saveOutputs={out}", "--iterations=1",
                        "--warmUp=0", "--duration=0", f"--saveEngine={tmp_path / 'm.plan'}"],
                       capture_output=True, text=True, timeout=600)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-3000:]
    with torch.no_grad():
        want = m(x).numpy()
    np.testing.assert_allclose(np.load(out / "y.npy"), want, rtol=1e-4, atol=1e-4)
    blocks = sum(s.num_layers for s in stages)
    # The first block of stages 2 and 3 adds a Transpose to a downsample convolution's output:
    # moved below the Add; every other block (the first one's input is the stem's LayerNorm2d,
    # permuted back) adds two Transposes alike.
    assert _count(log, "Transposes moved below a residual Add") == len(stages) - 1, log[-2000:]
    assert _count(log, "Transposes of both operands moved below them") == blocks - (len(stages) - 1), log[-2000:]
    # The downsamples' (0, 2, 3, 1) meet the stream's (0, 3, 1, 2): identity, dropped.
    assert _count(log, "identity Transposes dropped") >= len(stages) - 1, log[-2000:]
