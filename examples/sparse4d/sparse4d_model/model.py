"""Sparse4Dv3: backbone + head, random weights with a fixed seed, the graphs that are exported, and the
multi-frame reference (the instance bank's cache between frames) that the C++ demo is compared with."""
import math

import numpy as np
import torch
from torch import nn

import opforge  # noqa: F401  (registers torch.ops.opforge.DeformableAggregation)

from .backbone import FPN, ResNet, pack_features
from .config import FULL
from .head import Sparse4DHead, cache_step


class Sparse4D(nn.Module):
    def __init__(self, cfg=FULL):
        super().__init__()
        self.cfg = cfg.check()
        self.img_backbone = ResNet(cfg.stage_blocks, cfg.base_channels)
        self.img_neck = FPN(cfg.stage_channels, cfg.embed_dims)
        self.head = Sparse4DHead(cfg)

    def extract_feat(self, img):
        """img [B, Ncam, 3, H, W] (normalised) -> packed features [B, Ncam * sum_l H_l W_l, 256]."""
        bs, ncam = img.shape[:2]
        feats = self.img_neck(self.img_backbone(img.flatten(0, 1)))
        return pack_features(feats, bs, ncam)


# ---- graphs to export ------------------------------------------------------------------------------

class BackboneGraph(nn.Module):
    """img [B, Ncam, 3, H, W] -> feature_maps [B, F, 256]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, img):
        return self.model.extract_feat(img)


class HeadFirstGraph(nn.Module):
    """(feature_maps, projection_mat, image_wh) -> (instance_feature, anchor, classification, quality)."""

    def __init__(self, model):
        super().__init__()
        self.head = model.head

    def forward(self, feature_maps, projection_mat, image_wh):
        return self.head.forward_first(feature_maps, projection_mat, image_wh)


class HeadLaterGraph(nn.Module):
    """(feature_maps, projection_mat, image_wh, cached_feature, cached_anchor, T_temp2cur, time_interval) ->
    (instance_feature, anchor, classification, quality, selected_index)."""

    def __init__(self, model):
        super().__init__()
        self.head = model.head

    def forward(self, feature_maps, projection_mat, image_wh, cached_feature, cached_anchor, T_temp2cur,
                time_interval):
        return self.head.forward_later(feature_maps, projection_mat, image_wh, cached_feature, cached_anchor,
                                       T_temp2cur, time_interval)


HEAD_INPUTS_FIRST = ["feature_maps", "projection_mat", "image_wh"]
HEAD_INPUTS_LATER = HEAD_INPUTS_FIRST + ["cached_feature", "cached_anchor", "T_temp2cur", "time_interval"]
HEAD_OUTPUTS = ["instance_feature", "anchor", "classification", "quality"]
HEAD_OUTPUTS_LATER = HEAD_OUTPUTS + ["selected_index"]


# ---- random weights with a fixed seed ----------------------------------------------------------------

def plausible_anchors(cfg, generator):
    """Boxes around the ego car (lidar frame: x forward, y left, z up), like nuScenes' k-means anchors:
    centers 4-50 m away (in front within +-28 degrees with one camera), sizes of cars, pedestrians, trucks,
    cones, random yaw, zero velocity."""
    n = cfg.num_anchor
    g = generator
    r = 4.0 + 46.0 * torch.rand(n, generator=g).sqrt()
    if cfg.num_cams == 1:
        ang = (torch.rand(n, generator=g) - 0.5) * math.radians(56)
    else:
        ang = torch.rand(n, generator=g) * 2 * math.pi
    z = -1.8 + 1.6 * torch.rand(n, generator=g)
    templates = torch.tensor([[1.95, 4.6, 1.7], [0.7, 0.7, 1.75], [2.5, 7.5, 3.0], [0.4, 0.4, 1.0],
                              [0.6, 1.9, 1.4]])
    kind = torch.randint(0, len(templates), (n,), generator=g)
    size = templates[kind] * (0.8 + 0.4 * torch.rand(n, 3, generator=g))
    yaw = (torch.rand(n, generator=g) * 2 - 1) * math.pi
    return torch.cat([torch.stack([r * ang.cos(), r * ang.sin(), z], -1), size.log(),
                      torch.stack([yaw.sin(), yaw.cos()], -1), torch.zeros(n, 3)], dim=-1)


# BatchNorm scales are drawn from U(lo, lo + span): BN3_SCALE for each residual branch's last BatchNorm (bn3),
# BN_SCALE for the others — and for bn3 too until 2026-12-01 (init_sensitivity.py compares the two).
BN_SCALE = (0.5, 1.0)
BN3_SCALE = (0.1, 0.3)


@torch.no_grad()
def init_random_weights(model, seed=0, calib_batch=2, bn3_scale=BN3_SCALE):
    """Deterministic random weights: PyTorch's default initialisation under `seed`, Xavier for the head's
    matrices (as Sparse4D's init_weights) and the instance features, plausible anchors, the class bias at prior
    0.01, random LayerNorm and BatchNorm affine parameters (small scales on each residual branch's last BatchNorm:
    bn3_scale), and BatchNorm running statistics calibrated on random images (one pass in training mode) so
    activations stay in range through the ResNet."""
    cfg = model.cfg
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)) and hasattr(m, "reset_parameters"):
            m.reset_parameters()
    for name, p in model.head.named_parameters():
        if p.dim() > 1 and "instance_bank" not in name and "fix_scale" not in name:
            nn.init.xavier_uniform_(p, generator=g)
    for name, m in model.named_modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.copy_(1.0 + 0.2 * torch.randn(m.weight.shape, generator=g))
            m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
        elif isinstance(m, nn.BatchNorm2d):
            # The last BatchNorm of each residual branch (bn3) gets a small scale, as trained ResNets have and as
            # zero-init-residual training starts from. With scales near 1 there too (each residual branch adding,
            # presumably, as much as the skip path carries), the random network amplified any rounding of its early
            # layers: FP16 rounding of the stem alone moved the packed features to cosine 0.9995, TF32
            # convolutions throughout to 0.9993 (bench/results/sparse4d_fp16_probe_cpu.md).
            lo, span = bn3_scale if name.endswith(".bn3") else BN_SCALE
            m.weight.copy_(lo + span * torch.rand(m.weight.shape, generator=g))
            m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=g))
    for name, m in model.head.named_modules():
        if name.endswith("cls_layers"):
            m[-1].bias.fill_(-math.log((1 - 0.01) / 0.01))
        if hasattr(m, "in_proj_bias"):
            m.in_proj_bias.copy_(0.02 * torch.randn(m.in_proj_bias.shape, generator=g))
        if isinstance(m, nn.Linear) and m.bias is not None and "cls_layers" not in name:
            m.bias.copy_(0.02 * torch.randn(m.bias.shape, generator=g))
    for name, m in model.head.named_modules():
        if name.endswith("layers") and isinstance(m, nn.Sequential) and len(m) and hasattr(m[-1], "scale"):
            # box refinement: small deltas per decoder (as a trained model's), so boxes stay plausible
            nn.init.xavier_uniform_(m[-2].weight, gain=0.1, generator=g)
            m[-1].scale.copy_(0.5 + 0.5 * torch.rand(m[-1].scale.shape, generator=g))
    model.head.instance_bank.anchor.copy_(plausible_anchors(cfg, g))
    # Sparse4Dv3 keeps the anchors' instance features at zero (feat_grad=False); here they are random (as in
    # configurations that learn them). With zeros, anchors that see no image get identical scores, and which of
    # those tied anchors take the last places of a top-k is decided by rounding in the last bit (see README).
    nn.init.xavier_uniform_(model.head.instance_bank.instance_feature, generator=g)
    # BatchNorm statistics from one training-mode pass over random images.
    bns = [m for m in model.img_backbone.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average: after one batch, exactly that batch's statistics
    model.img_backbone.train()
    h, w = cfg.image_hw
    model.img_backbone(smooth_images(calib_batch, h, w, g))
    model.img_backbone.eval()
    for m in bns:
        m.momentum = 0.1
    return model


def build_model(cfg=FULL, seed=0, bn3_scale=BN3_SCALE):
    model = Sparse4D(cfg)
    init_random_weights(model, seed, bn3_scale=bn3_scale)
    return model.eval()


# ---- inputs: random but plausible ---------------------------------------------------------------------

def smooth_images(n, h, w, generator):
    """Normalised random images with spatial structure (low-frequency noise plus a little fine noise)."""
    coarse = torch.randn(n, 3, h // 16 + 1, w // 16 + 1, generator=generator)
    img = torch.nn.functional.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=False)
    return img + 0.3 * torch.randn(n, 3, h, w, generator=generator)


def camera_rig(cfg):
    """lidar -> image projection matrices [Ncam, 4, 4] (nuScenes-like rig: cameras 1.6 m up looking out at
    yaw 0, -55, -110, 180, 110, 55 degrees; focal length scaled to the image width) and image_wh [Ncam, 2]."""
    h, w = cfg.image_hw
    f = 560.0 * w / 704.0
    K = np.array([[f, 0, w / 2, 0], [0, f, h / 2 + 0.05 * h, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float64)
    yaws = [0, -55, -110, 180, 110, 55][:cfg.num_cams]
    mats = []
    for yd in yaws:
        y = math.radians(yd)
        # camera axes in the lidar frame: z (forward) along yaw, x (right), y (down)
        fwd = np.array([math.cos(y), math.sin(y), 0.0])
        right = np.array([math.sin(y), -math.cos(y), 0.0])
        down = np.array([0.0, 0.0, -1.0])
        R = np.stack([right, down, fwd])  # lidar -> camera rotation
        t = np.array([0.9 * math.cos(y), 0.9 * math.sin(y), 1.6])  # camera position (lidar frame)
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = -R @ t
        mats.append(K @ T)
    wh = np.array([[w, h]] * cfg.num_cams, dtype=np.float32)
    return np.stack(mats).astype(np.float32), wh


def ego_pose(k, speed=5.0, yaw_rate=0.05, dt=0.5):
    """T_global (lidar -> global) of frame k of a car driving a gentle curve."""
    yaw = yaw_rate * k
    T = np.eye(4)
    T[:3, :3] = [[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]]
    T[:3, 3] = [speed * dt * k * math.cos(yaw / 2), speed * dt * k * math.sin(yaw / 2), 0.0]
    return T


def make_frames(cfg, num_frames=10, seed=1, dt=0.5, gaps=()):
    """A sequence of frames: dicts with img [1, Ncam, 3, H, W] float32, projection_mat [1, Ncam, 4, 4],
    image_wh [1, Ncam, 2], timestamp (float64 seconds), T_global [4, 4] float64. `gaps`: frame indices
    preceded by a 3 s pause (beyond the bank's 2 s: the cache is ignored there)."""
    g = torch.Generator().manual_seed(seed)
    proj, wh = camera_rig(cfg)
    h, w = cfg.image_hw
    frames, t = [], 1.5e9
    for k in range(num_frames):
        if k:
            t += 3.0 if k in gaps else dt
        img = smooth_images(cfg.num_cams, h, w, g)[None].contiguous()
        frames.append(dict(img=img.numpy().astype(np.float32), projection_mat=proj[None].copy(),
                           image_wh=wh[None].copy(), timestamp=np.float64(t), T_global=ego_pose(k)))
    return frames


def write_frames(frames, folder):
    """One folder per frame (frame_0000/ img.npy projection_mat.npy image_wh.npy timestamp.npy T_global.npy),
    what examples/sparse4d/sparse4d_demo reads."""
    import os
    os.makedirs(folder, exist_ok=True)
    for k, fr in enumerate(frames):
        d = os.path.join(folder, f"frame_{k:04d}")
        os.makedirs(d, exist_ok=True)
        for name in ("img", "projection_mat", "image_wh"):
            np.save(os.path.join(d, f"{name}.npy"), np.ascontiguousarray(fr[name], dtype=np.float32))
        np.save(os.path.join(d, "timestamp.npy"), np.array([fr["timestamp"]], dtype=np.float64))
        np.save(os.path.join(d, "T_global.npy"), np.asarray(fr["T_global"], dtype=np.float64))


def temp2cur(T_global_prev, T_global_cur):
    """Previous lidar frame -> current lidar frame: inverse(T_global_cur) @ T_global_prev."""
    return np.linalg.inv(T_global_cur) @ T_global_prev


# ---- multi-frame reference ----------------------------------------------------------------------------

class Sparse4DTracker:
    """Runs frames through the model the way the deployed pipeline does: backbone, the first-frame or
    later-frame head, then the instance bank's cache step. `head_fn(first, inputs) -> outputs` may replace the
    PyTorch head (e.g. an engine), `backbone_fn(img) -> feature_maps` the backbone. `dtype`: the floating-point
    type of the images, head inputs and cache (torch.float64 with a float64 copy of the model: the oracle)."""

    def __init__(self, model, device="cpu", dtype=torch.float32):
        self.model, self.device, self.dtype = model, device, dtype
        self.reset()

    def reset(self):
        self.cached = None  # (feature, anchor, confidence) tensors
        self.cached_id = None  # tracking ids of the cached instances
        self.next_id = 0
        self.prev_time = self.prev_T = None

    def head_inputs(self, frame, feature_maps):
        def t(a):  # floating-point inputs in the tracker's dtype (FP64 for the float64 oracle)
            a = torch.as_tensor(np.asarray(a)).to(self.device)
            return a.to(self.dtype) if torch.is_floating_point(a) else a
        ins = dict(feature_maps=feature_maps, projection_mat=t(frame["projection_mat"]),
                   image_wh=t(frame["image_wh"]))
        if self.cached is None:
            return True, ins
        dt = float(frame["timestamp"] - self.prev_time)
        T = temp2cur(self.prev_T, frame["T_global"]).astype(np.float32)[None]
        ins.update(cached_feature=self.cached[0], cached_anchor=self.cached[1], T_temp2cur=t(T),
                   time_interval=torch.tensor([dt], dtype=self.dtype, device=self.device))
        return False, ins

    @torch.no_grad()
    def step(self, frame, backbone_fn=None, head_fn=None):
        """Returns (feature_maps, head inputs, {instance_feature, anchor, classification, quality})."""
        model = self.model
        img = torch.as_tensor(frame["img"]).to(self.device, self.dtype)
        feature_maps = (backbone_fn or model.extract_feat)(img)
        first, ins = self.head_inputs(frame, feature_maps)
        if head_fn is not None:
            outs = head_fn(first, ins)
        else:
            res = model.head.forward_first(**ins) if first else model.head.forward_later(**ins)
            outs = dict(zip(HEAD_OUTPUTS_LATER, res))
        recent = not first and abs(float(frame["timestamp"] - self.prev_time)) <= self.model.cfg.max_time_interval
        outs["instance_id"] = self.assign_ids(recent)
        self.cache(outs)
        self.prev_time, self.prev_T = frame["timestamp"], frame["T_global"]
        return feature_maps, ins, outs

    def assign_ids(self, recent):
        """Tracking ids (Sparse4D's get_instance_id without a score threshold): the first Nt rows carry the
        cached instances' ids when the previous frame is recent, every other row gets a new id in row order."""
        cfg = self.model.cfg
        ids = torch.full((1, cfg.num_anchor), -1, dtype=torch.int64)
        if self.cached_id is not None and recent:
            ids[:, :cfg.num_temp_instances] = self.cached_id
        new = ids < 0
        n = int(new.sum())
        ids[new] = torch.arange(self.next_id, self.next_id + n, dtype=torch.int64)
        self.next_id += n
        return ids

    def cache(self, outs):
        cfg = self.model.cfg
        prev_conf = None if self.cached is None else self.cached[2]
        f = lambda x: x.to(self.dtype)  # noqa: E731  (FP16 outputs are cached in FP32)
        feature, anchor, conf, index = cache_step(f(outs["instance_feature"]), f(outs["anchor"]),
                                                  f(outs["classification"]), prev_conf,
                                                  cfg.num_temp_instances, cfg.confidence_decay, return_index=True,
                                                  sort_cache=cfg.sort_selected)
        self.cached = (feature, anchor, conf)
        self.cached_id = torch.gather(outs["instance_id"].to(index.device), 1, index)
