"""The model zoo: public architectures from torchvision, timm and transformers, built from their
constructors / configs with random weights (no hub download), at small sizes where the architecture
stays the same (fewer blocks or layers, small images, short sequences, small hidden sizes).

Each entry gives
  build()   -> (module in eval mode, OrderedDict of example inputs {name: tensor})
  dims      -> dynamic axes: {input name: {axis: dim name}}; the dim names are shared between inputs
               (BERT's input_ids and attention_mask have the same batch and seq)
  ranges    -> {dim name: (min, max)}: the dynamo exporter's Dim bounds and opforge's profile
               (min, example size as opt, max)
  tol       -> FP32 tolerance (atol, rtol): |opforge - eager| <= atol + rtol * |eager| elementwise
  ci        -> part of the CI subset (tests/zoo/test_zoo.py runs only these unless OPFORGE_ZOO=all)

Example inputs use batch 2 (the dynamo exporter specializes a dimension whose example size is 1).
Outputs are flattened to a tuple of tensors by small wrappers, so both exporters see the same
signature. Detection models take one image (torchvision's detectors take a list of images, so
their batch is static: a traced list of length 1).

    python3 tests/zoo/run_zoo.py --list       # every entry
"""
import collections
import inspect
import os
import re

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

BATCH = ("batch", 1, 4)


class Entry:
    def __init__(self, name, family, source, build, dims, ranges, tol, ci=False, note="", compare="allclose"):
        self.name = name
        self.family = family
        self.source = source
        self.build = build
        self.dims = dims
        self.ranges = ranges
        self.tol = tol
        self.ci = ci
        self.note = note
        self.compare = compare  # "allclose", or "detection": boxes/scores/labels matched tie-tolerantly


ZOO = collections.OrderedDict()


def entry(name, family, source, dims=None, ranges=None, tol=(1e-4, 1e-3), ci=False, note="", compare="allclose"):
    def deco(fn):
        ZOO[name] = Entry(name, family, source, fn, dims if dims is not None else {}, ranges or {}, tol, ci, note, compare)
        return fn
    return deco


def _seed():
    torch.manual_seed(0)


def _img(c=3, h=64, w=64, b=2):
    g = torch.Generator().manual_seed(1)
    return torch.randn(b, c, h, w, generator=g)


def _ids(vocab, b=2, s=16, seed=2):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (b, s), generator=g)


def _mask(b=2, s=16):
    m = torch.ones(b, s, dtype=torch.int64)
    m[1, -3:] = 0  # the second sequence is padded
    return m


def _small_bn_scales(m):
    """Each residual branch's last BatchNorm gets a small scale, as in trained ResNets (random deep
    ResNets otherwise amplify every rounding; see examples/sparse4d/init_sensitivity.py)."""
    for block in m.modules():
        if not hasattr(block, "downsample"):
            continue
        bns = [mod for name, mod in block.named_modules() if _is_bn(mod) and not name.startswith("downsample")]
        if bns:
            bns[-1].weight.data.fill_(0.2)
    return m


def _is_bn(mod):
    from torchvision.ops import FrozenBatchNorm2d  # the detectors' backbones use it
    return isinstance(mod, (nn.modules.batchnorm._BatchNorm, FrozenBatchNorm2d))


def _bn_stats(m):
    """Random running statistics, so that BatchNorm is not the identity."""
    g = torch.Generator().manual_seed(3)
    for mod in m.modules():
        if _is_bn(mod):
            mod.running_mean.copy_(torch.randn(mod.running_mean.shape, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) + 0.5)
    return m


IMG = {"x": {0: "batch"}}
IMG_R = {"batch": (1, 4)}
CNN_TOL = (1e-4, 1e-3)


# ---------------------------------------------------------------- classification CNNs (torchvision)
def _tv(fn, **kw):
    import torchvision.models as tvm
    _seed()
    m = getattr(tvm, fn)(weights=None, **kw)
    return m


@entry("resnet18", "cnn", "torchvision", IMG, IMG_R, CNN_TOL, ci=True)
def resnet18():
    return _bn_stats(_small_bn_scales(_tv("resnet18", num_classes=10))).eval(), {"x": _img()}


@entry("resnet50", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def resnet50():
    return _bn_stats(_small_bn_scales(_tv("resnet50", num_classes=10))).eval(), {"x": _img()}


@entry("mobilenet_v3_small", "cnn", "torchvision", IMG, IMG_R, CNN_TOL, ci=True)
def mobilenet_v3_small():
    return _bn_stats(_tv("mobilenet_v3_small", num_classes=10)).eval(), {"x": _img()}


@entry("efficientnet_b0", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def efficientnet_b0():
    return _bn_stats(_tv("efficientnet_b0", num_classes=10)).eval(), {"x": _img()}


@entry("convnext_tiny", "cnn", "torchvision", IMG, IMG_R, CNN_TOL, note="ConvNeXt, 4 stages of 1-2 blocks, widths 32-256")
def convnext_tiny():
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig
    _seed()
    cfg = [CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 1), CNBlockConfig(128, 256, 2), CNBlockConfig(256, None, 1)]
    m = ConvNeXt(cfg, layer_scale=0.5, num_classes=10)  # layer scale 0.5 (1e-6 hides the blocks)
    return m.eval(), {"x": _img()}


@entry("regnet_y_400mf", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def regnet_y_400mf():
    return _bn_stats(_tv("regnet_y_400mf", num_classes=10)).eval(), {"x": _img()}


@entry("densenet121", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def densenet121():
    return _bn_stats(_tv("densenet121", num_classes=10)).eval(), {"x": _img()}


@entry("squeezenet1_1", "cnn", "torchvision", IMG, IMG_R, CNN_TOL, ci=True)
def squeezenet1_1():
    return _tv("squeezenet1_1", num_classes=10).eval(), {"x": _img()}


@entry("shufflenet_v2_x0_5", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def shufflenet_v2_x0_5():
    return _bn_stats(_tv("shufflenet_v2_x0_5", num_classes=10)).eval(), {"x": _img()}


@entry("mnasnet0_5", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def mnasnet0_5():
    return _bn_stats(_tv("mnasnet0_5", num_classes=10)).eval(), {"x": _img()}


@entry("googlenet", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def googlenet():
    m = _tv("googlenet", num_classes=10, aux_logits=False, init_weights=True)
    return _bn_stats(m).eval(), {"x": _img()}


@entry("nf_resnet26", "cnn", "timm", IMG, IMG_R, CNN_TOL,
       ci=True, note="timm NF-ResNet: weight standardization by F.batch_norm(training=True)")
def nf_resnet26():
    import timm
    _seed()
    return timm.create_model("nf_resnet26", pretrained=False, num_classes=10).eval(), {"x": _img()}


@entry("mobilenet_v2", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def mobilenet_v2():
    return _bn_stats(_tv("mobilenet_v2", num_classes=10)).eval(), {"x": _img()}


@entry("efficientnet_v2_s", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def efficientnet_v2_s():
    return _bn_stats(_tv("efficientnet_v2_s", num_classes=10)).eval(), {"x": _img()}


@entry("resnext50_32x4d", "cnn", "torchvision", IMG, IMG_R, CNN_TOL)
def resnext50_32x4d():
    return _bn_stats(_small_bn_scales(_tv("resnext50_32x4d", num_classes=10))).eval(), {"x": _img()}


@entry("vgg11_bn", "cnn", "torchvision", IMG, IMG_R, CNN_TOL,
       note="TorchScript cannot export its AdaptiveAvgPool to 7x7 from 2x2")
def vgg11_bn():
    return _bn_stats(_tv("vgg11_bn", num_classes=10)).eval(), {"x": _img()}


# ---------------------------------------------------------------- vision transformers
VIT_TOL = (2e-4, 2e-3)


@entry("vit_b_16", "vit", "torchvision", IMG, IMG_R, VIT_TOL, ci=True,
       note="torchvision VisionTransformer, 64 px, patch 16, 2 layers, width 64")
def vit_b_16():
    from torchvision.models.vision_transformer import VisionTransformer
    _seed()
    m = VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                          num_classes=10)
    _random_head(m.heads.head)
    return m.eval(), {"x": _img()}


@entry("swin_t", "vit", "torchvision", IMG, IMG_R, VIT_TOL,
       note="torchvision SwinTransformer (swin_t's structure), 112 px, embed 24, depths 2-2-2-2")
def swin_t():
    from torchvision.models.swin_transformer import SwinTransformer
    _seed()
    m = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2, 2, 2], num_heads=[1, 2, 4, 8],
                        window_size=[7, 7], stochastic_depth_prob=0.0, num_classes=10)
    return m.eval(), {"x": _img(h=112, w=112)}


def _random_head(linear, std=0.2):
    """A classifier initialized to zeros (torchvision ViT) or near zero (timm's head_init_scale)
    would hide the whole network: random weights instead."""
    g = torch.Generator().manual_seed(8)
    linear.weight.data = torch.randn(linear.weight.shape, generator=g) * std
    return linear


def _timm(name, **kw):
    import timm
    _seed()
    return timm.create_model(name, pretrained=False, **kw).eval()


@entry("timm_vit_tiny", "vit", "timm", IMG, IMG_R, VIT_TOL, note="vit_tiny_patch16_224 at 64 px, depth 2")
def timm_vit_tiny():
    return _timm("vit_tiny_patch16_224", img_size=64, depth=2, num_classes=10), {"x": _img()}


@entry("timm_deit_tiny_distilled", "vit", "timm", IMG, IMG_R, VIT_TOL, note="deit_tiny_distilled_patch16_224 at 64 px, depth 2")
def timm_deit_tiny_distilled():
    return _timm("deit_tiny_distilled_patch16_224", img_size=64, depth=2, num_classes=10), {"x": _img()}


@entry("timm_eva02_tiny", "vit", "timm", IMG, IMG_R, VIT_TOL, note="eva02_tiny_patch14_224 at 56 px, depth 2 (rotary embeddings, SwiGLU)")
def timm_eva02_tiny():
    m = _timm("eva02_tiny_patch14_224", img_size=56, depth=2, num_classes=10)
    _random_head(m.head)
    return m, {"x": _img(h=56, w=56)}


@entry("swin_v2_t", "vit", "torchvision", IMG, IMG_R, VIT_TOL)
def swin_v2_t():
    return _tv("swin_v2_t", num_classes=10).eval(), {"x": _img()}


@entry("maxvit_t", "vit", "torchvision", {"x": {0: "batch"}}, {"batch": (1, 2)}, VIT_TOL, note="at 224 px, batch 1")
def maxvit_t():
    return _bn_stats(_tv("maxvit_t", num_classes=10)).eval(), {"x": _img(h=224, w=224, b=1)}


@entry("timm_levit_128s", "vit", "timm", IMG, IMG_R, VIT_TOL, note="levit_128s at 224 px")
def timm_levit_128s():
    return _timm("levit_128s", num_classes=10), {"x": _img(h=224, w=224)}


@entry("timm_poolformer_s12", "vit", "timm", IMG, IMG_R, VIT_TOL)
def timm_poolformer_s12():
    return _timm("poolformer_s12", num_classes=10), {"x": _img()}


@entry("timm_mixer_s16", "vit", "timm", IMG, IMG_R, VIT_TOL, note="mixer_s16_224 at 224 px")
def timm_mixer_s16():
    return _timm("mixer_s16_224", num_classes=10), {"x": _img(h=224, w=224)}


@entry("timm_mobilevit_xxs", "vit", "timm", IMG, IMG_R, VIT_TOL, note="at 256 px")
def timm_mobilevit_xxs():
    return _timm("mobilevit_xxs", num_classes=10), {"x": _img(h=256, w=256)}


@entry("timm_cait_xxs24", "vit", "timm", IMG, IMG_R, VIT_TOL, note="cait_xxs24_224 at 224 px")
def timm_cait_xxs24():
    return _timm("cait_xxs24_224", num_classes=10), {"x": _img(h=224, w=224)}


@entry("timm_gcvit_xxtiny", "vit", "timm", IMG, IMG_R, VIT_TOL,
       note="gcvit_xxtiny at 224 px (global query tokens repeated per window: Tile of (B * windows) // B)")
def timm_gcvit_xxtiny():
    return _timm("gcvit_xxtiny", num_classes=10), {"x": _img(h=224, w=224)}


# ---------------------------------------------------------------- detection and segmentation
DET_TOL = (1e-3, 1e-3)


class _Detector(nn.Module):
    """torchvision detector on one image; returns boxes, scores, labels of that image."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m([x[0]])[0]
        return out["boxes"], out["scores"], out["labels"]


def _spread_scores(m, std, bias=None):
    """The detectors initialize their classification (and objectness) layers with std 0.01, so
    every anchor gets nearly the same score and the top-k / NMS order is decided by rounding.
    Wider weights spread the scores apart, as trained weights do."""
    g = torch.Generator().manual_seed(7)
    for name, mod in m.named_modules():
        last = name.endswith(("cls_logits", "cls_score")) or re.search(r"classification_head\.module_list\.\d+\.1$", name)
        if isinstance(mod, (nn.Conv2d, nn.Linear)) and last:
            mod.weight.data = torch.randn(mod.weight.shape, generator=g) * std
            if bias is not None:
                mod.bias.data.fill_(bias)
    return m


def _det(fn, size, std=0.1, bias=None, **kw):
    import torchvision.models.detection as tvd
    _seed()
    m = getattr(tvd, fn)(weights=None, weights_backbone=None, **kw)
    return _Detector(_spread_scores(_bn_stats(_small_bn_scales(m)), std, bias)).eval(), {"x": _img(h=size, w=size, b=1)}


@entry("fcos_resnet50_fpn", "detection", "torchvision", {}, {}, DET_TOL, ci=True, compare="detection",
       note="128 px, 20 detections; static (list-of-images input)")
def fcos_resnet50_fpn():
    return _det("fcos_resnet50_fpn", 128, std=0.1, num_classes=5, min_size=128, max_size=128, score_thresh=0.05,
                detections_per_img=20)


@entry("retinanet_resnet50_fpn", "detection", "torchvision", {}, {}, DET_TOL, compare="detection",
       note="128 px, 20 detections; static")
def retinanet_resnet50_fpn():
    return _det("retinanet_resnet50_fpn", 128, std=0.3, bias=-1.0, num_classes=5, min_size=128, max_size=128,
                score_thresh=0.05, detections_per_img=20)


@entry("ssdlite320_mobilenet_v3_large", "detection", "torchvision", {}, {}, DET_TOL, compare="detection",
       note="320 px (fixed by the model), 20 detections; static. Its random scores tie exactly, so NMS keeps "
            "different boxes in ONNX Runtime and PyTorch")
def ssdlite320_mobilenet_v3_large():
    return _det("ssdlite320_mobilenet_v3_large", 320, std=0.3, num_classes=5, score_thresh=0.2, detections_per_img=20)


@entry("fasterrcnn_mobilenet_v3_large_320_fpn", "detection", "torchvision", {}, {}, DET_TOL, compare="detection",
       note="RoiAlign; 128 px, 20 detections; static")
def fasterrcnn_mobilenet_v3_large_320_fpn():
    return _det("fasterrcnn_mobilenet_v3_large_320_fpn", 128, std=2.0, num_classes=5, min_size=128, max_size=128,
                box_score_thresh=0.1, box_detections_per_img=20)


class _DetectorWith(_Detector):
    """A detector that also returns one more per-detection output (masks, keypoints)."""

    def __init__(self, m, extra):
        super().__init__(m)
        self.extra = extra

    def forward(self, x):
        out = self.m([x[0]])[0]
        return out["boxes"], out["scores"], out["labels"], out[self.extra]


def _det_with(fn, extra, size, std=0.1, bias=None, **kw):
    m, inputs = _det(fn, size, std, bias, **kw)
    return _DetectorWith(m.m, extra).eval(), inputs


@entry("maskrcnn_resnet50_fpn", "detection", "torchvision", {}, {}, DET_TOL, compare="detection",
       note="128 px, 10 detections with masks: each mask is resized to its box inside a Loop (a Resize whose "
            "sizes are run-time data: opforge::ReadValues)")
def maskrcnn_resnet50_fpn():
    return _det_with("maskrcnn_resnet50_fpn", "masks", 128, std=0.3, num_classes=5, min_size=128, max_size=128,
                     box_score_thresh=0.1, box_detections_per_img=10)


@entry("keypointrcnn_resnet50_fpn", "detection", "torchvision", {}, {}, DET_TOL, compare="detection",
       note="128 px, 10 detections with 17 keypoints: each heatmap is resized to its box inside a Loop "
            "(run-time sizes)")
def keypointrcnn_resnet50_fpn():
    return _det_with("keypointrcnn_resnet50_fpn", "keypoints", 128, std=0.1, num_classes=2, min_size=128,
                     max_size=128, box_score_thresh=0.1, box_detections_per_img=10)


class _Seg(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def _seg(fn, **kw):
    import torchvision.models.segmentation as tvs
    _seed()
    m = getattr(tvs, fn)(weights=None, weights_backbone=None, num_classes=5, aux_loss=False, **kw)
    return _Seg(_bn_stats(m)).eval(), {"x": _img()}


@entry("deeplabv3_mobilenet_v3_large", "segmentation", "torchvision", IMG, IMG_R, CNN_TOL, ci=True)
def deeplabv3_mobilenet_v3_large():
    return _seg("deeplabv3_mobilenet_v3_large")


# FCN's logits reach about 56 after a dilated ResNet-50: in FP32 on CUDA (cuDNN's summation orders,
# TF32 off) they differed from PyTorch's CPU result by up to 2.7e-4 (4.8e-6 of that scale, cosine
# 1.0000000) on an H100 in the thirtieth session, past CNN_TOL's 1e-4 on logits near zero.
FCN_TOL = (1e-3, 1e-3)


@entry("fcn_resnet50", "segmentation", "torchvision", IMG, IMG_R, FCN_TOL)
def fcn_resnet50():
    return _seg("fcn_resnet50")


@entry("lraspp_mobilenet_v3_large", "segmentation", "torchvision", IMG, IMG_R, CNN_TOL)
def lraspp_mobilenet_v3_large():
    import torchvision.models.segmentation as tvs
    _seed()
    m = tvs.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)
    return _Seg(_bn_stats(m)).eval(), {"x": _img()}


# ---------------------------------------------------------------- video (3-D convolutions)
VID = {"x": {0: "batch"}}


def _video(fn):
    import torchvision.models.video as tvv
    _seed()
    m = getattr(tvv, fn)(weights=None, num_classes=10)
    g = torch.Generator().manual_seed(1)
    return _bn_stats(_small_bn_scales(m)).eval(), {"x": torch.randn(2, 3, 4, 32, 32, generator=g)}


@entry("r3d_18", "video", "torchvision", VID, IMG_R, CNN_TOL, ci=True, note="clip 4 x 32 x 32")
def r3d_18():
    return _video("r3d_18")


@entry("mc3_18", "video", "torchvision", VID, IMG_R, CNN_TOL, note="clip 4 x 32 x 32")
def mc3_18():
    return _video("mc3_18")


@entry("mvit_v2_small", "video", "torchvision", VID, IMG_R, VIT_TOL,
       note="torchvision MViT (mvit_v2_s's block kinds: pooled attention, rel-pos, residual pool), 4 blocks, "
            "width 32-64, clip 4 x 32 x 32; its TorchScript export builds a list of slices with sequence ops "
            "in a Loop (twenty-fifth session)")
def mvit_v2_small():
    from torchvision.models.video.mvit import MSBlockConfig, MViT
    _seed()
    cfg = [MSBlockConfig(1, 32, 32, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 4, 4]),
           MSBlockConfig(2, 32, 64, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 2, 2]),
           MSBlockConfig(2, 64, 64, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2]),
           MSBlockConfig(2, 64, 64, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2])]
    m = MViT(spatial_size=(32, 32), temporal_size=4, block_setting=cfg, residual_pool=True,
             residual_with_cls_embed=False, rel_pos_embed=True, proj_after_attn=True, num_classes=10)
    _random_head(m.head[1])
    g = torch.Generator().manual_seed(1)
    return m.eval(), {"x": torch.randn(2, 3, 4, 32, 32, generator=g)}


@entry("r2plus1d_18", "video", "torchvision", VID, IMG_R, CNN_TOL, note="clip 4 x 32 x 32")
def r2plus1d_18():
    return _video("r2plus1d_18")


# ---------------------------------------------------------------- optical flow
class _Flow(nn.Module):
    def __init__(self, m, iters):
        super().__init__()
        self.m = m
        self.iters = iters

    def forward(self, image1, image2):
        return self.m(image1, image2, num_flow_updates=self.iters)[-1]


@entry("raft_small", "optical-flow", "torchvision", {"image1": {0: "batch"}, "image2": {0: "batch"}}, IMG_R, (1e-3, 1e-3),
       ci=True, note="128 x 128 frames (the smallest the correlation pyramid takes), 3 flow updates")
def raft_small():
    from torchvision.models.optical_flow import raft_small as rs
    _seed()
    m = _Flow(_bn_stats(rs(weights=None)), 3)
    return m.eval(), {"image1": _img(h=128, w=128), "image2": _img(h=128, w=128) * 0.5 + 0.1}


# ---------------------------------------------------------------- speech encoders
SPEECH_TOL = (2e-4, 2e-3)
AUDIO = {"input_values": {0: "batch", 1: "samples"}}
AUDIO_R = {"batch": (1, 4), "samples": (1600, 6400)}


class _Hidden(nn.Module):
    """An HF model called with named inputs, returning last_hidden_state (or logits)."""

    def __init__(self, m, key="last_hidden_state"):
        super().__init__()
        self.m = m
        self.key = key


class _Audio(_Hidden):
    def forward(self, input_values):
        return self.m(input_values=input_values)[self.key]


def _w2v_kw():
    return dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                conv_dim=(32,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, feat_proj_dropout=0.0,
                layerdrop=0.0)


def _audio():
    g = torch.Generator().manual_seed(4)
    return torch.randn(2, 3200, generator=g)


@entry("wav2vec2", "speech", "transformers", AUDIO, AUDIO_R, SPEECH_TOL, ci=True, note="Wav2Vec2Model, 2 layers, width 64, 3200 samples")
def wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    _seed()
    return _Audio(Wav2Vec2Model(Wav2Vec2Config(**_w2v_kw()))).eval(), {"input_values": _audio()}


@entry("hubert", "speech", "transformers", AUDIO, AUDIO_R, SPEECH_TOL, note="HubertModel, 2 layers, width 64, 3200 samples")
def hubert():
    from transformers import HubertConfig, HubertModel
    _seed()
    return _Audio(HubertModel(HubertConfig(**_w2v_kw()))).eval(), {"input_values": _audio()}


class _Whisper(nn.Module):
    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, input_features):
        return self.enc(input_features=input_features).last_hidden_state


@entry("sew", "speech", "transformers", AUDIO, AUDIO_R, SPEECH_TOL,
       note="SEWModel, 2 layers, width 64, squeeze 2 (F.pad by a length difference; Min of lengths)")
def sew():
    from transformers import SEWConfig, SEWModel
    _seed()
    return _Audio(SEWModel(SEWConfig(**dict(_w2v_kw(), conv_dim=(32,) * 13), squeeze_factor=2))).eval(), \
        {"input_values": _audio()}


@entry("whisper_encoder", "speech", "transformers", {"input_features": {0: "batch"}}, IMG_R, SPEECH_TOL,
       note="Whisper encoder, 2 layers, width 64, 80 mel x 32 frames (length fixed by the model)")
def whisper_encoder():
    from transformers import WhisperConfig, WhisperModel
    _seed()
    cfg = WhisperConfig(d_model=64, encoder_layers=2, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=80,
                        max_source_positions=16, max_target_positions=16, vocab_size=1000, pad_token_id=0,
                        bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)
    enc = WhisperModel(cfg).get_encoder()
    g = torch.Generator().manual_seed(4)
    return _Whisper(enc).eval(), {"input_features": torch.randn(2, 80, 32, generator=g)}


# ---------------------------------------------------------------- encoder-only language models
LM_TOL = (2e-4, 2e-3)
TEXT = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
TEXT_R = {"batch": (1, 4), "seq": (4, 32)}
VOCAB = 1000


class _Text(_Hidden):
    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask)[self.key]


def _text_inputs():
    return {"input_ids": _ids(VOCAB), "attention_mask": _mask()}


def _enc_kw():
    return dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


@entry("bert", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, ci=True, note="BertModel, 2 layers, width 64")
def bert():
    from transformers import BertConfig, BertModel
    _seed()
    return _Text(BertModel(BertConfig(**_enc_kw()), add_pooling_layer=False)).eval(), _text_inputs()


@entry("distilbert", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="DistilBertModel, 2 layers, width 64")
def distilbert():
    from transformers import DistilBertConfig, DistilBertModel
    _seed()
    cfg = DistilBertConfig(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=2, hidden_dim=128, max_position_embeddings=64,
                           dropout=0.0, attention_dropout=0.0)
    return _Text(DistilBertModel(cfg)).eval(), _text_inputs()


@entry("roberta", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="RobertaModel, 2 layers, width 64")
def roberta():
    from transformers import RobertaConfig, RobertaModel
    _seed()
    kw = _enc_kw()
    kw["max_position_embeddings"] = 66
    return _Text(RobertaModel(RobertaConfig(**kw, pad_token_id=1), add_pooling_layer=False)).eval(), _text_inputs()


@entry("deberta_v2", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="DebertaV2Model, 2 layers, width 64, relative attention")
def deberta_v2():
    from transformers import DebertaV2Config, DebertaV2Model
    _seed()
    cfg = DebertaV2Config(**_enc_kw(), relative_attention=True, position_buckets=16, max_relative_positions=-1,
                          pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True)
    return _Text(DebertaV2Model(cfg)).eval(), _text_inputs()


@entry("xlnet", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL,
       note="XLNetModel, 2 layers, width 64 (relative positions: a Range from the sequence length down)")
def xlnet():
    from transformers import XLNetConfig, XLNetModel
    _seed()
    return _Text(XLNetModel(XLNetConfig(vocab_size=VOCAB, d_model=64, n_layer=2, n_head=2, d_inner=128,
                                        dropout=0.0))).eval(), _text_inputs()


@entry("albert", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="AlbertModel, 2 layers, embedding 32, width 64")
def albert():
    from transformers import AlbertConfig, AlbertModel
    _seed()
    cfg = AlbertConfig(**_enc_kw(), embedding_size=32)
    return _Text(AlbertModel(cfg, add_pooling_layer=False)).eval(), _text_inputs()


@entry("electra", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="ElectraModel, 2 layers, width 64, embeddings 32")
def electra():
    from transformers import ElectraConfig, ElectraModel
    _seed()
    return _Text(ElectraModel(ElectraConfig(**_enc_kw(), embedding_size=32))).eval(), _text_inputs()


@entry("xlm_roberta", "encoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="XLMRobertaModel, 2 layers, width 64")
def xlm_roberta():
    from transformers import XLMRobertaConfig, XLMRobertaModel
    _seed()
    kw = dict(_enc_kw(), max_position_embeddings=80)
    return _Text(XLMRobertaModel(XLMRobertaConfig(**kw), add_pooling_layer=False)).eval(), _text_inputs()


# ---------------------------------------------------------------- decoder-only language models
class _Causal(_Hidden):
    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class _CausalKV(nn.Module):
    """Decoder step of a 2-layer model with its KV cache given as tensors: inputs input_ids (new
    tokens) and past_key_i / past_value_i; outputs logits and every layer's updated keys/values."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        from transformers import DynamicCache
        cache = DynamicCache()
        cache.update(past_key_0, past_value_0, 0)
        cache.update(past_key_1, past_value_1, 1)
        # transformers 5.x renames past_key_values to cache (the old name warns until 5.40)
        new_name = "cache" in inspect.signature(self.m.forward).parameters
        out = self.m(input_ids=input_ids, use_cache=True, **{"cache" if new_name else "past_key_values": cache})
        layers = (getattr(out, "cache", None) or out.past_key_values).layers
        return out.logits, layers[0].keys, layers[0].values, layers[1].keys, layers[1].values


def _kv_entry(model, layers, kv_heads, head_dim, past=8, new=3):
    g = torch.Generator().manual_seed(5)
    inputs = collections.OrderedDict(input_ids=_ids(VOCAB, s=new))
    for i in range(layers):
        inputs[f"past_key_{i}"] = torch.randn(2, kv_heads, past, head_dim, generator=g)
        inputs[f"past_value_{i}"] = torch.randn(2, kv_heads, past, head_dim, generator=g)
    return _CausalKV(model).eval(), inputs


def _kv_dims(layers):
    d = {"input_ids": {0: "batch", 1: "seq"}}
    for i in range(layers):
        d[f"past_key_{i}"] = {0: "batch", 2: "past"}
        d[f"past_value_{i}"] = {0: "batch", 2: "past"}
    return d


KV_R = {"batch": (1, 4), "seq": (2, 8), "past": (2, 24)}


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    _seed()
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                     attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(cfg).eval()


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    _seed()
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(cfg).eval()


def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    _seed()
    cfg = Qwen2Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=64)
    return Qwen2ForCausalLM(cfg).eval()


def _mistral():
    from transformers import MistralConfig, MistralForCausalLM
    _seed()
    cfg = MistralConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, max_position_embeddings=64, sliding_window=None)
    return MistralForCausalLM(cfg).eval()


@entry("gpt2", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, ci=True, note="GPT2LMHeadModel, 2 layers, width 64")
def gpt2():
    return _Causal(_gpt2()).eval(), _text_inputs()


@entry("llama", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="LlamaForCausalLM, 2 layers, width 64, GQA 4/2")
def llama():
    return _Causal(_llama()).eval(), _text_inputs()


@entry("qwen2", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="Qwen2ForCausalLM, 2 layers, width 64, GQA 4/2")
def qwen2():
    return _Causal(_qwen2()).eval(), _text_inputs()


@entry("mistral", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="MistralForCausalLM, 2 layers, width 64, GQA 4/2")
def mistral():
    return _Causal(_mistral()).eval(), _text_inputs()


@entry("mixtral_eager", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL,
       note="MixtralForCausalLM, 2 layers, 4 experts top-2, experts_implementation='eager' "
            "(a Split of NonZero's rows by the count traced at export)")
def mixtral_eager():
    from transformers import MixtralConfig, MixtralForCausalLM
    _seed()
    cfg = MixtralConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                        max_position_embeddings=64, experts_implementation="eager")
    return _Causal(MixtralForCausalLM(cfg).eval()).eval(), _text_inputs()


@entry("gpt2_kv", "decoder-lm", "transformers", _kv_dims(2), KV_R, LM_TOL, ci=True,
       note="GPT-2 decode step: 3 new tokens on an 8-token KV cache (tensor inputs)")
def gpt2_kv():
    return _kv_entry(_gpt2(), 2, 2, 32)


@entry("llama_kv", "decoder-lm", "transformers", _kv_dims(2), KV_R, LM_TOL,
       note="LLaMA decode step: 3 new tokens on an 8-token KV cache (tensor inputs)")
def llama_kv():
    return _kv_entry(_llama(), 2, 2, 16)


@entry("gpt_neo", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="GPTNeoForCausalLM, global + local (window 8) layers")
def gpt_neo():
    from transformers import GPTNeoConfig, GPTNeoForCausalLM
    _seed()
    cfg = GPTNeoConfig(vocab_size=VOCAB, hidden_size=64, num_layers=2, num_heads=2,
                       attention_types=[[["global", "local"], 1]], max_position_embeddings=64, window_size=8,
                       intermediate_size=128, embed_dropout=0.0, attention_dropout=0.0, resid_dropout=0.0,
                       use_cache=False)
    return _Causal(GPTNeoForCausalLM(cfg)).eval(), _text_inputs()


@entry("opt", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="OPTForCausalLM, 2 layers, width 64")
def opt():
    from transformers import OPTConfig, OPTForCausalLM
    _seed()
    cfg = OPTConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, ffn_dim=128, num_attention_heads=2,
                    max_position_embeddings=64, word_embed_proj_dim=64, dropout=0.0, attention_dropout=0.0,
                    use_cache=False)
    return _Causal(OPTForCausalLM(cfg)).eval(), _text_inputs()


@entry("phi", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="PhiForCausalLM, 2 layers, width 64, partial rotary")
def phi():
    from transformers import PhiConfig, PhiForCausalLM
    _seed()
    cfg = PhiConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    max_position_embeddings=64, use_cache=False)
    return _Causal(PhiForCausalLM(cfg)).eval(), _text_inputs()


@entry("gemma", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="GemmaForCausalLM, 2 layers, width 64, GQA 4/2")
def gemma():
    from transformers import GemmaConfig, GemmaForCausalLM
    _seed()
    cfg = GemmaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, max_position_embeddings=64, use_cache=False)
    return _Causal(GemmaForCausalLM(cfg)).eval(), _text_inputs()


@entry("falcon", "decoder-lm", "transformers", TEXT, TEXT_R, LM_TOL, note="FalconForCausalLM, 2 layers, width 64")
def falcon():
    from transformers import FalconConfig, FalconForCausalLM
    _seed()
    cfg = FalconConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, use_cache=False,
                       hidden_dropout=0.0, attention_dropout=0.0)
    return _Causal(FalconForCausalLM(cfg)).eval(), _text_inputs()


# ---------------------------------------------------------------- encoder-decoder language models
class _Seq2Seq(_Hidden):
    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                      use_cache=False)[self.key]


S2S = dict(TEXT, decoder_input_ids={0: "batch", 1: "dec_seq"})
S2S_R = dict(TEXT_R, dec_seq=(2, 32))


def _s2s_inputs():
    d = _text_inputs()
    d["decoder_input_ids"] = _ids(VOCAB, s=8, seed=6)
    return d


@entry("t5", "encoder-decoder", "transformers", S2S, S2S_R, LM_TOL, ci=True,
       note="T5ForConditionalGeneration, 2+2 layers, width 64 (relative position buckets)")
def t5():
    from transformers import T5Config, T5ForConditionalGeneration
    _seed()
    cfg = T5Config(vocab_size=VOCAB, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=2,
                   dropout_rate=0.0, decoder_start_token_id=0)
    return _Seq2Seq(T5ForConditionalGeneration(cfg), "logits").eval(), _s2s_inputs()


@entry("longt5", "encoder-decoder", "transformers", S2S, S2S_R, LM_TOL,
       note="LongT5ForConditionalGeneration, 2+2 layers, width 64, transient-global attention (radius 4, blocks 4): "
            "its TorchScript export pads to a block multiple with a Mod of the length and one-hots block ids "
            "with a depth from it (twenty-fifth session)")
def longt5():
    from transformers import LongT5Config, LongT5ForConditionalGeneration
    _seed()
    cfg = LongT5Config(vocab_size=VOCAB, d_model=64, d_kv=32, d_ff=128, num_layers=2, num_decoder_layers=2,
                       num_heads=2, local_radius=4, global_block_size=4, encoder_attention_type="transient-global",
                       dropout_rate=0.0, decoder_start_token_id=0)
    return _Seq2Seq(LongT5ForConditionalGeneration(cfg), "logits").eval(), _s2s_inputs()


@entry("bart", "encoder-decoder", "transformers", S2S, S2S_R, LM_TOL, note="BartForConditionalGeneration, 2+2 layers, width 64")
def bart():
    from transformers import BartConfig, BartForConditionalGeneration
    _seed()
    cfg = BartConfig(vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
                     dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
    return _Seq2Seq(BartForConditionalGeneration(cfg), "logits").eval(), _s2s_inputs()


# ---------------------------------------------------------------- more vision encoders (transformers)
class _Pixels(_Hidden):
    def forward(self, pixel_values):
        return self.m(pixel_values=pixel_values)[self.key]


PIX = {"pixel_values": {0: "batch"}}


@entry("clip_vision", "vit", "transformers", PIX, IMG_R, VIT_TOL, note="CLIPVisionModel, 64 px, patch 16, 2 layers, width 64")
def clip_vision():
    from transformers import CLIPVisionConfig, CLIPVisionModel
    _seed()
    cfg = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                           image_size=64, patch_size=16)
    return _Pixels(CLIPVisionModel(cfg)).eval(), {"pixel_values": _img()}


@entry("dinov2", "vit", "transformers", PIX, IMG_R, VIT_TOL, note="Dinov2Model, 56 px, patch 14, 2 layers, width 64")
def dinov2():
    from transformers import Dinov2Config, Dinov2Model
    _seed()
    cfg = Dinov2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                       image_size=56, patch_size=14)
    return _Pixels(Dinov2Model(cfg)).eval(), {"pixel_values": _img(h=56, w=56)}


EXPORTERS = ("torchscript", "dynamo")
