"""Sparse4Dv3 (inference path) in PyTorch, written for opforge's flagship demo (examples/sparse4d).

    from sparse4d_model import FULL, REDUCED, build_model, make_frames
    model = build_model(FULL, seed=0)              # random weights, fixed seed
    load_official_state_dict(model, state_dict)    # or official weights, by their names

Import with examples/sparse4d on sys.path (the scripts and tests/python/test_sparse4d*.py do that).
"""
from .config import CONFIGS, FULL, REDUCED, Sparse4DConfig
from .model import (HEAD_INPUTS_FIRST, HEAD_INPUTS_LATER, HEAD_OUTPUTS, HEAD_OUTPUTS_LATER, BackboneGraph, HeadFirstGraph,
                    HeadLaterGraph, Sparse4D, Sparse4DTracker, build_model, camera_rig, init_random_weights,
                    make_frames, temp2cur, write_frames)
from .head import cache_step
from .checkpoint import load_official_state_dict, official_key_map

__all__ = ["CONFIGS", "FULL", "REDUCED", "Sparse4DConfig", "Sparse4D", "Sparse4DTracker", "build_model",
           "init_random_weights", "make_frames", "write_frames", "camera_rig", "temp2cur", "cache_step",
           "BackboneGraph", "HeadFirstGraph", "HeadLaterGraph", "HEAD_INPUTS_FIRST", "HEAD_INPUTS_LATER",
           "HEAD_OUTPUTS", "HEAD_OUTPUTS_LATER", "load_official_state_dict", "official_key_map"]
