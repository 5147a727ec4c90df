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
Launching such images from the C++ runtime (aot_impl) is not built yet (issue 16).
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

    @property
    def block(self):
        return (32 * self.num_warps, 1, 1)


def _arch(arch):
    m = re.fullmatch(r"sm_(\d)(\d+)a?", str(arch))
    if not m:
        raise _errors.InvalidArgumentError(f"opforge.plugin.triton: architecture {arch!r} is not of the form sm_XY")
    return int(m.group(1) + m.group(2))


def compile(fn, signature, constexprs=None, arch="sm_90", num_warps=4, num_stages=3):  # noqa: A001
    """Compiles the @triton.jit function `fn` for `arch`. signature: {parameter: Triton type}
    ("*fp32", "*fp16", "i32", "i64", "fp32", ...) for every parameter that is not a constexpr;
    constexprs: {parameter: value}."""
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
    return KernelImage(name=k.metadata.name, cubin=bytes(k.asm["cubin"]), ptx=k.asm["ptx"], arch=f"sm_{cc}",
                       num_warps=int(k.metadata.num_warps), shared=int(k.metadata.shared))
