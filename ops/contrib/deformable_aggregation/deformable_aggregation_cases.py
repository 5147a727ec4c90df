"""The Python test case of opforge::DeformableAggregation (tests/python/op_case.py), with the
float64 reference and the input maker that the gradient op's case, the models and other tests use."""
import torch
import torch.nn.functional as F

from op_case import OpCase

# Sparse4Dv3 (ResNet-50 FPN, 256x704 input, 6 cameras): ../shared/reference/deformable-aggregation.md
SPARSE4D_FULL = dict(B=1, A=900, P=13, ncam=6, levels=((64, 176), (32, 88), (16, 44), (8, 22)), C=256, G=8)
# The same structure, small enough for the CPU references in CI.
SPARSE4D_SMALL = dict(B=2, A=24, P=5, ncam=3, levels=((8, 12), (4, 6), (2, 3)), C=32, G=4)
DA_SMALL2 = dict(B=1, A=10, P=3, ncam=2, levels=((6, 8), (3, 4)), C=16, G=2)


def da_f64(feat, spatial, start, loc, weights):
    """Deformable aggregation as grid_sample (bilinear, zeros, align_corners=False) at 2*loc-1,
    times the open-interval mask (../shared/reference/deformable-aggregation.md), in float64."""
    feat, loc, weights = feat.double(), loc.double(), weights.double()
    B, _, C = feat.shape
    _, A, P, ncam, _ = loc.shape
    L, G = spatial.shape[1], weights.shape[-1]
    out = torch.zeros(B, A, C, dtype=torch.float64, device=feat.device)
    for c in range(ncam):
        u, v = loc[:, :, :, c, 0], loc[:, :, :, c, 1]
        mask = ((u > 0) & (u < 1) & (v > 0) & (v < 1)).double()
        for lv in range(L):
            H, W = int(spatial[c, lv, 0]), int(spatial[c, lv, 1])
            s = int(start[c, lv])
            fm = feat[:, s:s + H * W, :].reshape(B, H, W, C).permute(0, 3, 1, 2)
            samp = F.grid_sample(fm, loc[:, :, :, c, :] * 2 - 1, mode="bilinear", padding_mode="zeros",
                                 align_corners=False)  # [B, C, A, P]
            wt = weights[:, :, :, c, lv, :].repeat_interleave(C // G, dim=-1)  # [B, A, P, C]
            out = out + (samp.permute(0, 2, 3, 1) * wt * mask[..., None]).sum(2)
    return out


def da_ref(feat, spatial, start, loc, weights):
    return da_f64(feat, spatial, start, loc, weights).to(feat.dtype)


def da_tables(ncam, levels, device="cpu"):
    per_cam = sum(h * w for h, w in levels)
    spatial = torch.tensor([[list(hw) for hw in levels]] * ncam, dtype=torch.int32, device=device)
    offs = [sum(h * w for h, w in levels[:i]) for i in range(len(levels))]
    start = torch.tensor([[c * per_cam + o for o in offs] for c in range(ncam)], dtype=torch.int32, device=device)
    return spatial, start, per_cam * ncam


def da_inputs(B, A, P, ncam, levels, C, G, dtype=torch.float32, device="cpu", seed=0, valid=0.8, borders=True):
    """Features, tables, locations (a fraction `valid` inside (0, 1), the rest outside, with
    `borders` two exactly on the mask's border) and softmax weights. Gradient checks use
    borders=False: the mask is discontinuous there."""
    gen = torch.Generator().manual_seed(seed)
    spatial, start, F_ = da_tables(ncam, levels)
    feat = torch.randn(B, F_, C, generator=gen)
    loc = torch.rand(B, A, P, ncam, 2, generator=gen) * 0.96 + 0.02
    outside = torch.rand(B, A, P, ncam, generator=gen) > valid
    loc[outside] = loc[outside] * 0.5 + torch.tensor([1.05, -0.4])
    if borders:
        loc[0, 0, 0, 0] = torch.tensor([0.0, 0.5])  # on the mask's border: masked
        loc[0, 0, 1 % P, 0] = torch.tensor([0.5, 1.0])
    logits = torch.randn(B, A, P * ncam * len(levels), G, generator=gen)
    weights = logits.softmax(-2).reshape(B, A, P, ncam, len(levels), G)
    loc_t = torch.float64 if dtype == torch.float64 else torch.float32
    return (feat.to(dtype).to(device), spatial.to(device), start.to(device), loc.to(loc_t).to(device),
            weights.to(loc_t).to(device))


def da_make(size, borders=True):
    return lambda dtype, device, seed=0: (da_inputs(**size, dtype=dtype, device=device, seed=seed,
                                                    borders=borders), {})


CASE = OpCase(
    "opforge::DeformableAggregation", da_make(SPARSE4D_SMALL), lambda a, k: (da_ref(*a),),
    [torch.float32, torch.float16, torch.bfloat16, torch.float64],
    grad=(torch.float64, [0, 3, 4], {}), grad_make=da_make(DA_SMALL2, borders=False),
    constants=(1, 2), second_shape=da_make(DA_SMALL2),
    # Sums of P*Ncam*L*4 = 180 products: float32 inputs are exact, the result is rounded once, but
    # half-precision features give outputs ~|1| whose rounding is relative to the largest term.
    tol={torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2)},
)
