"""The Sparse4Dv3 head (inference path), written for this project from the published architecture.

Per frame: 900 anchors (11-dim boxes) and their instance features go through 6 decoders. Decoder 1 (single
frame): deformable aggregation, FFN, LayerNorm, refinement. Decoders 2-6 (temporal): temporal cross-attention
to the 600 instances cached from the previous frame, self-attention, LayerNorm, deformable aggregation, FFN,
LayerNorm, refinement. After decoder 1 on a later frame the instance set becomes the 600 cached instances plus
the 300 best current ones (the instance bank's `update`). Attention is decoupled: queries and keys are
[feature, anchor embedding] (512 dims), values fc_before(feature) (256 -> 512), and the result (plus the
512-dim identity) goes through fc_after (512 -> 256).

Module and parameter names follow Sparse4D's (head.layers.<i> in operation order, head.anchor_encoder.pos_fc.0,
head.layers.<i>.attn.in_proj_weight, ...), so official state dicts load by name.

The graph-level entry points are `forward_first` (no previous frame: the temporal attention attends to the
instances themselves) and `forward_later` (cached instances of the previous frame, projected into the current
frame with the ego motion). The bank's cache step between frames (confidence decay, top-k) is `cache_step`
here and in C++ in examples/sparse4d/sparse4d_demo.cc.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .backbone import level_tables
from .config import COS_YAW, SIN_YAW, VX


def linear_relu_ln(embed_dims, in_loops, out_loops, input_dims=None):
    """[Linear, ReLU] * in_loops + LayerNorm, repeated out_loops times (Sparse4D's building block)."""
    input_dims = embed_dims if input_dims is None else input_dims
    layers = []
    for _ in range(out_loops):
        for _ in range(in_loops):
            layers += [nn.Linear(input_dims, embed_dims), nn.ReLU()]
            input_dims = embed_dims
        layers.append(nn.LayerNorm(embed_dims))
    return layers


def topk_stable(confidence, k):
    """Indices [B, k] of the k largest values of each row, equal values in row order (lower index first). Rows
    of anchors that see no image have identical features and so identical scores: the order among such ties
    decides which of them are kept, so it must not depend on the top-k implementation. A stable descending
    sort does that in PyTorch and exports as ONNX TopK, whose ties keep the lower index first (opforge's too)."""
    return torch.sort(confidence, dim=1, descending=True, stable=True).indices[:, :k]


def batched_rows(x, index):
    """x [B, N, C], index [B, K] -> x[b, index[b, k], :]  ([B, K, C])."""
    return torch.gather(x, 1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


class SparseBox3DEncoder(nn.Module):
    """Anchor embedding ("cat" mode, decoupled attention): position (3 -> 128), size (3 -> 32), yaw (2 -> 32),
    velocity (3 -> 64), each 4 x [Linear, ReLU, LayerNorm], concatenated to 256."""

    def __init__(self, embed_dims=(128, 32, 32, 64), in_loops=1, out_loops=4):
        super().__init__()
        self.pos_fc = nn.Sequential(*linear_relu_ln(embed_dims[0], in_loops, out_loops, 3))
        self.size_fc = nn.Sequential(*linear_relu_ln(embed_dims[1], in_loops, out_loops, 3))
        self.yaw_fc = nn.Sequential(*linear_relu_ln(embed_dims[2], in_loops, out_loops, 2))
        self.vel_fc = nn.Sequential(*linear_relu_ln(embed_dims[3], in_loops, out_loops, 3))

    def forward(self, box):
        return torch.cat([self.pos_fc(box[..., 0:3]), self.size_fc(box[..., 3:6]), self.yaw_fc(box[..., 6:8]),
                          self.vel_fc(box[..., 8:11])], dim=-1)


class _AttentionCore(nn.Module):
    """nn.MultiheadAttention's parameters (in_proj_weight/bias, out_proj) and computation, batch first,
    without masks, written out so the exported graph is plain MatMul/Softmax."""

    def __init__(self, embed_dims, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dims, embed_dims))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dims))
        self.out_proj = nn.Linear(embed_dims, embed_dims)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def forward(self, query, key, value):
        e = query.shape[-1]
        w, b = self.in_proj_weight, self.in_proj_bias
        q = F.linear(query, w[:e], b[:e])
        k = F.linear(key, w[e:2 * e], b[e:2 * e])
        v = F.linear(value, w[2 * e:], b[2 * e:])
        bsz, nq, nk, h = q.shape[0], q.shape[1], k.shape[1], self.num_heads
        d = e // h
        q = q.reshape(bsz, nq, h, d).transpose(1, 2)
        k = k.reshape(bsz, nk, h, d).transpose(1, 2)
        v = v.reshape(bsz, nk, h, d).transpose(1, 2)
        attn = torch.softmax(torch.matmul(q * (1.0 / math.sqrt(d)), k.transpose(-1, -2)), dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, nq, e)
        return self.out_proj(out)


class MultiheadAttention(nn.Module):
    """mmcv's MultiheadAttention wrapper: identity + attention (dropout is training only)."""

    def __init__(self, embed_dims, num_heads):
        super().__init__()
        self.attn = _AttentionCore(embed_dims, num_heads)

    def forward(self, query, key, value, identity):
        return identity + self.attn(query, key, value)


class AsymmetricFFN(nn.Module):
    """pre-LayerNorm(512) -> Linear(512, 1024) -> ReLU -> Linear(1024, 256), plus identity_fc(512 -> 256) of the
    normalised input."""

    def __init__(self, in_channels=512, embed_dims=256, feedforward_channels=1024):
        super().__init__()
        self.pre_norm = nn.LayerNorm(in_channels)
        self.layers = nn.Sequential(nn.Sequential(nn.Linear(in_channels, feedforward_channels), nn.ReLU()),
                                    nn.Linear(feedforward_channels, embed_dims))
        self.identity_fc = nn.Linear(in_channels, embed_dims)

    def forward(self, x):
        x = self.pre_norm(x)
        return self.identity_fc(x) + self.layers(x)


class SparseBox3DKeyPointsGenerator(nn.Module):
    """13 keypoints per box: 7 fixed (center and +-0.45 of the size along each axis) and 6 learned
    ((sigmoid(fc(feature)) - 0.5) * size), rotated by the yaw and moved to the box center."""

    def __init__(self, embed_dims, num_learnable_pts, fix_scale):
        super().__init__()
        self.num_learnable_pts = num_learnable_pts
        self.fix_scale = nn.Parameter(torch.tensor(fix_scale, dtype=torch.float32), requires_grad=False)
        self.num_pts = len(fix_scale) + num_learnable_pts
        self.learnable_fc = nn.Linear(embed_dims, num_learnable_pts * 3)

    def forward(self, anchor, instance_feature):
        bs, n = anchor.shape[:2]
        size = anchor[..., None, 3:6].exp()  # [B, A, 1, 3]
        learned = self.learnable_fc(instance_feature).reshape(bs, n, self.num_learnable_pts, 3).sigmoid() - 0.5
        pts = torch.cat([self.fix_scale * size, learned * size], dim=-2)  # [B, A, P, 3]
        sin, cos = anchor[..., SIN_YAW, None], anchor[..., COS_YAW, None]
        x, y, z = pts[..., 0], pts[..., 1], pts[..., 2]
        rotated = torch.stack([cos * x - sin * y, sin * x + cos * y, z], dim=-1)
        return rotated + anchor[..., None, 0:3]


def project_points(key_points, projection_mat, image_wh, mask_behind_camera=True):
    """key_points [B, A, P, 3] (lidar frame), projection_mat [B, Ncam, 4, 4] (lidar -> image pixels),
    image_wh [B, Ncam, 2] -> normalised image coordinates [B, A, P, Ncam, 2] (u = x / W, v = y / H).
    A point at depth <= 1e-5 gets (-1, -1) with mask_behind_camera (the op masks it); otherwise the official
    clamp(depth, min=1e-5) alone."""
    bs, a, p = key_points.shape[:3]
    ncam = projection_mat.shape[1]
    pts = torch.cat([key_points, torch.ones_like(key_points[..., :1])], dim=-1).reshape(bs, 1, a * p, 4)
    cam = torch.matmul(pts, projection_mat[:, :, :3].transpose(-1, -2))  # [B, Ncam, A*P, 3]
    depth = cam[..., 2:3]
    uv = cam[..., :2] / torch.clamp(depth, min=1e-5) / image_wh[:, :, None]
    if mask_behind_camera:
        uv = torch.where(depth > 1e-5, uv, torch.full_like(uv, -1.0))
    return uv.reshape(bs, ncam, a, p, 2).permute(0, 2, 3, 1, 4)


class DeformableFeatureAggregation(nn.Module):
    """Keypoints -> projection into every camera -> per-group weights (softmax over cameras x levels x points)
    -> opforge::DeformableAggregation -> output_proj; residual mode "cat" (returns [out, feature], 512 dims)."""

    def __init__(self, embed_dims, num_groups, num_levels, num_cams, num_learnable_pts, fix_scale,
                 mask_behind_camera=True):
        super().__init__()
        self.embed_dims, self.num_groups, self.num_levels, self.num_cams = embed_dims, num_groups, num_levels, num_cams
        self.mask_behind_camera = mask_behind_camera
        self.kps_generator = SparseBox3DKeyPointsGenerator(embed_dims, num_learnable_pts, fix_scale)
        self.num_pts = self.kps_generator.num_pts
        self.output_proj = nn.Linear(embed_dims, embed_dims)
        self.camera_encoder = nn.Sequential(*linear_relu_ln(embed_dims, 1, 2, 12))
        self.weights_fc = nn.Linear(embed_dims, num_groups * num_levels * self.num_pts)

    def weights(self, instance_feature, anchor_embed, projection_mat):
        """[B, A, P, Ncam, L, G]: softmax over the Ncam * L * P entries of each group."""
        bs, a = instance_feature.shape[:2]
        camera_embed = self.camera_encoder(projection_mat[:, :, :3].reshape(bs, self.num_cams, 12))
        feature = (instance_feature + anchor_embed)[:, :, None] + camera_embed[:, None]  # [B, A, Ncam, E]
        w = self.weights_fc(feature).reshape(bs, a, -1, self.num_groups).softmax(dim=-2)
        w = w.reshape(bs, a, self.num_cams, self.num_levels, self.num_pts, self.num_groups)
        return w.permute(0, 1, 4, 2, 3, 5)

    def forward(self, instance_feature, anchor, anchor_embed, feature_maps, spatial_shape, scale_start_index,
                projection_mat, image_wh):
        key_points = self.kps_generator(anchor, instance_feature)
        # Locations and weights stay FP32 whatever the features are (the op's combinations; under autocast the
        # projection may come out FP16); FP64 with FP64 features.
        dt = torch.float64 if feature_maps.dtype == torch.float64 else torch.float32
        weights = self.weights(instance_feature, anchor_embed, projection_mat).to(dt).contiguous()
        locations = project_points(key_points, projection_mat, image_wh, self.mask_behind_camera).to(dt).contiguous()
        sampled = torch.ops.opforge.DeformableAggregation(feature_maps, spatial_shape, scale_start_index, locations,
                                                          weights)
        return torch.cat([self.output_proj(sampled), instance_feature], dim=-1)


class Scale(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * self.scale


class SparseBox3DRefinementModule(nn.Module):
    """Box deltas from feature + anchor embedding (x, y, z, size, yaw added to the anchor; velocity =
    delta / time interval + anchor velocity), class logits from the feature, quality (centerness, yawness)
    from feature + embedding."""

    def __init__(self, embed_dims=256, output_dim=11, num_cls=10):
        super().__init__()
        self.layers = nn.Sequential(*linear_relu_ln(embed_dims, 2, 2), nn.Linear(embed_dims, output_dim),
                                    Scale(output_dim))
        self.cls_layers = nn.Sequential(*linear_relu_ln(embed_dims, 1, 2), nn.Linear(embed_dims, num_cls))
        self.quality_layers = nn.Sequential(*linear_relu_ln(embed_dims, 1, 2), nn.Linear(embed_dims, 2))

    def forward(self, instance_feature, anchor, anchor_embed, time_interval, return_cls=True):
        feature = instance_feature + anchor_embed
        out = self.layers(feature)
        box = torch.cat([out[..., :VX] + anchor[..., :VX],
                         out[..., VX:] / time_interval[:, None, None] + anchor[..., VX:]], dim=-1)
        if not return_cls:
            return box, None, None
        return box, self.cls_layers(instance_feature), self.quality_layers(feature)


class InstanceBank(nn.Module):
    """The learned anchors and instance features (official: zeros, not trained) and the bank's settings.
    The cache itself lives outside the graphs (Sparse4DTracker in model.py, the C++ demo)."""

    def __init__(self, num_anchor, embed_dims, num_temp_instances, confidence_decay, default_time_interval,
                 max_time_interval):
        super().__init__()
        self.num_anchor, self.num_temp_instances = num_anchor, num_temp_instances
        self.confidence_decay = confidence_decay
        self.default_time_interval, self.max_time_interval = default_time_interval, max_time_interval
        self.anchor = nn.Parameter(torch.zeros(num_anchor, 11))
        self.instance_feature = nn.Parameter(torch.zeros(num_anchor, embed_dims), requires_grad=False)


def operation_order(num_decoder, num_single_frame_decoder):
    single = ["gnn", "norm", "deformable", "ffn", "norm", "refine"]
    temporal = ["temp_gnn", "gnn", "norm", "deformable", "ffn", "norm", "refine"]
    return (single * num_single_frame_decoder + temporal * (num_decoder - num_single_frame_decoder))[2:]


def anchor_projection(anchor, T_src2dst, time_interval, official_yaw_order=True):
    """Moves boxes of the previous frame into the current one: center + velocity * dt, then the rigid
    transform T_src2dst [B, 4, 4] on the center, the yaw vector and the velocity. `time_interval` [B] is
    current - previous timestamp. With official_yaw_order the rotated (cos, sin) lands in the (sin, cos)
    slots, as in the official code."""
    rot = T_src2dst[:, None, :3, :3]
    center = anchor[..., 0:3] + anchor[..., VX:] * time_interval[:, None, None]
    center = torch.matmul(rot, center[..., None]).squeeze(-1) + T_src2dst[:, None, :3, 3]
    cs = torch.stack([anchor[..., COS_YAW], anchor[..., SIN_YAW]], dim=-1)
    yaw = torch.matmul(rot[..., :2, :2], cs[..., None]).squeeze(-1)  # (cos', sin')
    if not official_yaw_order:
        yaw = yaw.flip(-1)
    vel = torch.matmul(rot, anchor[..., VX:, None]).squeeze(-1)
    return torch.cat([center, anchor[..., 3:6], yaw, vel], dim=-1)


class Sparse4DHead(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        e = cfg.embed_dims
        self.instance_bank = InstanceBank(cfg.num_anchor, e, cfg.num_temp_instances, cfg.confidence_decay,
                                          cfg.default_time_interval, cfg.max_time_interval)
        self.anchor_encoder = SparseBox3DEncoder(cfg.anchor_embed_dims)
        self.operation_order = operation_order(cfg.num_decoder, cfg.num_single_frame_decoder)
        layers = []
        for op in self.operation_order:
            if op in ("gnn", "temp_gnn"):
                layers.append(MultiheadAttention(2 * e, cfg.num_groups))
            elif op == "norm":
                layers.append(nn.LayerNorm(e))
            elif op == "ffn":
                layers.append(AsymmetricFFN(2 * e, e, e * cfg.ffn_ratio))
            elif op == "deformable":
                layers.append(DeformableFeatureAggregation(e, cfg.num_groups, cfg.num_levels, cfg.num_cams,
                                                           cfg.num_learnable_pts, cfg.fix_scale,
                                                           cfg.mask_behind_camera))
            elif op == "refine":
                layers.append(SparseBox3DRefinementModule(e, 11, cfg.num_classes))
            else:  # pragma: no cover
                raise ValueError(op)
        self.layers = nn.ModuleList(layers)
        self.fc_before = nn.Linear(e, 2 * e, bias=False)
        self.fc_after = nn.Linear(2 * e, e, bias=False)
        spatial, starts = level_tables(cfg)
        self.register_buffer("spatial_shape", spatial, persistent=False)
        self.register_buffer("scale_start_index", starts, persistent=False)

    def graph_model(self, index, query, query_pos, key=None, key_pos=None, value=None):
        """Decoupled attention: q = [query, query_pos]; k = [key, key_pos] (default q); v = fc_before(value)
        (default: k, as mmcv's MultiheadAttention does when no value is given); identity = q."""
        q = torch.cat([query, query_pos], dim=-1)
        k = q if key is None else torch.cat([key, key_pos], dim=-1)
        v = k if value is None else self.fc_before(value)
        return self.fc_after(self.layers[index](q, k, v, identity=q))

    def _run(self, feature_maps, projection_mat, image_wh, temp=None):
        cfg = self.cfg
        bs = feature_maps.shape[0]
        bank = self.instance_bank
        instance_feature = bank.instance_feature[None].expand(bs, -1, -1)
        anchor = bank.anchor[None].expand(bs, -1, -1)
        if temp is None:
            temp_feature = temp_anchor = mask = None
            time_interval = torch.full((bs,), cfg.default_time_interval, dtype=anchor.dtype, device=anchor.device)
        else:
            temp_feature, cached_anchor, T_temp2cur, dt = temp
            mask = dt.abs() <= cfg.max_time_interval
            temp_anchor = anchor_projection(cached_anchor, T_temp2cur, dt, cfg.official_yaw_order)
            time_interval = torch.where((dt != 0) & mask, dt, torch.full_like(dt, cfg.default_time_interval))
        anchor_embed = self.anchor_encoder(anchor)
        temp_anchor_embed = None if temp_anchor is None else self.anchor_encoder(temp_anchor)
        n_pred, last = 0, len(self.operation_order) - 1
        cls = quality = selected = None
        for i, op in enumerate(self.operation_order):
            layer = self.layers[i]
            if op == "temp_gnn":
                instance_feature = self.graph_model(i, instance_feature, anchor_embed, temp_feature,
                                                    temp_anchor_embed, temp_feature)
            elif op == "gnn":
                instance_feature = self.graph_model(i, instance_feature, anchor_embed, value=instance_feature)
            elif op in ("norm", "ffn"):
                instance_feature = layer(instance_feature)
            elif op == "deformable":
                instance_feature = layer(instance_feature, anchor, anchor_embed, feature_maps, self.spatial_shape,
                                         self.scale_start_index, projection_mat, image_wh)
            elif op == "refine":
                need_cls = n_pred == cfg.num_single_frame_decoder - 1 or i == last
                anchor, cls, quality = layer(instance_feature, anchor, anchor_embed, time_interval, need_cls)
                n_pred += 1
                if n_pred == cfg.num_single_frame_decoder and temp is not None:
                    instance_feature, anchor, selected = self.update(instance_feature, anchor, cls, temp_feature,
                                                                     temp_anchor, mask)
                if i != last:
                    anchor_embed = self.anchor_encoder(anchor)
                if n_pred > cfg.num_single_frame_decoder and temp_anchor_embed is not None:
                    temp_anchor_embed = anchor_embed[:, :cfg.num_temp_instances]
        if temp is None:
            return instance_feature, anchor, cls, quality
        return instance_feature, anchor, cls, quality, selected

    def update(self, instance_feature, anchor, cls, temp_feature, temp_anchor, mask, index=None):
        """The bank's update after the single-frame decoder: the cached instances plus the
        num_anchor - num_temp_instances most confident current ones (where the previous frame is recent).
        `index` [B, A - Nt] imposes the selection instead (comparisons that sync a near-tie: deploy.py)."""
        if index is None:
            n = self.cfg.num_anchor - self.cfg.num_temp_instances
            confidence = cls.max(dim=-1).values
            index = topk_stable(confidence, n)
            if self.cfg.sort_selected:
                index = torch.sort(index, dim=1).values
        sel_feature = torch.cat([temp_feature, batched_rows(instance_feature, index)], dim=1)
        sel_anchor = torch.cat([temp_anchor, batched_rows(anchor, index)], dim=1)
        m = mask[:, None, None]
        return torch.where(m, sel_feature, instance_feature), torch.where(m, sel_anchor, anchor), index

    def forward_first(self, feature_maps, projection_mat, image_wh):
        """First frame (empty bank). Returns instance_feature [B, A, E], anchor (refined boxes) [B, A, 11],
        classification [B, A, num_classes] (logits), quality [B, A, 2] (logits)."""
        return self._run(feature_maps, projection_mat, image_wh)

    def forward_later(self, feature_maps, projection_mat, image_wh, cached_feature, cached_anchor, T_temp2cur,
                      time_interval):
        """A later frame: cached_feature [B, Nt, E] and cached_anchor [B, Nt, 11] from the previous frame's
        cache step, T_temp2cur [B, 4, 4] (previous lidar frame -> current), time_interval [B] (seconds, current -
        previous). Returns the four outputs of forward_first plus selected_index [B, A - Nt] (int64): the rows of
        the decoder-1 output that joined the cached instances (rows Nt... of the result, in this order) when the
        previous frame is recent."""
        return self._run(feature_maps, projection_mat, image_wh,
                         (cached_feature, cached_anchor, T_temp2cur, time_interval))


def cache_step(instance_feature, anchor, cls, prev_confidence, num_temp_instances, decay, return_index=False,
               sort_cache=True):
    """The instance bank's cache step between frames: confidence = sigmoid(max class logit); the first
    num_temp_instances rows (the instances carried over from the previous frame) keep at least
    decay * their previous confidence; the num_temp_instances most confident rows are cached (in row order;
    Sparse4D keeps them by descending confidence, an equivalent order: see below). Returns (cached_feature, cached_anchor, cached_confidence[, index])."""
    confidence = cls.max(dim=-1).values.sigmoid()
    if prev_confidence is not None:
        head = torch.maximum(prev_confidence * decay, confidence[:, :num_temp_instances])
        confidence = torch.cat([head, confidence[:, num_temp_instances:]], dim=1)
    # The num_temp_instances most confident rows, ties in row order (topk_stable), kept in ascending row order
    # (sort_cache): the head is permutation-equivariant over instances, so the cache's order changes only the
    # order of the next frame's rows, and a canonical order makes it independent of how near-equal
    # confidences are ranked. The C++ demo does the same.
    index = topk_stable(confidence, num_temp_instances)
    if sort_cache:
        index = torch.sort(index, dim=1).values
    conf = torch.gather(confidence, 1, index)
    out = (batched_rows(instance_feature, index), batched_rows(anchor, index), conf)
    return out + (index,) if return_index else out
