"""Prints opforge_cases.OP_CASES in a stable text form, one line per op and call, so that two
versions of the table can be compared with diff (no GPU needed; the inputs are made on the CPU):

  OPFORGE_BUILD_DIR=build PYTHONPATH=python python3 tests/python/print_op_cases.py > cases.txt

Each line names the op and what it shows: its dtypes, gradient check, constants, tolerances, and
for each dtype the inputs of make / second_shape / grad_make (dtype, shape and a hash of the values)
with their attributes and the reference's outputs on them.
"""
import hashlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opforge_cases import OP_CASES  # noqa: E402


def tensor(t):
    if not isinstance(t, torch.Tensor):
        return repr(t)
    b = t.detach().cpu().contiguous()
    flat = b.reshape(-1)
    raw = flat.view(torch.uint8) if b.dtype != torch.bool else flat.to(torch.uint8)
    h = hashlib.sha1(raw.numpy().tobytes()).hexdigest()[:16]
    return f"{str(b.dtype).replace('torch.', '')}{list(b.shape)}#{h}"


def call(make, dtype, seed):
    args, attrs = make(dtype, "cpu", seed)
    return args, attrs, "(" + ", ".join(tensor(a) for a in args) + f") attrs={sorted(attrs.items())!r}"


def main():
    for key in sorted(OP_CASES):
        c = OP_CASES[key]
        assert c.key == key, f"{key}: OpCase.key {c.key}"
        print(f"{key} | dtypes={[str(d) for d in c.dtypes]} | constants={tuple(c.constants)}"
              f" | tol={sorted((str(k), v) for k, v in c.tol.items())} | grad_tol={c.grad_tol!r}")
        if c.grad:
            print(f"{key} | grad dtype={c.grad[0]} inputs={c.grad[1]} kwargs={sorted(c.grad[2].items())}")
        for dtype in c.dtypes:
            for what, make in (("make", c.make), ("second_shape", c.second_shape), ("grad_make", c.grad_make)):
                if make is None:
                    print(f"{key} | {dtype} {what}: none")
                    continue
                args, attrs, text = call(make, dtype, 0)
                ref = c.reference(args, attrs)
                print(f"{key} | {dtype} {what}: {text} -> ({', '.join(tensor(r) for r in ref)})")


if __name__ == "__main__":
    main()
