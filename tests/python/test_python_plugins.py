"""Ops defined in Python (opforge.plugin, the TensorRT Python-plugin guide's decorators) on the CPU
backend: the guide's examples (examples/python_plugins) through ONNX, the engine, PyTorch and a
plan saved and loaded in a fresh process; autotune between two CPU tactics; symbolic shapes;
zero-copy tensors; and the bad input of issue 16, each a clear error that names the op, the
function and the parameter."""
import os
import subprocess
import sys
import textwrap
from typing import List, Tuple

import numpy as np
import numpy.typing as npt
import pytest
import torch
import torch.nn.functional as F

import opforge
import opforge.plugin as ofp
from conftest import opforge_bin
from opforge_cases import ROOT, run_python

EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))
ENV = {"PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(autouse=True)
def committed():
    """The ops this file defines at import join the registry (and torch.ops) before each test."""
    ofp.commit()


def onnx_model(path, nodes, inputs, outputs, initializers=(), domains=()):
    import onnx
    from onnx import helper
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", 17)] + [helper.make_opsetid(d, 1) for d in domains]
    onnx.save(helper.make_model(g, opset_imports=opsets), str(path))
    return path


def io(name, dtype, shape):
    from onnx import helper
    return helper.make_tensor_value_info(name, dtype, shape)


def single_node_model(path, op_type, ns, shape, attrs=None, dtype=1, n_out=1, via_domain=False, out_dtypes=None):
    from onnx import helper
    outs = ["y"] + [f"y{k}" for k in range(1, n_out)]
    out_dtypes = out_dtypes or [dtype] * n_out
    extra = {} if via_domain else {"plugin_namespace": ns}
    node = helper.make_node(op_type, ["x"], outs, name=f"{op_type}_node", domain=ns if via_domain else "",
                            **(attrs or {}), **extra)
    return onnx_model(path, [node], [io("x", dtype, shape)], [io(o, t, None) for o, t in zip(outs, out_dtypes)],
                      domains=[ns] if via_domain else [])


# ---- shapes --------------------------------------------------------------------------------------------

def test_dim_expr_is_the_engines_with_python_operators():
    n = ofp.DimExpr.symbol("n")
    assert str(n * 2 + 1) == "n*2+1" or str(n * 2 + 1) == "2*n+1"
    assert (3 + n - 3) == n and (n * 1) == n
    assert str(n // 2) == "floordiv(n,2)" and str(ofp.cdiv(n, 4)) == "ceildiv(n,4)"
    assert str(ofp.max(n, 3)) == "max(n,3)" and str(ofp.min(2, n)) in ("min(2,n)", "min(n,2)")
    assert ofp.cdiv(7, 2) == 4 and ofp.max(2, 5) == 5 and ofp.min(2, 5) == 2
    assert int(ofp.DimExpr(3) * 4) == 12 and (ofp.DimExpr(3) * 4).is_constant
    assert str(ofp.ShapeExprs([n, 3, 2]).numel()) in ("n*6", "6*n", "n*3*2")
    with pytest.raises(opforge.InvalidArgumentError, match="symbolic"):
        int(n)
    with pytest.raises(opforge.InvalidArgumentError, match="an int or an opforge DimExpr"):
        n + 1.5
    assert ofp.dtype_of(np.float16) == ofp.DataType.FLOAT16 == ofp.dtype_of("FP16") == ofp.dtype_of(torch.float16)
    assert ofp.dtype_of(np.int32) == ofp.DataType.INT32 == ofp.dtype_of(6)


# ---- the guide's examples --------------------------------------------------------------------------------

def test_circ_pad_jit_through_onnx_engine_and_torch(tmp_path):
    assert "pyexample::circ_pad_plugin" in opforge.load_plugins("python_plugins.circ_pad") or \
        "pyexample::circ_pad_plugin" in opforge.ops()
    op = opforge.ops()["pyexample::circ_pad_plugin"]
    assert op.library == "python:python_plugins.circ_pad"
    assert op.tactics == [(0, "python.impl", "cpu"), (1, "python.cuda", "cuda")]
    assert [a["name"] for a in op.attrs] == ["pads"] and op.attrs[0]["type"] == "int32[]"
    assert {"path": "python:python_plugins.circ_pad", "name": "python:python_plugins.circ_pad", "version": "",
            "num_ops": 1} in opforge.libraries()
    from python_plugins.circ_pad import make_onnx
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = F.pad(torch.from_numpy(x), [1, 1, 2, 2], mode="circular").numpy()
    # The guide's route: op_type = name, namespace in plugin_namespace; and the node's domain.
    for path in (make_onnx(tmp_path / "circ_pad.onnx"),
                 single_node_model(tmp_path / "dom.onnx", "circ_pad_plugin", "pyexample", [2, 3, 8, 8],
                                   {"pads": [1, 1, 2, 2]}, via_domain=True)):
        e = opforge.Engine.build(path, device="cpu")
        (layer,) = e.layers()
        assert layer["op"] == "pyexample::circ_pad_plugin v1" and layer["tactic"] == "0 (python.impl)"
        assert layer["library"] == "python:python_plugins.circ_pad"
        np.testing.assert_array_equal(e.run({"x": x})["y"], want)
    # Dynamic batch: the Python shape rule is symbolic.
    dyn = single_node_model(tmp_path / "dyn.onnx", "circ_pad_plugin", "pyexample", ["N", 3, 8, 8],
                            {"pads": [1, 1, 2, 2]})
    e = opforge.Engine.build(dyn, device="cpu", profiles={"x": ((1, 3, 8, 8), (2, 3, 8, 8), (4, 3, 8, 8))})
    assert e.outputs[0]["shape"] == "[x.0, 3, 12, 10]"
    x4 = np.random.default_rng(1).standard_normal((4, 3, 8, 8)).astype(np.float32)
    np.testing.assert_array_equal(e.run({"x": x4})["y"], F.pad(torch.from_numpy(x4), [1, 1, 2, 2],
                                                               mode="circular").numpy())
    # torch.ops.<ns>.<name>: eager through the impl, fake kernel from the shape rule.
    xt = torch.from_numpy(x)
    assert torch.equal(torch.ops.pyexample.circ_pad_plugin(xt, pads=[1, 1, 2, 2]), torch.from_numpy(want))
    assert torch.equal(opforge.torch.pyexample.circ_pad_plugin(xt, [1, 1, 2, 2]), torch.from_numpy(want))
    res = torch.library.opcheck(torch.ops.pyexample.circ_pad_plugin.default, (xt,), {"pads": [1, 1, 2, 2]})
    assert all(v == "SUCCESS" for v in res.values()), res
    with pytest.raises(opforge.OpforgeError, match="pyexample::circ_pad_plugin"):
        ofp.impl("pyexample::circ_pad_plugin")(lambda inp0, outputs: None)


def test_circ_pad_autotune_example_times_both_tactics(tmp_path):
    import python_plugins.circ_pad_autotune  # noqa: F401
    op = opforge.find("pyexample::circ_pad_tuned")
    assert [c["text"] for c in op.combos] == ["FP32, FP32", "FP16, FP16"]
    assert [t[1] for t in op.tactics if t[2] == "cpu"] == ["python.impl(tactic=1)", "python.impl(tactic=2)"]
    path = single_node_model(tmp_path / "tuned.onnx", "circ_pad_tuned", "pyexample", [2, 3, 16, 16],
                             {"pads": [1, 1, 2, 2]})
    e = opforge.Engine.build(path, device="cpu", verbose=True)
    assert any("timed 2 CPU tactics for 1 layers" in m for m in e.build_log()), e.build_log()
    tactic = e.layers()[0]["tactic"]
    assert "python.impl(tactic=1)" in tactic or "python.impl(tactic=2)" in tactic
    assert "python.impl(tactic=" in e.inspect()
    x = np.random.default_rng(2).standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.testing.assert_array_equal(e.run({"x": x})["y"],
                                  F.pad(torch.from_numpy(x), [1, 1, 2, 2], mode="circular").numpy())


def test_non_zero_size_tensor_feeds_a_downstream_op(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    opforge.load_plugins("python_plugins.non_zero")
    nz = helper.make_node("non_zero_plugin", ["x"], ["idx", "count"], name="nz", plugin_namespace="pyexample")
    two = onnx.numpy_helper.from_array(np.array(2, np.int32), "two")
    mul = helper.make_node("Mul", ["idx", "two"], ["y"], name="double")
    path = onnx_model(tmp_path / "nz.onnx", [nz, mul], [io("x", TensorProto.FLOAT, [4, 5])],
                      [io("y", TensorProto.INT32, None), io("count", TensorProto.INT32, None)], [two])
    e = opforge.Engine.build(path, device="cpu")
    assert "#" in e.outputs[0]["shape"]  # the data-dependent size
    x = np.zeros((4, 5), np.float32)
    x[0, 1] = x[2, 0] = x[3, 4] = 1.5
    out = e.run({"x": x})
    assert out["y"].shape == (3, 2) and int(out["count"]) == 3
    np.testing.assert_array_equal(out["y"], 2 * np.argwhere(x).astype(np.int32))
    out = e.run({"x": np.ones((4, 5), np.float32)})  # up to the upper bound
    assert out["y"].shape == (20, 2)
    idx, count = torch.ops.pyexample.non_zero_plugin(torch.from_numpy(x))
    assert idx.shape == (3, 2) and int(count) == 3


def test_inplace_add_aliased_chained_twice(tmp_path):
    from onnx import TensorProto, helper
    a = helper.make_node("elemwise_add_plugin_", ["x"], ["t"], name="add2", delta=2, plugin_namespace="pyexample")
    b = helper.make_node("elemwise_add_plugin_", ["t"], ["y"], name="add4", delta=4, plugin_namespace="pyexample")
    path = onnx_model(tmp_path / "add.onnx", [a, b], [io("x", TensorProto.FLOAT, [2, 3])],
                      [io("y", TensorProto.FLOAT, [2, 3])])
    e = opforge.Engine.build(path, device="cpu", plugins=["python_plugins.inplace_add"])  # a module: imported
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    keep = x.copy()
    np.testing.assert_array_equal(e.run({"x": x})["y"], keep + 6)
    np.testing.assert_array_equal(x, keep)  # the caller's array is not written
    t = torch.zeros(4)
    r = opforge.torch.pyexample.elemwise_add_plugin_(t, 2)
    assert r is t and torch.equal(t, torch.full((4,), 2.0))


def test_plan_records_the_module_and_loads_in_a_fresh_process(tmp_path):
    opforge.load_plugins("python_plugins.circ_pad")
    from python_plugins.circ_pad import make_onnx
    plan = tmp_path / "circ_pad.plan"
    opforge.Engine.build(make_onnx(tmp_path / "c.onnx"), device="cpu").save(plan)
    code = textwrap.dedent(f"""
        import sys, numpy as np, torch, torch.nn.functional as F
        import opforge
        assert "python_plugins.circ_pad" not in sys.modules
        e = opforge.Engine.load({str(plan)!r}{{plugins}})
        assert "python_plugins.circ_pad" in sys.modules
        x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
        want = F.pad(torch.from_numpy(x), [1, 1, 2, 2], mode="circular").numpy()
        assert np.array_equal(e.run({{"x": x}})["y"], want)
        print("OK", e.layers()[0]["library"])
    """)
    for plugins in ("", ", plugins=['python_plugins.circ_pad']"):
        p = run_python(code.replace("{plugins}", plugins), env=ENV)
        assert p.returncode == 0 and "OK python:python_plugins.circ_pad" in p.stdout, p.stderr
    # The C++ CLI has no Python: it names the op and its module and points at AOT.
    p = subprocess.run([opforge_bin(), "exec", f"--loadEngine={plan}"], capture_output=True, text=True)
    assert p.returncode != 0
    msg = p.stdout + p.stderr
    assert "pyexample::circ_pad_plugin v1" in msg and "defined in Python by module python_plugins.circ_pad" in msg
    assert "An AOT build of such an op runs without Python" in msg, msg



JIT_KEEP_MODULE = textwrap.dedent("""
    import torch
    import opforge.plugin as ofp

    @ofp.register("pytest_keep::repeat_rows")
    def desc(x: ofp.TensorDesc, build_only_reps: int, scale: float = 1.0) -> ofp.TensorDesc:
        y = x.like()
        y.shape_expr[0] = x.shape_expr[0] * build_only_reps
        return y

    @ofp.impl("pytest_keep::repeat_rows")
    def impl(x: ofp.Tensor, scale: float, outputs, stream) -> None:
        out = torch.as_tensor(outputs[0])
        out.copy_((torch.as_tensor(x) * scale).repeat(out.shape[0] // x.shape[0], 1))
""")


def test_a_jit_plan_keeps_only_the_attributes_the_impl_declares(tmp_path):
    # The guide: a JIT plan serializes only the impl's attributes. `build_only_reps` sizes the output
    # at build (the plan's expression x.0 * 3 keeps it) and is absent from the plan, which a fresh
    # process loads and runs at shapes other than the build's without the register function's
    # attribute.
    (tmp_path / "jit_keep_mod.py").write_text(JIT_KEEP_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import jit_keep_mod  # noqa: F401
    finally:
        sys.path.remove(str(tmp_path))
    net = opforge.Network()
    x = net.add_input("x", np.float32, (-1, 4))
    y = net.add_plugin(ofp.op.pytest_keep.repeat_rows(x, build_only_reps=3, scale=2.0))
    assert y.shape == "[x.0*3, 4]", y.shape
    net.mark_output(y, "y")
    plan = tmp_path / "keep.plan"
    opforge.Engine.build(net, profiles=[{"x": [(1, 4), (2, 4), (5, 4)]}], device="cpu").save(plan)
    data = plan.read_bytes()
    assert b"build_only_reps" not in data and b"scale" in data
    code = textwrap.dedent(f"""
        import numpy as np
        import opforge
        e = opforge.Engine.load({str(plan)!r}, plugins=["jit_keep_mod"])
        for n in (1, 5):
            x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
            np.testing.assert_array_equal(e.run({{"x": x}})["y"], np.tile(2 * x, (3, 1)))
        print("OK")
    """)
    p = run_python(code, env={"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])})
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout + p.stderr

# ---- impls: tensors and attributes --------------------------------------------------------------------------

SEEN = {}


@ofp.register("pytest_py::probe")
def probe_desc(x: ofp.TensorDesc, a: int = 3, b: float = 0.5, s: str = "hi", flag: bool = True, raw: bytes = b"ab",
               arr: npt.NDArray[np.int64] = np.array([4, 5], np.int64),
               h: npt.NDArray[np.float16] = np.array([0.5], np.float16)) -> ofp.TensorDesc:
    SEEN["register"] = (a, b, s, flag, raw, arr.dtype, arr.tolist(), h.dtype)
    return x.like()


@ofp.impl("pytest_py::probe")
def probe_impl(x: ofp.Tensor, arr: npt.NDArray[np.int64], b: float, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    arr_np = np.asarray(x)
    SEEN["impl"] = {
        "attrs": (b, arr.dtype, arr.tolist()), "shape": x.shape, "strides": x.strides, "dtype": x.dtype,
        "device": x.device, "stream": stream,
        "numpy": arr_np.ctypes.data == x.data_ptr(), "torch": torch.as_tensor(x).data_ptr() == x.data_ptr(),
        "dlpack": torch.from_dlpack(x).data_ptr() == x.data_ptr(),
        "cuda_iface": hasattr(x, "__cuda_array_interface__"),
    }
    np.asarray(outputs[0])[...] = arr_np * b


def test_impl_gets_zero_copy_tensors_and_only_its_attributes():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    y = torch.ops.pytest_py.probe(x, b=2.0, arr=[7, 8, 9])
    assert torch.equal(y, x * 2)
    assert SEEN["register"] == (3, 2.0, "hi", True, b"ab", np.dtype(np.int64), [7, 8, 9], np.dtype(np.float16))
    got = SEEN["impl"]
    assert got["attrs"] == (2.0, np.dtype(np.int64), [7, 8, 9])
    assert got["shape"] == (2, 3) and got["strides"] == (3, 1) and got["dtype"] == ofp.DataType.FLOAT32
    assert got["device"] == "cpu" and got["stream"] == 0
    assert got["numpy"] and got["torch"] and got["dlpack"] and not got["cuda_iface"]
    op = opforge.find("pytest_py::probe")
    assert [(a["name"], a["type"], a["default"]) for a in op.attrs] == [
        ("a", "int", 3), ("b", "float", 0.5), ("s", "string", "hi"), ("flag", "bool", True), ("raw", "bytes", b"ab"),
        ("arr", "int64[]", [4, 5]), ("h", "float16[]", [0.5])]


# ---- autotune between two CPU tactics ------------------------------------------------------------------------

@ofp.register("pytest_py::tuned")
def tuned_desc(x: ofp.TensorDesc) -> ofp.TensorDesc:
    return x.like()


@ofp.autotune("pytest_py::tuned")
def tuned_autotune(x: ofp.TensorDesc, outputs: Tuple[ofp.TensorDesc]) -> List[ofp.AutoTuneCombination]:
    return [ofp.AutoTuneCombination("FP32, FP32", "LINEAR", [1, 2])]


@ofp.impl("pytest_py::tuned")
def tuned_impl(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int, tactic: int) -> None:
    import time
    if tactic == 1:
        time.sleep(0.004)  # the slow tactic
    np.asarray(outputs[0])[...] = np.asarray(x) * 3


def test_builder_times_cpu_tactics_and_takes_the_fastest(tmp_path):
    path = single_node_model(tmp_path / "t.onnx", "tuned", "pytest_py", [4, 4])
    e = opforge.Engine.build(path, device="cpu", verbose=True)
    (layer,) = e.layers()
    assert layer["tactic"] == f"{opforge._C.cpu_tactic_base + 2} (python.impl(tactic=2))", layer
    assert layer["build_time_ms"] >= 0
    assert any("tuned_node: tactic 0 " in m for m in e.build_log()), e.build_log()
    x = np.ones((4, 4), np.float32)
    np.testing.assert_array_equal(e.run({"x": x})["y"], x * 3)


def test_layer_tactics_pin_the_slow_tactic_and_name_bad_entries(tmp_path):
    path = single_node_model(tmp_path / "t.onnx", "tuned", "pytest_py", [4, 4])
    x = np.ones((4, 4), np.float32)
    # tactic=1 (the slow one, which timing never picks) is the op's first CPU tactic: id 0.
    e = opforge.Engine.build(path, device="cpu", layer_tactics=["tuned_node=reference"])
    (layer,) = e.layers()
    assert layer["tactic"].startswith("0 "), layer
    np.testing.assert_array_equal(e.run({"x": x})["y"], x * 3)
    fast = opforge._C.cpu_tactic_base + 2
    e = opforge.Engine.build(path, device="cpu", layer_tactics=["pytest_py::tuned=python.impl(tactic=2)"])
    assert e.layers()[0]["tactic"] == f"{fast} (python.impl(tactic=2))", e.layers()[0]
    with pytest.raises(opforge.InvalidArgumentError, match=r"layer_tactics 'tuned_node=7': the op has no tactic '7'"):
        opforge.Engine.build(path, device="cpu", layer_tactics=["tuned_node=7"])
    with pytest.raises(opforge.InvalidArgumentError, match=r"layer_tactics 'other=reference' matches no layer"):
        opforge.Engine.build(path, device="cpu", layer_tactics=["other=reference"])


# ---- bad input ------------------------------------------------------------------------------------------------

def test_list_and_tuple_attributes_are_refused():
    for ann in (list, List[int], Tuple[int, int]):
        with pytest.raises(opforge.UnsupportedError, match=r"attribute 'pads' is annotated .*: list and tuple "
                                                           r"attributes are not supported"):
            def bad(x: ofp.TensorDesc, pads: ann) -> ofp.TensorDesc:
                return x.like()
            ofp.register("pytest_bad::lists")(bad)
    with pytest.raises(opforge.UnsupportedError, match="NDArray attribute needs a dtype"):
        def bad2(x: ofp.TensorDesc, pads: npt.NDArray) -> ofp.TensorDesc:
            return x.like()
        ofp.register("pytest_bad::lists")(bad2)
    with pytest.raises(opforge.InvalidArgumentError, match="attribute 'pads' has no annotation"):
        def no_ann(x: ofp.TensorDesc, pads) -> ofp.TensorDesc:
            return x.like()
        ofp.register("pytest_bad::lists")(no_ann)
    with pytest.raises(opforge.InvalidArgumentError, match="must be annotated to return"):
        def no_ret(x: ofp.TensorDesc):
            return x
        ofp.register("pytest_bad::lists")(no_ret)


def test_impl_parameter_not_declared_by_register():
    @ofp.register("pytest_bad::undeclared")
    def desc(x: ofp.TensorDesc, pads: npt.NDArray[np.int32]) -> ofp.TensorDesc:
        return x.like()

    with pytest.raises(opforge.InvalidArgumentError) as e:
        @ofp.impl("pytest_bad::undeclared")
        def impl(x: ofp.Tensor, bogus: int, outputs: Tuple[ofp.Tensor], stream: int) -> None:
            pass
    msg = str(e.value)
    assert "op pytest_bad::undeclared: impl function" in msg and "parameter 'bogus'" in msg and "(pads)" in msg
    assert "test_impl_parameter_not_declared_by_register.<locals>.desc" in msg
    with pytest.raises(opforge.InvalidArgumentError, match=r"attribute 'pads' is annotated <class 'int'>, but "
                                                           r"register function .* declares it"):
        @ofp.impl("pytest_bad::undeclared")
        def impl2(x: ofp.Tensor, pads: int, outputs: Tuple[ofp.Tensor], stream: int) -> None:
            pass
    with pytest.raises(opforge.NotFoundError, match="no register function defines it"):
        ofp.impl("pytest_bad::nobody")(impl_noop)
    # The op without an impl is refused when it is committed; the registry is unchanged.
    with pytest.raises(opforge.InvalidArgumentError, match=r"pytest_bad::undeclared: register function .* has no "
                                                           r"impl"):
        ofp.commit()
    assert opforge.find("pytest_bad::undeclared") is None


def impl_noop(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    pass


def _op_with_autotune(key, combos):
    def desc(x: ofp.TensorDesc) -> ofp.TensorDesc:
        return x.like()

    def tune(x: ofp.TensorDesc, outputs: Tuple[ofp.TensorDesc]) -> List[ofp.AutoTuneCombination]:
        return combos

    ofp.register(key)(desc)
    ofp.impl(key)(impl_noop)
    ofp.autotune(key)(tune)


def test_autotune_combination_errors_come_from_the_cpp_parser():
    _op_with_autotune("pytest_bad::positions", [ofp.AutoTuneCombination("FP32, FP32, FP32", "LINEAR")])
    with pytest.raises(opforge.InvalidArgumentError) as e:
        ofp.commit()
    msg = str(e.value)
    assert "op pytest_bad::positions: autotune function" in msg and "tune" in msg and "2 positions" in msg, msg
    assert "3" in msg, msg
    _op_with_autotune("pytest_bad::typename", [ofp.AutoTuneCombination("FP32|FP33, FP32|FP16")])
    with pytest.raises(opforge.OpforgeError, match="FP33") as e:
        ofp.commit()
    assert "pytest_bad::typename" in str(e.value)
    with pytest.raises(opforge.InvalidArgumentError, match=r"a tactic is an int in \[1, "):
        ofp.AutoTuneCombination("FP32", "LINEAR", [0])
    assert opforge.find("pytest_bad::positions") is None and opforge.find("pytest_bad::typename") is None


@ofp.register("pytest_bad::raises")
def raising_desc(x: ofp.TensorDesc, k: int = 1) -> ofp.TensorDesc:
    if k == 1:
        raise ValueError("boom in the shape rule")
    return x.like()


FAIL = {"on": True}


@ofp.impl("pytest_bad::raises")
def raising_impl(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    if FAIL["on"]:
        raise RuntimeError("kaput at run time")
    np.asarray(outputs[0])[...] = np.asarray(x)


def test_register_function_that_raises(tmp_path):
    path = single_node_model(tmp_path / "r.onnx", "raises", "pytest_bad", [2])
    with pytest.raises(opforge.InvalidArgumentError) as e:
        opforge.Engine.build(path, device="cpu")
    msg = str(e.value)
    assert "raises_node" in msg and "raising_desc" in msg and "ValueError: boom in the shape rule" in msg, msg
    with pytest.raises(opforge.InvalidArgumentError, match="ValueError: boom in the shape rule"):
        torch.ops.pytest_bad.raises(torch.ones(2))


def test_impl_that_raises_names_the_layer_and_the_engine_stays_usable(tmp_path):
    path = single_node_model(tmp_path / "r.onnx", "raises", "pytest_bad", [2], {"k": 2})
    e = opforge.Engine.build(path, device="cpu")
    FAIL["on"] = True
    with pytest.raises(opforge.KernelError) as err:
        e.run({"x": np.ones(2, np.float32)})
    msg = str(err.value)
    assert "node 'raises_node' (pytest_bad::raises" in msg and "raising_impl" in msg, msg
    assert "RuntimeError: kaput at run time" in msg
    FAIL["on"] = False
    np.testing.assert_array_equal(e.run({"x": np.full(2, 5, np.float32)})["y"], np.full(2, 5, np.float32))


@ofp.register("pytest_bad::overflow")
def overflow_desc(x: ofp.TensorDesc) -> Tuple[ofp.TensorDesc, ofp.TensorDesc]:
    st = ofp.size_tensor(x.shape_expr[0] // 2, x.shape_expr[0])
    return ofp.from_shape_expr([st.expr()], dtype=np.float32), st


@ofp.impl("pytest_bad::overflow")
def overflow_impl(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    np.asarray(outputs[1])[()] = x.shape[0] + 1  # more than the declared upper bound


def test_size_tensor_above_its_upper_bound_is_an_error(tmp_path):
    path = single_node_model(tmp_path / "o.onnx", "overflow", "pytest_bad", [4], n_out=2, out_dtypes=[1, 6])
    e = opforge.Engine.build(path, device="cpu")
    with pytest.raises(opforge.KernelError, match=r"reported data-dependent size 5 outside \[0, 4\]"):
        e.run({"x": np.ones(4, np.float32)})
    with pytest.raises(opforge.InvalidArgumentError, match="only available while a register function runs"):
        ofp.size_tensor(1, 2)


def _write_module(d, name, key, body="np.asarray(outputs[0])[...] = np.asarray(x) * 2"):
    (d / f"{name}.py").write_text(textwrap.dedent(f"""
        from typing import Tuple
        import numpy as np
        import opforge.plugin as ofp

        @ofp.register({key!r})
        def desc(x: ofp.TensorDesc) -> ofp.TensorDesc:
            return x.like()

        @ofp.impl({key!r})
        def impl(x: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
            {body}
    """))


def test_plan_whose_module_cannot_be_imported(tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    _write_module(mods, "pytest_gone_module", "pytest_gone::double")
    sys.path.insert(0, str(mods))
    try:
        opforge.load_plugins("pytest_gone_module")
    finally:
        sys.path.remove(str(mods))
    plan = tmp_path / "gone.plan"
    opforge.Engine.build(single_node_model(tmp_path / "g.onnx", "double", "pytest_gone", [3]), device="cpu").save(plan)
    code = f"import opforge\nopforge.Engine.load({str(plan)!r})\n"
    p = run_python(code, env=ENV)
    assert p.returncode != 0
    assert "NotFoundError" in p.stderr and "pytest_gone::double v1 (layer 'double_node')" in p.stderr, p.stderr
    assert "module 'pytest_gone_module'" in p.stderr and "ModuleNotFoundError" in p.stderr, p.stderr
    with pytest.raises(opforge.NotFoundError, match="cannot import Python module 'no_such_module_x'"):
        opforge.load_plugins("no_such_module_x")


def test_same_op_from_two_modules_is_refused_naming_both(tmp_path):
    _write_module(tmp_path, "pytest_dup_a", "pytest_dup::twice")
    _write_module(tmp_path, "pytest_dup_b", "pytest_dup::twice")
    sys.path.insert(0, str(tmp_path))
    try:
        opforge.load_plugins("pytest_dup_a")
        with pytest.raises(opforge.InvalidArgumentError) as e:
            opforge.load_plugins("pytest_dup_b")
    finally:
        sys.path.remove(str(tmp_path))
    msg = str(e.value)
    assert "'python:pytest_dup_b' registers pytest_dup::twice v1, which 'python:pytest_dup_a' already registered" \
        in msg, msg
    assert opforge.find("pytest_dup::twice").library == "python:pytest_dup_a"
    # A Python op may not take the key of a C++ op either.
    with pytest.raises(opforge.InvalidArgumentError, match="libopforge_ops.so' already registered"):
        _write_module(tmp_path, "pytest_dup_c", "example::circ_pad_plugin")
        sys.path.insert(0, str(tmp_path))
        try:
            opforge.load_plugins("pytest_dup_c")
        finally:
            sys.path.remove(str(tmp_path))


@pytest.mark.parametrize("dynamo", (True, False))
def test_onnx_export_of_a_python_op_round_trips(dynamo, tmp_path):
    import onnx
    opforge.load_plugins("python_plugins.circ_pad")

    class Pad(torch.nn.Module):
        def forward(self, x):
            return torch.ops.pyexample.circ_pad_plugin(x, pads=[1, 1, 2, 2]) * 2

    x = torch.randn(2, 3, 5, 6)
    path = tmp_path / f"pad_{dynamo}.onnx"
    opforge.onnx.export(Pad(), (x,), path, dynamo=dynamo, input_names=["x"], output_names=["y"])
    (node,) = [n for n in onnx.load(str(path)).graph.node if n.domain == "pyexample"]
    assert node.op_type == "circ_pad_plugin"
    e = opforge.Engine.build(path, device="cpu")
    assert e.layers()[0]["library"] == "python:python_plugins.circ_pad"
    np.testing.assert_allclose(e.run({"x": x.numpy()})["y"], (F.pad(x, [1, 1, 2, 2], mode="circular") * 2).numpy())


def test_example_runs_as_a_script():
    p = subprocess.run([sys.executable, str(EXAMPLES / "python_plugins" / "circ_pad.py")], capture_output=True,
                       text=True, env={**os.environ, **ENV}, timeout=300)
    assert p.returncode == 0 and "pyexample::circ_pad_plugin v1 python:__main__ max error 0.0" in p.stdout, \
        p.stdout + p.stderr
