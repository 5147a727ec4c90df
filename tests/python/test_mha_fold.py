"""nn.MultiheadAttention's head split and merge, as PyTorch's TorchScript exporter writes them, fold into one
FusedAttention (layout sb3e) at any sequence length: here torchvision's VisionTransformer at 224 px (S = 197, the
length of ViT-B/16) with one small layer, built and run on the CPU and compared with PyTorch."""
import re

import numpy as np
import pytest

from conftest import export_and_exec

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")


# (224, 2, 128): S = 197 and d = 64 as in ViT-B/16 (K and V beyond the 48 KiB the fold once required).
@pytest.mark.parametrize("image,heads,hidden", [(224, 2, 128), (32, 2, 32)])
def test_vit_attention_reads_the_packed_projection_in_place(tmp_path, image, heads, hidden):
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    m = VisionTransformer(image_size=image, patch_size=16, num_layers=1, num_heads=heads, hidden_dim=hidden,
                          mlp_dim=2 * hidden, num_classes=10).eval()
    x = torch.randn(2, 3, image, image)
    got, want, log = export_and_exec(tmp_path, m, x)
    folded = re.search(r"(\d+) attention head split/merge folded", log)
    assert folded and int(folded.group(1)) == 1, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
