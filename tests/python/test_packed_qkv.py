"""Q, K and V read as the thirds of one packed projection (FusedAttention layout bs3e), on public architectures
exported by PyTorch's TorchScript exporter, built and run on the CPU and compared with PyTorch:

- BERT (transformers): the three Q / K / V projections of each layer merged into one GEMM (packed_qkv);
- GPT-2 (transformers): c_attn's Split into Q / K / V read in place (packed_qkv);
- ViT (torchvision, batch-first nn.MultiheadAttention): the Transposes around each attention folded
  (mha_batch_first).

The log's pass counters say each rewrite happened once per layer; the outputs must still match PyTorch."""
import re
import subprocess

import numpy as np
import pytest

from conftest import opforge_bin

torch = pytest.importorskip("torch")


def _run(tmp_path, model, inputs, names, dynamic_axes, shapes, dynamo=False):
    """Exports `model` (TorchScript with `dynamic_axes`, or the dynamo exporter at opset 18), runs it with
    `opforge exec` on the CPU; returns opforge's output, PyTorch's and opforge's log."""
    onnx_path = tmp_path / "m.onnx"
    if dynamo:
        torch.onnx.export(model, tuple(inputs), str(onnx_path), input_names=names, output_names=["y"],
                          opset_version=18, dynamo=True, external_data=False)
    else:
        torch.onnx.export(model, tuple(inputs), str(onnx_path), input_names=names, output_names=["y"],
                          dynamic_axes=dynamic_axes, opset_version=17, dynamo=False)
    load = []
    for n, x in zip(names, inputs):
        np.save(tmp_path / f"{n}.npy", x.numpy())
        load.append(f"{n}:{tmp_path / (n + '.npy')}")
    out = tmp_path / "out"
    out.mkdir()
    cmd = [opforge_bin(), "exec", f"--onnx={onnx_path}", "--device=cpu", "--noTF32", f"--loadInputs={','.join(load)}",
           f"--saveOutputs={out}", "--iterations=1", "--warmUp=0", "--duration=0"]
    if shapes:
        cmd.append(f"--shapes={shapes}")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-3000:]
    with torch.no_grad():
        want = model(*inputs)
    return np.load(out / "y.npy"), want.numpy(), log


def _count(log, what):
    m = re.search(r"(\d+) " + re.escape(what), log)
    return int(m.group(1)) if m else 0


class _Hidden(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask)[0]


def _text(batch=2, seq=12, vocab=100):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[1, seq - 4:] = 0  # padding in the second sequence
    return ids, mask


TEXT_AXES = {"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"}}


def test_bert_projections_merge_into_one_gemm(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=128, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    m = _Hidden(transformers.BertModel(cfg, add_pooling_layer=False)).eval()
    ids, mask = _text()
    got, want, log = _run(tmp_path, m, [ids, mask], ["input_ids", "attention_mask"], TEXT_AXES, None)
    assert _count(log, "Q/K/V projections merged into one GEMM") == 2, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_gpt2_split_is_read_in_place(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=64, n_layer=2, n_head=4, resid_pdrop=0.0,
                                  embd_pdrop=0.0, attn_pdrop=0.0)
    m = _Hidden(transformers.GPT2Model(cfg)).eval()
    ids, mask = _text()
    try:
        got, want, log = _run(tmp_path, m, [ids, mask], ["input_ids", "attention_mask"], TEXT_AXES, None)
    except torch.onnx.errors.OnnxExporterError as e:  # noqa: F841 - PyTorch's exporter, not opforge
        pytest.skip(f"PyTorch's TorchScript exporter fails on GPT-2: {e}")
    assert _count(log, "Q/K/V split read in place") == 2, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_vit_batch_first_transposes_fold(tmp_path):
    pytest.importorskip("torchvision")
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                          num_classes=10).eval()
    x = torch.randn(3, 3, 32, 32)
    got, want, log = _run(tmp_path, m, [x], ["x"], {"x": {0: "b"}}, None)
    assert _count(log, "attention head split/merge folded") == 2, log[-3000:]
    assert _count(log, "batch-first attention transposes folded") == 2, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_swin_window_attention_reads_the_projection_and_fuses_the_shift_mask(tmp_path):
    """torchvision's Swin: each window attention's packed projection [X, N, 3C] is read in place (bs3e), and the
    shifted blocks' mask, added over a [X / W, W, H, N, N] view of the scores, becomes part of the fused attention's
    bias (windows = W)."""
    pytest.importorskip("torchvision")
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=[7, 7],
                        num_classes=10).eval()
    x = torch.randn(2, 3, 56, 56)
    got, want, log = _run(tmp_path, m, [x], ["x"], {"x": {0: "b"}}, None)
    # 4 blocks; the second of each stage is shifted (stage 2's 7x7 map is one window: shift 0, no mask)
    assert _count(log, "shifted-window masks fused") == 1, log[-3000:]
    assert _count(log, "windowed Q/K/V read in place") == 4, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)


def test_gpt2_dynamo_export_fuses_like_the_torchscript_one(tmp_path):
    """GPT-2 as PyTorch's dynamo exporter writes it (what bench/models/public.py times: TorchScript's fails on
    aten::diff): K^T as a Transpose of a [B*H, S, d] view (transpose_views makes it one 4-D Transpose, so the
    attention reads the head split in place and c_attn's Split as bs3e), and the tanh GELU after c_fc's addmm
    viewed back to 3-D fused into the GEMM."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("onnxscript")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=64, n_layer=2, n_head=4, use_cache=False)

    class Ids(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = transformers.GPT2Model(cfg)

        def forward(self, input_ids):
            return self.m(input_ids=input_ids).last_hidden_state

    m = Ids().eval()
    ids = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(1))
    got, want, log = _run(tmp_path, m, [ids], ["input_ids"], None, None, dynamo=True)
    assert _count(log, "transposes of merged-axis views made one Transpose") == 2, log[-3000:]
    assert _count(log, "Q/K/V split read in place") == 2, log[-3000:]
    assert _count(log, "activations after a view fused into the GEMM") == 2, log[-3000:]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
