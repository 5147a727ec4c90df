"""opforge.plugin.triton: OpenAI Triton kernels compiled ahead of time for a GPU architecture, with
no GPU in the machine (Triton's compiler and CUDA's ptxas only), into what an AOT op carries: the
kernel's name, its cubin (and PTX), the shared memory and warps it was compiled for.

    import triton, triton.language as tl
    from opforge.plugin import triton as oft

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr): ...

    img = oft.compile(add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, {"BLOCK": 256}, arch="sm_90")
    img.name, len(img.cubin), img.block    # "add", bytes of an ELF image, (128, 1, 1) for 4 warps

Errors (a Triton that is missing, a signature that does not match the kernel's parameters, an
architecture string that is not sm_XY) raise opforge errors naming the kernel and the parameter.

An aot_impl returns `oft.launch(img, grid, extra_args)`: the image, the launch parameters (block
from the warps, the shared memory, the grid as shape expressions) and, after the outputs, the two
scratch pointers Triton 3.x kernels take (sized from the compiled metadata; null when a kernel
needs none). An impl runs a Triton kernel just in time on the engine's stream with
`oft.jit_launch(kernel, grid, inp, out, n, stream=stream, BLOCK=256)` (CUDA tensors).
"""
import dataclasses
import re

from .. import _errors


@dataclasses.dataclass(frozen=True)
class KernelImage:
    name: str          # the kernel's symbol in the image
    cubin: bytes       # an ELF image for `arch`
    ptx: str
    arch: str          # "sm_90"
    num_warps: int
    shared: int        # bytes of dynamic shared memory the kernel needs per block
    global_scratch_size: int = 0   # bytes of global scratch per program (Triton 3.x)
    global_scratch_align: int = 1
    profile_scratch_size: int = 0
    profile_scratch_align: int = 1
    num_ctas: int = 1
    cooperative: bool = False
    pdl: bool = False
    scratch_params: int = 2   # pointers the kernel takes after its own parameters (Triton >= 3.5: 2)

    @property
    def block(self):
        return (32 * self.num_warps, 1, 1)


def launch(img, grid, extra_args=()):
    """What an aot_impl returns to launch `img` on `grid` (1 to 3 ints or shape expressions):
    (name, cubin, KernelLaunchParams, SymExprs(extra_args)). The kernel's parameters must be the
    op's inputs, then `extra_args`, then its outputs (TensorRT's order), then Triton's two scratch
    pointers, which this adds."""
    from . import KernelLaunchParams, SymExprs
    from ._types import _Scratch
    if not isinstance(img, KernelImage):
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton.launch: expected a KernelImage (from "
                                           f"opforge.plugin.triton.compile), got {type(img).__name__}")
    if img.num_ctas != 1 or img.cooperative or img.pdl:
        raise _errors.UnsupportedError(f"opforge.plugin.triton.launch: kernel {img.name!r} was compiled with "
                                       f"num_ctas={img.num_ctas}, cooperative grid {img.cooperative}, PDL {img.pdl}; "
                                       f"AOT launches support num_ctas=1 without cooperative grids or PDL")
    g = list(grid) if isinstance(grid, (tuple, list)) else [grid]
    if not 1 <= len(g) <= 3:
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton.launch: the grid has 1 to 3 dimensions, got {grid!r}")
    g += [1] * (3 - len(g))
    p = KernelLaunchParams(grid_x=g[0], grid_y=g[1], grid_z=g[2], block_x=img.block[0], shared_mem=img.shared)
    p.trailing_args = [_Scratch(img.global_scratch_size, img.global_scratch_align),
                       _Scratch(img.profile_scratch_size, img.profile_scratch_align)][:img.scratch_params]
    return img.name, img.cubin, p, SymExprs(list(extra_args))


def jit_launch(kernel, grid, *args, stream, **kwargs):
    """Runs the @triton.jit `kernel` on `grid` from an impl, on the engine's CUDA stream `stream`.
    ofp.Tensor arguments are passed as zero-copy torch views; other arguments and the keyword
    arguments (constexprs, num_warps) as Triton takes them."""
    import torch

    from ._types import Tensor
    conv = [torch.as_tensor(a, device="cuda") if isinstance(a, Tensor) else a for a in args]
    if not stream:
        raise _errors.InvalidArgumentError("opforge.plugin.triton.jit_launch: no CUDA stream (a CPU plan's impl "
                                           "gets stream 0: run Triton kernels only on CUDA)")
    with torch.cuda.stream(torch.cuda.ExternalStream(int(stream))):
        return kernel[grid](*conv, **kwargs)


def _arch(arch):
    m = re.fullmatch(r"sm_(\d)(\d+)a?", str(arch))
    if not m:
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton: architecture {arch!r} is not of the form sm_XY")
    return int(m.group(1) + m.group(2))


def compile(fn, signature, constexprs=None, arch=None, num_warps=4, num_stages=3):  # noqa: A001
    """Compiles the @triton.jit function `fn` for `arch` ("sm_90"; None: the GPU the running
    aot_impl compiles for, sm_90 outside one). signature: {parameter: Triton type} ("*fp32",
    "*fp16", "i32", "i64", "fp32", ...) for every parameter that is not a constexpr;
    constexprs: {parameter: value}."""
    if arch is None:
        from ._aot import current_arch
        arch = f"sm_{current_arch()}"
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as e:
        raise _errors.UnsupportedError(f"opforge.plugin.triton needs Triton ({e})") from None
    constexprs = dict(constexprs or {})
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", repr(fn))
    params = list(getattr(fn, "arg_names", []) or [])
    if not params:
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton: {name!r} is not a @triton.jit function")
    sig = {}
    for p in params:
        if p in constexprs:
            sig[p] = "constexpr"
        elif p in signature:
            sig[p] = signature[p]
        else:
            raise _errors.InvalidArgumentError(f"opforge.plugin.triton: kernel {name!r}: parameter {p!r} has no type in "
                                               f"the signature and no constexpr value")
    extra = [p for p in list(signature) + list(constexprs) if p not in params]
    if extra:
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton: kernel {name!r} has no parameter {extra[0]!r} "
                                           f"(its parameters: {', '.join(params)})")
    cc = _arch(arch)
    try:
        src = ASTSource(fn=fn, signature=sig, constexprs=constexprs)
        k = triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": num_warps,
                                                                            "num_stages": num_stages})
    except Exception as e:  # Triton's own errors: the message says what
        raise _errors.KernelError(f"opforge.plugin.triton: compiling {name!r} for {arch}: {e}") from None
    md = k.metadata
    # Triton 3.x appends scratch pointers to the kernel's parameters (global, then profile scratch):
    # how many, from the PTX's parameter list against the signature's.
    from ._aot import param_count
    n_ptx = param_count(k.asm["ptx"], md.name)
    n_sig = sum(1 for t in sig.values() if t != "constexpr")
    scratch_params = n_ptx - n_sig if n_ptx is not None and 0 <= n_ptx - n_sig <= 2 else 0
    return KernelImage(name=md.name, cubin=bytes(k.asm["cubin"]), ptx=k.asm["ptx"], arch=f"sm_{cc}",
                       num_warps=int(md.num_warps), shared=int(md.shared),
                       global_scratch_size=int(getattr(md, "global_scratch_size", 0) or 0),
                       global_scratch_align=int(getattr(md, "global_scratch_align", 1) or 1),
                       profile_scratch_size=int(getattr(md, "profile_scratch_size", 0) or 0),
                       profile_scratch_align=int(getattr(md, "profile_scratch_align", 1) or 1),
                       num_ctas=int(getattr(md, "num_ctas", 1) or 1),
                       cooperative=bool(getattr(md, "launch_cooperative_grid", False)),
                       pdl=bool(getattr(md, "launch_pdl", False)), scratch_params=scratch_params)
