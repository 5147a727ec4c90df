"""opforge.Network, the Python network API (NetworkDefinition's mirror; TensorRT's add_input /
add_plugin / mark_output), on the CPU backend: C++ plugin ops, standard ONNX ops, ops defined in
Python with a data-dependent size, plans saved and loaded, and bad input named at the call."""
import sys

import numpy as np
import pytest

import opforge
import opforge.plugin as ofp
from opforge_cases import ROOT

EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

PROFILE = {"x": ((1, 3, 8, 8), (2, 3, 8, 8), (4, 3, 8, 8))}


def circ_pad_ref(a, pads):
    return np.pad(a, ((0, 0), (0, 0), (pads[2], pads[3]), (pads[0], pads[1])), mode="wrap")


def test_the_guides_network_with_a_cpp_plugin_and_standard_ops(tmp_path):
    pads = np.array([1, 1, 2, 2], np.int32)
    net = opforge.Network()
    x = net.add_input("x", np.float32, (-1, 3, 8, 8))
    assert x.shape == "[x.0, 3, 8, 8]" and x.dtype == ofp.DataType.FLOAT32
    y = net.add_plugin(ofp.op.example.circ_pad_plugin(x, pads=pads))
    assert y.shape == "[x.0, 3, 12, 10]"  # the shape rule ran at add time
    z = net.add_op("Relu", [y], name="relu")
    net.mark_output(z, "z")
    assert net.inputs == ["x"] and net.outputs == ["z"] and net.num_nodes == 2
    e = opforge.Engine.build(net, profiles=PROFILE, device="cpu")
    for n in (1, 3, 4):
        a = np.random.default_rng(n).standard_normal((n, 3, 8, 8)).astype(np.float32)
        np.testing.assert_array_equal(e.run({"x": a})["z"], np.maximum(circ_pad_ref(a, pads), 0))
    # The plan saved and loaded runs the same.
    e.save(tmp_path / "net.plan")
    a = np.random.default_rng(7).standard_normal((2, 3, 8, 8)).astype(np.float32)
    again = opforge.Engine.load(tmp_path / "net.plan")
    np.testing.assert_array_equal(again.run({"x": a})["z"], e.run({"x": a})["z"])


def test_python_ops_in_a_network_with_a_data_dependent_size():
    import python_plugins.non_zero  # noqa: F401  (registers pyexample::non_zero_plugin)
    import python_plugins.circ_pad  # noqa: F401  (registers pyexample::circ_pad_plugin)
    net = opforge.Network()
    x = net.add_input("x", np.float32, (4, 5))
    idx, count = net.add_plugin(ofp.op.pyexample.non_zero_plugin(x))
    doubled = net.add_op("Mul", [idx, idx])  # a downstream op reads the real-sized output
    net.mark_output(doubled, "sq")
    net.mark_output(count, "count")
    e = opforge.Engine.build(net, device="cpu")
    assert any(ly["library"] == "python:python_plugins.non_zero" for ly in e.layers())
    a = np.array([[0, 1, 0, 2, 0], [3, 0, 0, 0, 4], [0, 0, 0, 0, 0], [5, 0, 6, 0, 0]], np.float32)
    out = e.run({"x": a})
    nz = np.argwhere(a != 0).astype(np.int32)
    assert int(out["count"]) == len(nz)
    np.testing.assert_array_equal(out["sq"], nz * nz)


def test_bad_input_is_named_at_the_call():
    net = opforge.Network()
    x = net.add_input("x", np.float32, (2, 3, 8, 8))
    with pytest.raises(opforge.NotFoundError, match="no_such_op"):
        net.add_op("ns::no_such_op", [x])
    with pytest.raises(opforge.InvalidArgumentError, match=r"unknown attribute 'padz'.*pads"):
        net.add_plugin(ofp.op.example.circ_pad_plugin(x, padz=np.array([1, 1], np.int32)))
    with pytest.raises(opforge.OpforgeError, match="pads"):
        net.add_plugin(ofp.op.example.circ_pad_plugin(x, pads="wide"))
    with pytest.raises(opforge.OpforgeError, match="circ_pad"):
        net.add_plugin(ofp.op.example.circ_pad_plugin(x))  # the required attribute is missing
    other = opforge.Network().add_input("x", np.float32, (1,))
    with pytest.raises(opforge.InvalidArgumentError, match="not a tensor of this network"):
        net.add_op("Relu", [other])
    with pytest.raises(opforge.DTypeError, match="not a data type"):
        net.add_input("y", "complex-ish", (1,))
    with pytest.raises(opforge.InvalidArgumentError, match="unknown format 'NCHW8'"):
        net.add_input("y", np.float32, (1, 2, 3, 4), format="NCHW8")
    with pytest.raises(opforge.InvalidArgumentError, match="add_plugin takes"):
        net.add_plugin("circ_pad_plugin")
    w = net.add_input("w", np.float32, (5,))
    with pytest.raises(opforge.OpforgeError, match="Add"):
        net.add_op("Add", [x, w])  # shapes that do not broadcast
    # The network is still usable after every refusal: no node was added by one.
    assert net.num_nodes == 0
    net.mark_output(net.add_op("Relu", [x]), "y")
    net.mark_output(net.add_op("Neg", [w]), "v")
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    b = np.arange(5, dtype=np.float32)
    out = opforge.Engine.build(net, device="cpu").run({"x": a, "w": b})
    np.testing.assert_array_equal(out["y"], np.maximum(a, 0))
    np.testing.assert_array_equal(out["v"], -b)
