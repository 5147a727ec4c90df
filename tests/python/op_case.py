"""How a contrib op's Python test case is written, and where the cases are found.

Each op's case lives in its own folder, beside its code: ops/contrib/<op>/<op>_cases.py defines
CASE = OpCase(...) (and the op's pure-PyTorch float64 reference), so a new op is one folder.
op_cases() imports every such module (in folder order) and returns {key: OpCase};
opforge_cases.OP_CASES is that table, and the tests that walk the op registry
(test_torch_ops.py: every op of the library has a case) fail when an op has none.
A case module imports what it needs from here, and another op's module with case_module(folder)
(a gradient op's reference is the autograd of its forward's); it never imports opforge_cases.
"""
import importlib.util
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTRIB = ROOT / "ops" / "contrib"


class OpCase:
    """How one op is tested: calls (args, attrs) per dtype, the reference, which inputs have
    gradients, the dtype of the gradient check, which inputs are constants in an exported model."""

    def __init__(self, key, make, reference, dtypes, grad=None, constants=(), second_shape=None, tol=None,
                 grad_tol=None, grad_make=None):
        self.key = key
        self.make = make              # (dtype, device, seed) -> (args tuple, attrs dict)
        self.reference = reference    # (args, attrs) -> tuple of expected outputs
        self.dtypes = dtypes
        self.grad = grad              # (dtype, inputs with gradients, gradcheck kwargs) or None
        self.constants = constants    # input indices held as buffers (initializers) in exported models
        self.second_shape = second_shape  # another call with other shapes (dynamic-shape checks)
        self.tol = tol or {}
        self.grad_tol = grad_tol
        self.grad_make = grad_make or make  # inputs for the gradient checks (away from kinks)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(shape, dtype, device, seed, scale=1.0):
    """Normal values made in float64 from `seed`, then converted (the same values for every dtype)."""
    return (torch.randn(shape, generator=gen(seed), dtype=torch.float64) * scale).to(dtype).to(device)


def case_module(folder):
    """The case module of ops/contrib/<folder> (imported once)."""
    name = f"opforge_op_cases.{folder}"
    if name in sys.modules:
        return sys.modules[name]
    path = CONTRIB / folder / f"{folder}_cases.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no case module for the op folder {folder}")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


def op_cases():
    """{key: OpCase} of every ops/contrib/<op>/<op>_cases.py; two cases of one key are an error."""
    cases = {}
    for path in sorted(CONTRIB.glob("*/*_cases.py")):
        folder = path.parent.name
        if path.name != f"{folder}_cases.py":
            raise RuntimeError(f"{path}: a case module is named after its folder ({folder}_cases.py)")
        case = getattr(case_module(folder), "CASE", None)
        if not isinstance(case, OpCase):
            raise RuntimeError(f"{path} defines no CASE = OpCase(...)")
        if case.key in cases:
            raise RuntimeError(f"{path}: a second case for {case.key}")
        cases[case.key] = case
    return cases
