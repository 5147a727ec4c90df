"""Whether ONNX Runtime's CPU integer kernels can referee opforge's INT8 arithmetic with full-range weights.

On an x86 CPU without VNNI (AVX2 only), ONNX Runtime's u8s8 QLinearConv / QLinearMatMul kernels add
pairs of products in 16-bit lanes that saturate (vpmaddubsw), so with full-range INT8 weights their
results are a few output steps from exact 32-bit accumulation (opforge's); ONNX Runtime's quantizer
offers reduce_range (7-bit weights) for such CPUs, and with it both agree exactly. The Q/DQ tests
quantize with reduce_range=not int8_accumulates_exactly().
"""


def int8_accumulates_exactly():
    """True unless this is an x86 CPU with AVX2 and no VNNI (or /proc/cpuinfo cannot be read: assume yes)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return True
    if "avx2" not in flags:
        return True  # not an x86 CPU whose integer kernels use vpmaddubsw
    return any(v in flags for v in ("avx512_vnni", "avx_vnni", "avx512vnni"))
