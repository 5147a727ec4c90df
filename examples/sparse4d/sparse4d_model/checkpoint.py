"""Loading Sparse4Dv3 state dicts with the official parameter names (HorizonRobotics/Sparse4D checkpoints:
mmdet ResNet `img_backbone.*`, mmdet FPN `img_neck.*`, `head.*` with layers indexed by operation order).

The model's modules are named like the official ones, so the mapping is by name; what the loader adds is the
unwrapping of mmcv/DDP checkpoints, dropping the training-only parts, and errors that name every missing,
unexpected or mis-shaped parameter (a checkpoint of another configuration fails with its shapes).
"""
import torch

# Parts of an official checkpoint the inference path does not use.
TRAINING_ONLY_PREFIXES = (
    "depth_branch.",  # DenseDepthNet: auxiliary depth supervision
)


def _unwrap(state_dict):
    for k in ("state_dict", "model", "module"):
        if isinstance(state_dict, dict) and k in state_dict and isinstance(state_dict[k], dict):
            state_dict = state_dict[k]
    out = {}
    for k, v in state_dict.items():
        out[k[len("module."):] if k.startswith("module.") else k] = v
    return out


def official_key_map(model):
    """{official name: model name} for every parameter and buffer the model loads (identity: the model uses
    the official names), plus the official names that are ignored, under None."""
    m = {k: k for k in model.state_dict()}
    for p in TRAINING_ONLY_PREFIXES:
        m[p + "*"] = None
    return m


def load_official_state_dict(model, state_dict):
    """Loads an official Sparse4Dv3 state dict (or checkpoint dict) into `model`. Raises KeyError/ValueError
    naming every missing, unexpected and mis-shaped entry; returns {"loaded": n, "ignored": [names]}."""
    sd = _unwrap(state_dict)
    own = model.state_dict()
    ignored = sorted(k for k in sd if k.startswith(TRAINING_ONLY_PREFIXES))
    sd = {k: v for k, v in sd.items() if not k.startswith(TRAINING_ONLY_PREFIXES)}
    missing = sorted(set(own) - set(sd))
    unexpected = sorted(set(sd) - set(own))
    shapes = [f"{k}: checkpoint {list(sd[k].shape)}, model {list(own[k].shape)}"
              for k in sorted(set(sd) & set(own)) if tuple(sd[k].shape) != tuple(own[k].shape)]
    problems = []
    if missing:
        problems.append(f"{len(missing)} parameter(s) missing from the state dict: " + ", ".join(missing[:20]) +
                        (" ..." if len(missing) > 20 else ""))
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected parameter(s): " + ", ".join(unexpected[:20]) +
                        (" ..." if len(unexpected) > 20 else ""))
    if shapes:
        cfg = model.cfg
        problems.append("shape mismatch (the checkpoint is of another configuration? this model: "
                        f"{cfg.num_anchor} anchors, {cfg.embed_dims} dims, {cfg.num_cams} cameras, ResNet stages "
                        f"{cfg.stage_blocks}): " + "; ".join(shapes[:20]))
    if problems:
        err = KeyError if (missing or unexpected) and not shapes else ValueError
        raise err("load_official_state_dict: " + " | ".join(problems))
    with torch.no_grad():
        for k, v in sd.items():
            own[k].copy_(v.to(own[k].dtype))
    return {"loaded": len(sd), "ignored": ignored}
