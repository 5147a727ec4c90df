"""ConvNeXt's residual stream kept channels-last (transpose_sinking), on torchvision's ConvNeXt
(a small configuration, random weights) exported by PyTorch's TorchScript exporter, built and run
on the CPU and compared with PyTorch.

Each block permutes its [N, H, W, C] result back to [N, C, H, W] before the residual Add; the pass
moves that permutation below the Add, where it meets the next block's and the downsample's
(0, 2, 3, 1) and they cancel. The log's counters say how often; the output must still match."""
import re

import numpy as np
import pytest

from conftest import export_and_exec

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
    got, want, log = export_and_exec(tmp_path, m, x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    blocks = sum(s.num_layers for s in stages)
    # The first block of stages 2 and 3 adds a Transpose to a downsample convolution's output:
    # moved below the Add; every other block (the first one's input is the stem's LayerNorm2d,
    # permuted back) adds two Transposes alike.
    assert _count(log, "Transposes moved below a residual Add") == len(stages) - 1, log[-2000:]
    assert _count(log, "Transposes of both operands moved below them") == blocks - (len(stages) - 1), log[-2000:]
    # Each block's residual Add, now of two [N, H, W, C] tensors, is fc2's residual (gemm_residual),
    # but the last of stages 1 and 2, whose sum the downsample's LayerNorm reads once the
    # permutations cancel: Add + LayerNormalization in one kernel there.
    assert _count(log, "residual Adds fused into a GEMM") == blocks - (len(stages) - 1), log[-2000:]
    assert _count(log, "Add + LayerNormalization fused") == len(stages) - 1, log[-2000:]
    # The downsamples' (0, 2, 3, 1) meet the stream's (0, 3, 1, 2): identity, dropped.
    assert _count(log, "identity Transposes dropped") >= len(stages) - 1, log[-2000:]
