"""The values Python ops compute with: data types, symbolic shapes (opforge's C++ DimExpr),
tensor descriptions for shape rules, tensors for impls, autotune combinations."""
import enum
import threading

import numpy as np

from .. import _errors, _shapes
from .._ops import _C

DimExpr = _C.DimExpr


class DataType(enum.IntEnum):
    """opforge's data types (ONNX TensorProto numbers, as in include/opforge/tensor.h)."""

    FLOAT32 = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    BOOL = 9
    FLOAT16 = 10
    FLOAT64 = 11
    UINT32 = 12
    UINT64 = 13
    BFLOAT16 = 16
    # TensorRT's and opforge's combination names.
    FLOAT = 1
    FP32 = 1
    HALF = 10
    FP16 = 10
    DOUBLE = 11
    BF16 = 16

    @property
    def np_dtype(self):
        return _shapes.numpy_dtype(int(self))

    @property
    def itemsize(self):
        return 2 if self == DataType.BFLOAT16 else _shapes.numpy_dtype(int(self)).itemsize


_BY_NAME = {n.lower(): m for n, m in DataType.__members__.items()}
_BY_NAME.update({"float": DataType.FLOAT32, "bfloat16": DataType.BFLOAT16, "bool_": DataType.BOOL})


def dtype_of(x):
    """A DataType from a DataType or its number, a NumPy dtype or type (np.int32, "int32"), a torch
    dtype, or a name ("FP16", "float16")."""
    if isinstance(x, DataType):
        return x
    if isinstance(x, bool):
        raise TypeError(f"{x!r} is not a data type")
    if isinstance(x, (int, np.integer)):
        return DataType(int(x))
    if isinstance(x, str) and x.lower() in _BY_NAME:
        return _BY_NAME[x.lower()]
    if type(x).__module__ == "torch" and type(x).__name__ == "dtype":
        code = _shapes.code_of_torch(x)
        if code is not None:
            return DataType(code)
    try:
        return DataType(_shapes.code_of_numpy(np.dtype(x)))
    except TypeError:
        pass
    raise TypeError(f"{x!r} is not a data type opforge knows: give an opforge.plugin.DataType, a NumPy dtype "
                    f"(np.float32, np.int32...) or a torch dtype")


# ---- shape expressions ----------------------------------------------------------------------------

def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _dim(x, what):
    if isinstance(x, DimExpr):
        return x
    if _is_int(x):
        return DimExpr(int(x))
    raise TypeError(f"{what}: expected an int or a shape expression (opforge DimExpr), got {type(x).__name__} {x!r}")


def cdiv(a, b):
    """Ceiling division of shape expressions (or ints)."""
    if _is_int(a) and _is_int(b):
        return -(-int(a) // int(b))
    return _C.dim_cdiv(_dim(a, "cdiv"), _dim(b, "cdiv"))


def max(a, b):  # noqa: A001 - TensorRT's name
    """The larger of two shape expressions (or ints)."""
    if _is_int(a) and _is_int(b):
        return a if a >= b else b
    return _C.dim_max(_dim(a, "max"), _dim(b, "max"))


def min(a, b):  # noqa: A001 - TensorRT's name
    """The smaller of two shape expressions (or ints)."""
    if _is_int(a) and _is_int(b):
        return a if a <= b else b
    return _C.dim_min(_dim(a, "min"), _dim(b, "min"))


class ShapeExprs(list):
    """The dimensions of a TensorDesc: a list of shape expressions, indexable and assignable
    (`desc.shape_expr[-1] += 2`)."""

    def __init__(self, dims=()):
        super().__init__(_dim(d, "shape_expr") for d in dims)

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            super().__setitem__(i, [_dim(d, "shape_expr") for d in v])
        else:
            super().__setitem__(i, _dim(v, "shape_expr"))

    def numel(self):
        """The product of the dimensions (1 for a scalar)."""
        n = DimExpr(1)
        for d in self:
            n = n * d
        return n


# ---- shape rules -------------------------------------------------------------------------------------

_STATE = threading.local()  # the running shape rule's context (size_tensor needs it)


def _current_context(what):
    ctx = getattr(_STATE, "ctx", None)
    if ctx is None:
        raise _errors.InvalidArgumentError(f"{what} is only available while a register function runs "
                                           f"(it declares a data-dependent size of the op being shaped)")
    return ctx


class TensorDesc:
    """A tensor as a shape rule sees it: dtype, format and symbolic dimensions."""

    def __init__(self, dtype=DataType.FLOAT32, shape_expr=(), format="LINEAR", _source=-1):
        self.dtype = dtype_of(dtype)
        self.shape_expr = ShapeExprs(shape_expr)
        self.format = format
        self._source = _source
        self._alias = -1

    @property
    def ndim(self):
        return len(self.shape_expr)

    @property
    def is_size_tensor(self):
        return False

    def like(self):
        """A new tensor with this one's dtype and dimensions."""
        d = TensorDesc(self.dtype, self.shape_expr, self.format, _source=self._source)
        return d

    def aliased(self):
        """The same tensor written in place: an output that aliases this input."""
        if self._source < 0:
            raise _errors.InvalidArgumentError("aliased() is for an input's TensorDesc (the output writes that input "
                                               "in place); this description is not an input")
        d = self.like()
        d._alias = self._source
        return d

    def _answer(self):
        return (int(self.dtype), list(self.shape_expr), self._alias, -1)

    def __repr__(self):
        return f"TensorDesc({self.dtype.name}, [{', '.join(str(d) for d in self.shape_expr)}])"


class SizeTensorDesc:
    """A data-dependent dimension (declared with size_tensor): `expr()` is its symbol for other
    outputs' shapes; returned as an output, it is the 0-D tensor the impl writes the size into."""

    def __init__(self, index, symbol, opt, upper_bound, dtype):
        self._index = index
        self._symbol = symbol
        self.opt = opt
        self.upper_bound = upper_bound
        self.dtype = dtype
        self.shape_expr = ShapeExprs()
        self.ndim = 0
        self.format = "LINEAR"

    @property
    def is_size_tensor(self):
        return True

    def expr(self):
        return self._symbol

    def _answer(self):
        return (int(self.dtype), [], -1, self._index)

    def __repr__(self):
        return f"SizeTensorDesc({self._symbol}, opt={self.opt}, upper_bound={self.upper_bound})"


def from_shape_expr(shape, dtype=DataType.FLOAT32, format="LINEAR"):
    """A TensorDesc with these dimensions (ints or shape expressions)."""
    if isinstance(shape, (DimExpr, int, np.integer)):
        shape = (shape,)
    return TensorDesc(dtype, shape, format)


def size_tensor(opt, upper_bound, dtype=DataType.INT32):
    """Declares a data-dependent dimension of the op being shaped: `opt` is the value the builder
    tunes for, `upper_bound` bounds the output buffers (shape expressions or ints). Return it as
    one of the outputs (TensorRT's rule): the impl writes the real size into it."""
    ctx = _current_context("size_tensor()")
    dt = dtype_of(dtype)
    if dt not in (DataType.INT32, DataType.INT64):
        raise _errors.InvalidArgumentError(f"size_tensor(): the dtype is INT32 or INT64, got {dt.name}")
    index, symbol = ctx.size_tensor(_dim(opt, "size_tensor opt"), _dim(upper_bound, "size_tensor upper_bound"),
                                    int(dt))
    return SizeTensorDesc(index, symbol, opt, upper_bound, dt)


# ---- tensors of impls -----------------------------------------------------------------------------------

_EMPTY = np.zeros(1, dtype=np.uint8)  # the address an empty tensor without memory shows


class Tensor:
    """A tensor an impl reads or writes: engine memory (host on the CPU backend, device on CUDA).
    `np.asarray(t)` (host), `torch.as_tensor(t)` and `torch.from_dlpack(t)` are zero-copy views."""

    __slots__ = ("_ptr", "_dtype", "_shape", "_device")

    def __init__(self, ptr, dtype, shape, device=0):
        self._ptr = int(ptr)
        self._dtype = DataType(dtype)
        self._shape = tuple(int(d) for d in shape)
        self._device = int(device)

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def numel(self):
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def strides(self):
        """Row-major strides in elements."""
        out, s = [], 1
        for d in reversed(self._shape):
            out.append(s)
            s *= d
        return tuple(reversed(out))

    @property
    def device(self):
        """"cpu" or "cuda" (PyTorch device strings)."""
        return "cuda" if self._device == 1 else "cpu"

    def data_ptr(self):
        return self._ptr

    def _typestr(self):
        if self._dtype == DataType.BFLOAT16:
            raise TypeError("a BF16 tensor has no NumPy type: view it with torch (torch.as_tensor(t) is uint16 "
                            "bits; .view(torch.bfloat16))")
        return self._dtype.np_dtype.str

    def _interface(self):
        ptr = self._ptr or (_EMPTY.ctypes.data if self.numel == 0 else 0)
        typestr = "<u2" if self._dtype == DataType.BFLOAT16 else self._typestr()
        return {"shape": self._shape, "typestr": typestr, "data": (ptr, False), "version": 3, "strides": None}

    @property
    def __array_interface__(self):
        if self._device == 1:
            raise AttributeError("a CUDA tensor has no __array_interface__ (use __cuda_array_interface__)")
        return self._interface()

    @property
    def __cuda_array_interface__(self):
        if self._device != 1:
            raise AttributeError("a host tensor has no __cuda_array_interface__ (use __array_interface__)")
        d = self._interface()
        d["stream"] = None
        return d

    def __dlpack_device__(self):
        return (2, 0) if self._device == 1 else (1, 0)

    def __dlpack__(self, stream=None, **kwargs):
        if self._device == 1:
            import torch

            class _View:
                __cuda_array_interface__ = self.__cuda_array_interface__

            return torch.as_tensor(_View(), device="cuda").__dlpack__(stream=stream)
        return np.asarray(self).__dlpack__()

    def __repr__(self):
        return f"Tensor({self._dtype.name}{list(self._shape)}, {self.device}, 0x{self._ptr:x})"


# ---- autotune --------------------------------------------------------------------------------------------

class AutoTuneCombination:
    """Type and format combinations an op accepts, in TensorRT's grammar (parsed by opforge's C++
    parser): AutoTuneCombination("FP32|FP16, FP32|FP16", "LINEAR", [1, 2]), or position by
    position with .pos([0, 1], "FP32|FP16") and the tactics with .tactics([1, 2])."""

    def __init__(self, io_types=None, layouts=None, tactics=None):
        self.io_types = io_types or ""
        self.layouts = layouts or ""
        self._pos_types = []
        self._pos_layouts = []
        self._tactics = []
        if tactics is not None:
            self.tactics(tactics)

    def pos(self, pos, io_types, layouts=None):
        positions = [pos] if _is_int(pos) else list(pos)
        if not positions or not all(_is_int(p) for p in positions):
            raise _errors.InvalidArgumentError(f"AutoTuneCombination.pos: positions must be ints, got {pos!r}")
        self._pos_types.append(([int(p) for p in positions], str(io_types)))
        if layouts:
            self._pos_layouts.append(([int(p) for p in positions], str(layouts)))
        return self

    def tactics(self, tactics):
        ts = list(tactics)
        for t in ts:
            if not _is_int(t) or not 1 <= int(t) < _C.cpu_tactic_base:
                raise _errors.InvalidArgumentError(f"AutoTuneCombination.tactics: a tactic is an int in [1, "
                                                   f"{_C.cpu_tactic_base}), got {t!r}")
        self._tactics = [int(t) for t in ts]
        return self

    def __repr__(self):
        return (f"AutoTuneCombination({self.io_types!r}, {self.layouts!r}, pos={self._pos_types}, "
                f"tactics={self._tactics})")


# ---- aot_impl: launch parameters and scalar arguments ----------------------------------------------------

def _launch_dim(v, what):
    if isinstance(v, DimExpr):
        return v
    if _is_int(v):
        return DimExpr(int(v))
    raise TypeError(f"{what} must be an int or a shape expression (opforge DimExpr), got {type(v).__name__} {v!r}")


class KernelLaunchParams:
    """Grid, block and dynamic shared memory of one kernel launch (TensorRT's KernelLaunchParams):
    ints or shape expressions of the inputs' dimensions, evaluated by the C++ runtime at each
    run. Defaults: grid and block (1, 1, 1), no shared memory."""

    _FIELDS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_mem")

    def __init__(self, grid_x=1, grid_y=1, grid_z=1, block_x=1, block_y=1, block_z=1, shared_mem=0):
        for name, v in zip(self._FIELDS, (grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem)):
            setattr(self, name, v)
        self.trailing_args = []  # opforge: arguments after the outputs (Triton's scratch pointers)

    def __setattr__(self, name, value):
        if name in self._FIELDS:
            value = _launch_dim(value, f"KernelLaunchParams.{name}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return ("KernelLaunchParams(grid=({}, {}, {}), block=({}, {}, {}), shared_mem={})"
                .format(*(getattr(self, f) for f in self._FIELDS)))


class _Scalar:
    kind = ""

    def __init__(self, value):
        self.value = self._check(value)

    def __repr__(self):
        return f"{type(self).__name__}({self.value})"


class SymInt32(_Scalar):
    """A 32-bit integer kernel argument: an int or a shape expression of the inputs' dims."""
    kind = "i32"

    def _check(self, v):
        return _launch_dim(v, type(self).__name__)


class SymInt64(SymInt32):
    """A 64-bit integer kernel argument (int or shape expression)."""
    kind = "i64"


class SymFloat32(_Scalar):
    """A float kernel argument (opforge extension: a constant, e.g. a float attribute)."""
    kind = "f32"

    def _check(self, v):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{type(self).__name__} takes a number, got {type(v).__name__} {v!r}")
        v = float(v)
        if not np.isfinite(v):
            raise TypeError(f"{type(self).__name__} takes a finite number, got {v!r}")
        return float(np.float32(v)) if self.kind == "f32" else v


class SymFloat64(SymFloat32):
    """A double kernel argument (a constant)."""
    kind = "f64"


class _Scratch(_Scalar):
    """Scratch memory for each program of the grid (Triton's global/profile scratch): a pointer to
    `bytes_per_program` × grid size bytes of the layer's workspace, null when that is 0."""
    kind = "scratch"

    def __init__(self, bytes_per_program, align=1):
        super().__init__(bytes_per_program)
        self.align = int(align)

    def _check(self, v):
        return _launch_dim(v, "scratch bytes")


class SymExprs(list):
    """The extra scalar arguments of a launch (TensorRT's SymIntExprs, plus floats): passed after
    the input pointers and before the output pointers. Items: SymInt32 / SymInt64 / SymFloat32 /
    SymFloat64, or plain ints and shape expressions (int32) and floats (float32)."""

    def __init__(self, n_or_items=0):
        if _is_int(n_or_items):
            super().__init__([None] * int(n_or_items))
        else:
            super().__init__(n_or_items)


SymIntExprs = SymExprs
