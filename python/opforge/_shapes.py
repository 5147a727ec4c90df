"""Data types and symbolic dimensions on the Python side.

Data types are ONNX TensorProto numbers, as in the engine (include/opforge/tensor.h).
Dimension expressions come from the C++ shape rules (opforge::DimExpr) as an int (constant), a str
(symbol) or a tuple (op, lhs, rhs), op in + - * floordiv ceildiv min max. `evaluate` folds one with
a choice of arithmetic: SymInt (PyTorch fake kernels), int-or-None (TorchScript export), strings
(ONNX dim_param text).
"""
import numpy as np

DTYPE_NAMES = {1: "FP32", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64", 9: "BOOL",
               10: "FP16", 11: "FP64", 12: "UINT32", 13: "UINT64", 16: "BF16", 17: "FP8E4M3", 19: "FP8E5M2"}

_NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
          10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_NUMPY_TO_CODE = {np.dtype(v): k for k, v in _NUMPY.items()}


def dtype_name(code):
    return DTYPE_NAMES.get(code, f"UNDEFINED({code})")


def numpy_dtype(code):
    try:
        return np.dtype(_NUMPY[code])
    except KeyError:
        raise TypeError(f"opforge dtype {dtype_name(code)} has no NumPy equivalent") from None


def code_of_numpy(dtype):
    try:
        return _NUMPY_TO_CODE[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"NumPy dtype {np.dtype(dtype)} is not an opforge data type "
                        f"(supported: {', '.join(str(np.dtype(v)) for v in _NUMPY.values())})") from None


def _torch_maps():
    import torch
    m = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32, 7: torch.int64,
         9: torch.bool, 10: torch.float16, 11: torch.float64, 16: torch.bfloat16}
    for code, name in ((4, "uint16"), (12, "uint32"), (13, "uint64"), (17, "float8_e4m3fn"), (19, "float8_e5m2")):
        if hasattr(torch, name):
            m[code] = getattr(torch, name)
    return m, {v: k for k, v in m.items()}


_TORCH = None


def torch_dtype(code):
    global _TORCH
    if _TORCH is None:
        _TORCH = _torch_maps()
    try:
        return _TORCH[0][code]
    except KeyError:
        raise TypeError(f"opforge dtype {dtype_name(code)} has no PyTorch equivalent") from None


def code_of_torch(dtype):
    """The ONNX number of a torch dtype, or None when opforge has none (complex, float8 FNUZ...)."""
    global _TORCH
    if _TORCH is None:
        _TORCH = _torch_maps()
    return _TORCH[1].get(dtype)


# ---- dimension expressions ------------------------------------------------------------------

def evaluate(expr, leaf, binop):
    """Folds a dimension expression: leaf(int | str) for constants and symbols, binop(op, a, b)."""
    if isinstance(expr, tuple):
        op, a, b = expr
        return binop(op, evaluate(a, leaf, binop), evaluate(b, leaf, binop))
    return leaf(expr)


def _ceildiv(a, b):
    return -((-a) // b)


def symint_binop(op, a, b):
    """Arithmetic on ints and torch.SymInts (floor division as in the engine: rounds down)."""
    import torch
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "floordiv":
        return a // b
    if op == "ceildiv":
        return _ceildiv(a, b)
    if op == "min":
        return torch.sym_min(a, b)
    if op == "max":
        return torch.sym_max(a, b)
    raise ValueError(f"unknown dimension operation {op!r}")


def int_or_none_binop(op, a, b):
    """Arithmetic where None means unknown (any operand unknown: the result is unknown)."""
    if a is None or b is None:
        return None
    if op in ("floordiv", "ceildiv") and b == 0:
        return None
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "floordiv": lambda: a // b,
            "ceildiv": lambda: _ceildiv(a, b), "min": lambda: min(a, b), "max": lambda: max(a, b)}[op]()


def text_binop(op, a, b):
    """Builds ONNX dim_param text; constants stay ints while both operands are ints."""
    if isinstance(a, int) and isinstance(b, int):
        r = int_or_none_binop(op, a, b)
        if r is not None:
            return r
    if op == "+":
        return f"{a}+{b}"
    if op == "-":
        return f"{a}-{_paren(b)}"
    if op == "*":
        return f"{_paren(a)}*{_paren(b)}"
    return f"{op}({a},{b})"


def _paren(x):
    s = str(x)
    return f"({s})" if any(c in s for c in "+-") and not s.startswith(("floordiv(", "ceildiv(", "min(", "max(")) else s


def to_symint(expr, symbols):
    """Evaluates over ints/SymInts; `symbols` maps symbol names to values."""
    def leaf(x):
        if isinstance(x, str):
            return symbols[x]
        return x
    return evaluate(expr, leaf, symint_binop)


def to_int_or_none(expr, symbols):
    def leaf(x):
        if isinstance(x, str):
            return symbols.get(x)
        return x
    return evaluate(expr, leaf, int_or_none_binop)


def to_text(expr, symbols):
    """int when the expression is constant under `symbols` (name -> int or str), else text."""
    def leaf(x):
        if isinstance(x, str):
            return symbols.get(x, x)
        return x
    return evaluate(expr, leaf, text_binop)
