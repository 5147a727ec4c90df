"""opforge.plugin.triton: a Triton kernel compiled ahead of time for sm_90 on a machine without a GPU
(Triton's compiler and ptxas only) — what an AOT op will carry — and the errors of a bad call."""
import struct

import pytest

import opforge
from opforge.plugin import triton as oft

triton = pytest.importorskip("triton")
import triton_kernels  # noqa: E402

SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}


def test_a_kernel_compiles_for_sm90_without_a_gpu():
    img = oft.compile(triton_kernels.add_kernel, SIG, {"BLOCK": 256}, arch="sm_90", num_warps=4)
    assert img.name == "add_kernel" and img.arch == "sm_90" and img.block == (128, 1, 1)
    c = img.cubin
    assert c[:4] == b"\x7fELF" and c[4] == 2  # ELF64
    assert struct.unpack_from("<H", c, 18)[0] == 190  # EM_CUDA
    flags = struct.unpack_from("<I", c, 48)[0]
    assert 90 in (flags & 0xFF, (flags >> 8) & 0xFF), hex(flags)  # the SM the image is for
    assert b"add_kernel" in c and ".target sm_90" in img.ptx
    assert oft.compile(triton_kernels.add_kernel, SIG, {"BLOCK": 128}, num_warps=2).block == (64, 1, 1)


def test_bad_calls_name_the_kernel_and_the_parameter():
    with pytest.raises(opforge.InvalidArgumentError, match=r"add_kernel.*'n' has no type"):
        oft.compile(triton_kernels.add_kernel, {k: v for k, v in SIG.items() if k != "n"}, {"BLOCK": 256})
    with pytest.raises(opforge.InvalidArgumentError, match=r"add_kernel.*no parameter 'z'"):
        oft.compile(triton_kernels.add_kernel, dict(SIG, z="i32"), {"BLOCK": 256})
    with pytest.raises(opforge.InvalidArgumentError, match="sm_XY"):
        oft.compile(triton_kernels.add_kernel, SIG, {"BLOCK": 256}, arch="hopper")
    with pytest.raises(opforge.InvalidArgumentError, match="not a @triton.jit function"):
        oft.compile(len, SIG)
    with pytest.raises(opforge.KernelError, match="compiling 'add_kernel' for sm_90"):
        oft.compile(triton_kernels.add_kernel, dict(SIG, x="*nonsense"), {"BLOCK": 256})
