"""Sparse4Dv3 configuration: the published one (FULL) and the reduced one CI runs on the CPU (REDUCED).

FULL follows HorizonRobotics/Sparse4D's sparse4dv3_temporal_r50_1x8_bs6_256x704 config: 6 cameras at
256x704, ResNet-50 + FPN (strides 4/8/16/32, 256 channels), 900 anchors, 600 of them cached across frames
with confidence decay 0.6, 6 decoders (1 single-frame + 5 temporal), decoupled attention (feature and anchor
embedding concatenated: 512 dims inside attention, 8 heads), deformable aggregation with 13 keypoints (7 fixed +
6 learned), 4 levels, 8 groups, camera embedding, asymmetric FFN (512 -> 1024 -> 256), box refinement with yaw,
10 classes, quality (centerness, yawness).

REDUCED keeps every structural element (same head code path, temporal decoders, instance bank, the custom
op) and shrinks what costs CPU time: one camera at 64x192, a narrow ResNet with one bottleneck per stage
(base width 16, so stage outputs 64/128/256/512 instead of 256/512/1024/2048), 48 anchors with 32 cached.
"""
import dataclasses
from dataclasses import dataclass, field

FIX_SCALE = (
    (0.0, 0.0, 0.0),
    (0.45, 0.0, 0.0),
    (-0.45, 0.0, 0.0),
    (0.0, 0.45, 0.0),
    (0.0, -0.45, 0.0),
    (0.0, 0.0, 0.45),
    (0.0, 0.0, -0.45),
)

# Box layout (undecoded): x, y, z, log w, log l, log h, sin yaw, cos yaw, vx, vy, vz.
X, Y, Z, W, L, H, SIN_YAW, COS_YAW, VX, VY, VZ = range(11)
CNS, YNS = 0, 1  # quality: centerness, yawness


@dataclass(frozen=True)
class Sparse4DConfig:
    # cameras and images
    num_cams: int = 6
    image_hw: tuple = (256, 704)
    # backbone: ResNet (bottleneck blocks, "pytorch" style: stride on the 3x3 conv) + FPN
    stage_blocks: tuple = (3, 4, 6, 3)  # ResNet-50
    base_channels: int = 64
    strides: tuple = (4, 8, 16, 32)
    # head
    embed_dims: int = 256
    num_groups: int = 8
    num_anchor: int = 900
    num_temp_instances: int = 600
    num_decoder: int = 6
    num_single_frame_decoder: int = 1
    num_classes: int = 10
    num_learnable_pts: int = 6
    fix_scale: tuple = FIX_SCALE
    anchor_embed_dims: tuple = (128, 32, 32, 64)  # pos, size, yaw, velocity ("cat" mode: sum = embed_dims)
    ffn_ratio: int = 4
    # instance bank
    confidence_decay: float = 0.6
    default_time_interval: float = 0.5
    max_time_interval: float = 2.0
    # Deployment choices (see examples/sparse4d/README.md):
    # - keypoints at depth <= 1e-5 in a camera get location -1 (masked by the op) instead of the official
    #   clamp(depth, min=1e-5), which lets a point behind the camera with a tiny image coordinate through;
    mask_behind_camera: bool = True
    # - the top-k picks (the in-head instance update, the cache between frames) are kept in ascending row order
    #   instead of by confidence: the head is permutation-equivariant over instances, so this changes only the
    #   row order, and makes it independent of how near-equal confidences are ranked. Ties (anchors that see
    #   no image have identical scores) keep the lower row first in any case.
    sort_selected: bool = True
    # - the official anchor_projection writes the rotated yaw as (cos, sin) into the (sin, cos) slots
    #   (marked "TODO: Fix bug" upstream); official checkpoints are trained with it, so it is kept.
    official_yaw_order: bool = True
    name: str = "full"

    @property
    def num_levels(self):
        return len(self.strides)

    @property
    def num_pts(self):
        return len(self.fix_scale) + self.num_learnable_pts

    @property
    def level_shapes(self):
        h, w = self.image_hw
        return [(h // s, w // s) for s in self.strides]

    @property
    def rows_per_cam(self):
        return sum(h * w for h, w in self.level_shapes)

    @property
    def num_rows(self):
        return self.rows_per_cam * self.num_cams

    @property
    def stage_channels(self):
        return tuple(self.base_channels * 4 * 2 ** i for i in range(4))

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)

    def check(self):
        h, w = self.image_hw
        if h % 32 or w % 32:
            raise ValueError(f"image size {self.image_hw} must be divisible by 32")
        if sum(self.anchor_embed_dims) != self.embed_dims:
            raise ValueError("anchor_embed_dims must add up to embed_dims")
        if self.embed_dims % self.num_groups:
            raise ValueError("embed_dims must be divisible by num_groups")
        if not 0 < self.num_temp_instances < self.num_anchor:
            raise ValueError("need 0 < num_temp_instances < num_anchor")
        return self


FULL = Sparse4DConfig().check()
REDUCED = Sparse4DConfig(num_cams=1, image_hw=(64, 192), stage_blocks=(1, 1, 1, 1), base_channels=16,
                         num_anchor=48, num_temp_instances=32, name="reduced").check()
CONFIGS = {"full": FULL, "reduced": REDUCED}
