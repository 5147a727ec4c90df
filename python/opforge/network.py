"""opforge.Network: a network made in Python, the C++ NetworkDefinition's mirror (TensorRT's
INetworkDefinition: add_input / add_plugin / mark_output).

    import opforge, opforge.plugin as ofp
    net = opforge.Network()
    x = net.add_input("x", np.float32, (-1, 3, 32, 32))          # -1: a dynamic dimension
    y = net.add_plugin(ofp.op.example.circ_pad_plugin(x, pads=np.array([1, 1, 2, 2], np.int32)))
    z = net.add_op("Relu", [y])                                   # standard ONNX ops by name
    net.mark_output(z, "z")
    engine = opforge.Engine.build(net, profiles={"x": ((1, 3, 32, 32), (4, 3, 32, 32), (8, 3, 32, 32))})

Every call validates at once, as in C++: the op is looked up, the attributes converted to the
types the op declares and checked, the shape rule run; errors name the node, the op and the
attribute. Ops defined in Python (opforge.plugin) are committed to the registry first.
"""
from . import _errors, _ops
from ._ops import _C

__all__ = ["Network", "NetworkTensor", "PluginCall"]


def _dtype_code(dtype):
    from .plugin._types import dtype_of
    try:
        return int(dtype_of(dtype))
    except TypeError as e:
        raise _errors.DTypeError(str(e)) from None


class NetworkTensor:
    """A tensor of one Network (its handle; valid only for that network)."""

    def __init__(self, net, tid):
        self._net, self._id = net, tid

    @property
    def name(self):
        return self._net._n.tensor_name(self._id)

    @property
    def shape(self):
        """The symbolic shape, e.g. "[x.0, 3, 34, 36]"."""
        return self._net._n.shape_of(self._id)

    @property
    def dtype(self):
        from .plugin._types import DataType
        return DataType(self._net._n.dtype_of(self._id))

    def __repr__(self):
        return f"NetworkTensor({self.name!r}, {self.shape}, {self.dtype.name})"


class PluginCall:
    """`ofp.op.<ns>.<name>(inputs..., **attrs)`: a node not yet in a network (add_plugin adds it)."""

    def __init__(self, key, inputs, attrs):
        self.key, self.inputs, self.attrs = key, list(inputs), dict(attrs)

    def __repr__(self):
        return f"PluginCall({self.key!r}, {len(self.inputs)} inputs, attrs {sorted(self.attrs)})"


class _OpNamespace:
    """`op.<ns>.<name>` -> a function making a PluginCall (TensorRT's trtp.op)."""

    def __init__(self, ns=None):
        self._ns = ns

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._ns is None:
            return _OpNamespace(name)
        key = f"{self._ns}::{name}"

        def call(*inputs, **attrs):
            return PluginCall(key, inputs, attrs)

        call.__name__ = name
        call.__qualname__ = key
        return call


op = _OpNamespace()


class Network:
    def __init__(self):
        _ops.commit_pending()
        self._n = _C.Network()
        self._aot = {}  # node index -> True (AOT) / False (JIT), from add_plugin(aot=...)

    def _ref(self, t, what):
        if t is None:
            return None
        if not isinstance(t, NetworkTensor) or t._net is not self:
            raise _errors.InvalidArgumentError(f"{what}: {t!r} is not a tensor of this network")
        return t._id

    def add_input(self, name, dtype, shape, format="LINEAR"):
        """A network input; -1 (or None) marks a dynamic dimension."""
        dims = [-1 if d is None else int(d) for d in shape]
        return NetworkTensor(self, self._n.add_input(str(name), _dtype_code(dtype), dims, str(format)))

    def add_op(self, key, inputs, name="", version="1", **attrs):
        """A node of op `key`: "ns::name", or a standard ONNX op by its name ("Relu" = ai.onnx::Relu).
        Returns its output, or a tuple when it has several. Attributes by keyword; values as in
        opforge.torch (ints, floats, str, bytes, lists or NumPy arrays)."""
        _ops.commit_pending()
        key = key if "::" in key else f"ai.onnx::{key}"
        ids = [self._ref(t, f"node '{name or key}' input {i}") for i, t in enumerate(inputs)]
        outs = self._n.add_op(key, ids, attrs, str(name), str(version))
        ts = tuple(NetworkTensor(self, o) for o in outs)
        return ts[0] if len(ts) == 1 else ts

    def add_plugin(self, call, name="", version="1", aot=None):
        """Adds `ofp.op.<ns>.<name>(inputs..., **attrs)` (TensorRT's network.add_plugin). aot:
        True / False runs an op defined in Python ahead of time / JIT (else the build's
        prefer_aot decides)."""
        if not isinstance(call, PluginCall):
            raise _errors.InvalidArgumentError(f"add_plugin takes ofp.op.<ns>.<name>(...), got {call!r}")
        if aot is not None and not isinstance(aot, (bool, int)):
            raise _errors.InvalidArgumentError(f"add_plugin: aot is True, False or None, got {aot!r}")
        index = self._n.num_nodes()
        out = self.add_op(call.key, call.inputs, name=name, version=version, **call.attrs)
        if aot is not None:
            self._aot[index] = bool(aot)
        return out

    def mark_output(self, tensor, name=""):
        self._n.mark_output(self._ref(tensor, "mark_output"), str(name))

    @property
    def inputs(self):
        return list(self._n.input_names())

    @property
    def outputs(self):
        return list(self._n.output_names())

    @property
    def num_nodes(self):
        return self._n.num_nodes()
