"""Image backbone: ResNet (bottleneck, "pytorch" style) + FPN, and the packing of the multi-camera,
multi-scale features into the deformable aggregation's layout.

Parameter names follow mmdet's ResNet/FPN as Sparse4D uses them (img_backbone.layer1.0.conv1.weight,
img_neck.lateral_convs.0.conv.weight, ...), so official checkpoints load by name (see checkpoint.py).
"""
import torch
import torch.nn.functional as F
from torch import nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + identity)


class ResNet(nn.Module):
    """Returns the outputs of the four stages (strides 4, 8, 16, 32)."""

    def __init__(self, stage_blocks=(3, 4, 6, 3), base_channels=64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, base_channels, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(base_channels)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes = base_channels
        for i, n in enumerate(stage_blocks):
            planes = base_channels * 2 ** i
            stride = 1 if i == 0 else 2
            downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes * Bottleneck.expansion, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * Bottleneck.expansion))
            blocks = [Bottleneck(inplanes, planes, stride, downsample)]
            inplanes = planes * Bottleneck.expansion
            blocks += [Bottleneck(inplanes, planes) for _ in range(1, n)]
            self.add_module(f"layer{i + 1}", nn.Sequential(*blocks))

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        outs = []
        for i in range(4):
            x = getattr(self, f"layer{i + 1}")(x)
            outs.append(x)
        return outs


class ConvModule(nn.Module):
    """mmcv's ConvModule without norm/activation: only the `conv` attribute (for the parameter names)."""

    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=True)

    def forward(self, x):
        return self.conv(x)


class FPN(nn.Module):
    """mmdet FPN with num_outs == number of inputs (Sparse4Dv3: no extra levels): 1x1 laterals, top-down
    nearest-neighbour upsampling and addition, 3x3 output convolutions."""

    def __init__(self, in_channels, out_channels=256):
        super().__init__()
        self.lateral_convs = nn.ModuleList([ConvModule(c, out_channels, 1) for c in in_channels])
        self.fpn_convs = nn.ModuleList([ConvModule(out_channels, out_channels, 3) for _ in in_channels])

    def forward(self, inputs):
        laterals = [conv(x) for conv, x in zip(self.lateral_convs, inputs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[2:],
                                                              mode="nearest")
        return [conv(x) for conv, x in zip(self.fpn_convs, laterals)]


def pack_features(feature_maps, batch, num_cams):
    """[B*Ncam, C, H_l, W_l] per level -> [B, Ncam * sum_l H_l*W_l, C]: camera-major, then level, then
    row-major pixels (row start[c, l] + y*W_l + x), the deformable aggregation's mc_ms_feat."""
    c = feature_maps[0].shape[1]
    flat = torch.cat([f.reshape(batch, num_cams, c, -1) for f in feature_maps], dim=-1)  # [B, Ncam, C, S]
    return flat.permute(0, 1, 3, 2).reshape(batch, -1, c)


def level_tables(cfg):
    """spatial_shape [Ncam, L, 2] and scale_start_index [Ncam, L] (int32) of the packed features."""
    shapes = cfg.level_shapes
    spatial = torch.tensor([shapes] * cfg.num_cams, dtype=torch.int32)
    starts = []
    for c in range(cfg.num_cams):
        s, row = c * cfg.rows_per_cam, []
        for h, w in shapes:
            row.append(s)
            s += h * w
        starts.append(row)
    return spatial, torch.tensor(starts, dtype=torch.int32)
