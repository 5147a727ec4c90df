"""Exceptions raised by opforge. Every engine error keeps the engine's message unchanged; the class
says what kind of error it is (opforge::StatusCode)."""


class OpforgeError(RuntimeError):
    """Base class of every opforge error (a RuntimeError)."""

    code = "Runtime"


class InvalidArgumentError(OpforgeError, ValueError):
    """A bad attribute, shape, model or argument (also a ValueError)."""

    code = "InvalidArgument"


class NotFoundError(OpforgeError, LookupError):
    """A missing op, file, tensor name or plugin (also a LookupError)."""

    code = "NotFound"


class UnsupportedError(OpforgeError, NotImplementedError):
    """Valid input that opforge does not implement: a dtype, an op variant, a device."""

    code = "Unsupported"


class IoError(OpforgeError):
    """A file system error."""

    code = "Io"


class CorruptError(OpforgeError):
    """A truncated or tampered file."""

    code = "Corrupt"


class VersionError(OpforgeError):
    """A format or ABI version mismatch."""

    code = "Version"


class OutOfRangeError(OpforgeError, ValueError):
    """A value outside a profile, an index outside a tensor (also a ValueError)."""

    code = "OutOfRange"


class KernelError(OpforgeError):
    """A kernel failed while running."""

    code = "Runtime"


class InternalError(OpforgeError):
    """A bug in opforge."""

    code = "Internal"


class DTypeError(OpforgeError, TypeError):
    """A PyTorch op got a tensor dtype that none of the op's type combinations accepts (also a TypeError)."""

    code = "Unsupported"


class DeviceError(OpforgeError, ValueError):
    """A PyTorch op got tensors on a device it cannot run on, or on different devices (also a ValueError)."""

    code = "Unsupported"


# opforge::StatusCode numbers (include/opforge/status.h).
BY_CODE = {
    1: InvalidArgumentError,
    2: NotFoundError,
    3: UnsupportedError,
    4: IoError,
    5: CorruptError,
    6: VersionError,
    7: OutOfRangeError,
    8: KernelError,
    9: InternalError,
}

# The number each class stands for, read by the C++ glue when Python code (an op defined in Python)
# raises one of them: the engine's status keeps the kind of error.
for _code, _cls in BY_CODE.items():
    _cls.status_code = _code
OpforgeError.status_code = 8
DTypeError.status_code = DeviceError.status_code = 3

__all__ = ["OpforgeError", "InvalidArgumentError", "NotFoundError", "UnsupportedError", "IoError", "CorruptError",
           "VersionError", "OutOfRangeError", "KernelError", "InternalError", "DTypeError", "DeviceError"]
