"""opforge.Engine: build (profiles, fp16, device), load / save (file, bytes), run on NumPy arrays,
tensors and DLPack objects (results of the same kind), the engine's errors as Python exceptions
with the engine's message, on the shipped seed examples (examples/*.onnx)."""
import pathlib

import numpy as np
import pytest
import torch

import opforge
from opforge_cases import build_cpu, ROOT, assert_close, circ_pad_ref, non_zero_ref, run_python

EX = ROOT / "examples"
PAD_PROFILE = {"x": ((1, 3, 32, 32), (4, 3, 32, 32), (16, 3, 32, 32))}


@pytest.fixture(scope="module")
def pad_engine():
    return opforge.Engine.build(EX / "circ_pad" / "circ_pad.onnx", profiles=PAD_PROFILE, device="cpu")


def test_build_and_inspect(pad_engine):
    e = pad_engine
    assert e.backend == "cpu" and e.device == "cpu" and e.num_profiles == 1
    assert e.inputs == [{"name": "x", "is_input": True, "dtype": 1, "format": "LINEAR", "shape": "[x.0, 3, 32, 32]",
                         "dims": [-1, 3, 32, 32]}]
    assert e.outputs[0]["name"] == "y" and e.outputs[0]["shape"] == "[x.0, 3, 36, 34]"
    assert e.profile_shapes(0, "x") == ([1, 3, 32, 32], [4, 3, 32, 32], [16, 3, 32, 32])
    (layer,) = e.layers()
    assert layer["op"] == "example::circ_pad_plugin v1" and layer["tactic"] == "0 (cpu.reference)"
    assert layer["library"] == "libopforge_ops.so" and layer["kind"] == "other"
    assert "example::circ_pad_plugin" in e.inspect()


def test_op_kinds_and_tf32_tactics():
    from opforge import _C, _ops
    ops = {c.key: _ops.OpDef(c) for c in _C.ops(True)}  # the built-in ONNX ops too
    mm = ops["ai.onnx::MatMul"]
    assert mm.kind == "gemm" and ops["ai.onnx::Conv"].kind == "conv"
    assert ops["ai.onnx::Relu"].kind == "elementwise" and ops["example::circ_pad_plugin"].kind == "other"
    # TF32 tactics exist where the CUDA tactics were compiled in: cuBLASLt 6-9 (FP32 data only).
    assert mm.tf32_tactics == ([6, 7, 8, 9] if mm.has_cuda_tactics else [])
    names = dict((t[0], t[1]) for t in mm.tactics)
    assert all(names[i].endswith(".tf32") for i in mm.tf32_tactics)


def test_run_numpy_torch_dlpack(pad_engine):
    x = torch.randn(5, 3, 32, 32)
    want = circ_pad_ref(x, [1, 1, 2, 2])
    out = pad_engine.run({"x": x.numpy()})
    assert isinstance(out["y"], np.ndarray) and out["y"].flags.c_contiguous
    assert_close(torch.from_numpy(out["y"]), want)
    out = pad_engine.run({"x": x})
    assert isinstance(out["y"], torch.Tensor) and out["y"].device.type == "cpu"
    assert_close(out["y"], want)

    class DLPackOnly:  # any producer of the DLPack protocol
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    out = pad_engine.run({"x": DLPackOnly(x)})
    assert isinstance(out["y"], torch.Tensor)
    assert_close(out["y"], want)
    # Non-contiguous inputs are copied into the engine in row-major order.
    xt = torch.randn(32, 3, 32, 2).permute(3, 1, 0, 2)
    assert_close(pad_engine.run({"x": xt})["y"], circ_pad_ref(xt.contiguous(), [1, 1, 2, 2]))
    # The caller's array is not modified and results are not views of engine memory.
    a = x.numpy().copy()
    r1 = pad_engine.run({"x": a})["y"]
    r2 = pad_engine.run({"x": a * 0})["y"]
    assert np.array_equal(a, x.numpy()) and not np.shares_memory(r1, r2) and np.abs(r1).max() > 0


def test_save_and_load(pad_engine, tmp_path):
    p = tmp_path / "pad.plan"
    pad_engine.save(p)
    assert p.read_bytes() == pad_engine.serialize()
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    want = pad_engine.run({"x": x})["y"]
    for e in (opforge.Engine.load(p), opforge.Engine.load(str(p)), opforge.Engine.load(p.read_bytes())):
        np.testing.assert_array_equal(e.run({"x": x})["y"], want)
    with pytest.raises(opforge.OpforgeError, match="nodir"):
        pad_engine.save(tmp_path / "nodir" / "pad.plan")
    assert not (tmp_path / "nodir").exists()


def test_several_profiles():
    e = build_cpu(EX / "circ_pad" / "circ_pad.onnx", profiles=[
        {"x": ((1, 3, 32, 32), (2, 3, 32, 32), (4, 3, 32, 32))},
        {"x": ((8, 3, 32, 32), (16, 3, 32, 32), (32, 3, 32, 32))}])
    assert e.num_profiles == 2
    x = torch.randn(20, 3, 32, 32)
    with pytest.raises(opforge.OutOfRangeError, match="outside optimization profile 0"):
        e.run({"x": x})
    assert_close(e.run({"x": x}, profile=1)["y"], circ_pad_ref(x, [1, 1, 2, 2]))


def test_data_dependent_output_shape():
    e = build_cpu(EX / "non_zero" / "non_zero.onnx")
    for fill in (0.0, 0.5, 1.0):
        x = torch.rand(8, 16)
        x[x < fill] = 0
        out = e.run({"x": x})
        idx, cnt = non_zero_ref(x)
        assert_close(out["indices"], idx, what=f"indices (fill {fill})")
        assert_close(out["count"], cnt)


def test_in_place_example_leaves_the_input_alone():
    e = build_cpu(EX / "inplace_add" / "inplace_add.onnx")
    x = np.random.default_rng(2).standard_normal((2, 4, 8, 8)).astype(np.float32)
    x0 = x.copy()
    y = e.run({"x": x})["y"]
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_allclose(y, x0 + 6, rtol=0, atol=1e-6)


def test_fp16_build_lowers_the_plugin():
    e = build_cpu(EX / "circ_pad" / "circ_pad.onnx", profiles=PAD_PROFILE, fp16=True)
    combos = [(ly["op"], ly["combo"]) for ly in e.layers()]
    assert ("example::circ_pad_plugin v1", "FP16, FP16") in combos, combos
    x = torch.randn(2, 3, 32, 32)
    # A copy in FP16: the only error is the rounding of the input to half precision.
    assert_close(e.run({"x": x})["y"], circ_pad_ref(x.half().float(), [1, 1, 2, 2]))


def test_engine_errors_carry_the_engine_message(pad_engine, tmp_path):
    with pytest.raises(opforge.NotFoundError, match="nothing.onnx: no such file"):
        build_cpu(tmp_path / "nothing.onnx")
    with pytest.raises(opforge.InvalidArgumentError, match="input 'x' has dynamic dimensions .* give an optimization profile"):
        build_cpu(EX / "circ_pad" / "circ_pad.onnx")
    with pytest.raises(opforge.InvalidArgumentError, match="device must be 'auto', 'cpu' or 'cuda'"):
        opforge.Engine.build(EX / "circ_pad" / "circ_pad.onnx", profiles=PAD_PROFILE, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(opforge.OpforgeError, match="CUDA"):
            opforge.Engine.build(EX / "circ_pad" / "circ_pad.onnx", profiles=PAD_PROFILE, device="cuda")
    with pytest.raises(opforge.OutOfRangeError, match=r"dimension 0 = 17 is outside optimization profile 0 \[1, 16\]"):
        pad_engine.run({"x": np.zeros((17, 3, 32, 32), np.float32)})
    with pytest.raises(opforge.InvalidArgumentError, match="dimension 2 is fixed at 32; got 31"):
        pad_engine.run({"x": np.zeros((2, 3, 31, 32), np.float32)})
    with pytest.raises(opforge.DTypeError, match="input 'x' has dtype float64 but the engine expects FP32"):
        pad_engine.run({"x": np.zeros((2, 3, 32, 32))})
    with pytest.raises(opforge.NotFoundError, match="'y' is not an input of the engine; its inputs: x"):
        pad_engine.run({"x": np.zeros((2, 3, 32, 32), np.float32), "y": np.zeros(1)})
    with pytest.raises(opforge.InvalidArgumentError, match="input 'x' is not given"):
        pad_engine.run({})
    with pytest.raises(TypeError, match="expected a NumPy array, a torch.Tensor or a DLPack tensor"):
        pad_engine.run({"x": object()})
    # Plans: not a plan, damaged, truncated.
    with pytest.raises(opforge.InvalidArgumentError, match="not an opforge plan file"):
        opforge.Engine.load(b"garbage" * 100)
    plan = bytearray(pad_engine.serialize())
    plan[100] ^= 1
    with pytest.raises(opforge.CorruptError, match="checksum mismatch"):
        opforge.Engine.load(bytes(plan))
    with pytest.raises(opforge.CorruptError, match="truncated"):
        opforge.Engine.load(pad_engine.serialize()[:1000])
    with pytest.raises(opforge.IoError, match="cannot open plan file"):
        opforge.Engine.load(tmp_path / "missing.plan")


def test_unknown_op_lists_it_with_the_plugins_flag(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("mystery_plugin", ["x"], ["y"], domain="nowhere", plugin_namespace="nowhere")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    p = tmp_path / "mystery.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nowhere", 1)]),
              str(p))
    with pytest.raises(opforge.NotFoundError) as e:
        build_cpu(p)
    assert "op 'mystery_plugin', namespace 'nowhere', version '1'" in str(e.value) and "--plugins" in str(e.value)


def test_low_level_context_shapes_follow_new_input_shapes(pad_engine):
    """ExecutionContext.shape() after new input shapes gives the new output shape, also after a run
    (what Engine.run relies on to size the tensors it binds on CUDA plans)."""
    c = pad_engine.create_execution_context()
    for b in (2, 5, 1):
        c.set_input_shape("x", [b, 3, 32, 32])
        assert c.shape("y") == [b, 3, 36, 34]
        a = np.random.default_rng(b).standard_normal((b, 3, 32, 32)).astype(np.float32)
        c.set_input("x", a.ctypes.data, a.nbytes)
        c.execute()
        assert c.shape("y") == [b, 3, 36, 34]
        y = np.empty((b, 3, 36, 34), np.float32)
        c.copy_output("y", y.ctypes.data, y.nbytes)
        np.testing.assert_array_equal(y, circ_pad_ref(torch.from_numpy(a), [1, 1, 2, 2]).numpy())
    assert "#" in build_cpu(EX / "non_zero" / "non_zero.onnx").outputs[0]["shape"]


def test_build_tree_copied_with_its_libraries(tmp_path):
    """The GPU machine's set-up: bin/ and lib/ of a build copied elsewhere with the third-party
    libraries libopforge.so needs (libprotobuf, libonnx_proto) copied into lib/. `import opforge`
    with OPFORGE_BUILD_DIR there loads only the copies (in dependency order), and the engine works."""
    import shutil
    from opforge._native import _elf_needed_and_soname
    src = pathlib.Path(opforge.library_dir())
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("libopforge.so", "libopforge_ops.so"):
        shutil.copy2(src / name, lib / name)
    needed, _ = _elf_needed_and_soname(src / "libopforge.so")
    maps = {pathlib.Path(line.split()[-1]) for line in open("/proc/self/maps") if "/" in line}
    copied = []
    for n in needed:
        if "protobuf" in n or "onnx" in n:
            hit = [m for m in maps if m.name.startswith(n)]
            assert hit, f"{n} is not loaded in this process"
            shutil.copy2(hit[0], lib / n)
            copied.append(n)
    assert copied, needed
    code = ("import opforge, torch\n"
            "maps = [l.split()[-1] for l in open('/proc/self/maps') if '/' in l]\n"
            f"for n in {copied!r}:\n"
            "    where = {m for m in maps if m.rsplit('/', 1)[-1].startswith(n)}\n"
            f"    assert where == {{{str(lib)!r} + '/' + n}}, where\n"
            "x = torch.randn(2, 3)\n"
            "assert torch.allclose(opforge.torch.FusedGelu(x), torch.nn.functional.gelu(x), atol=1e-6)\n"
            "print(opforge.library_dir())\n")
    r = run_python(code, env={"OPFORGE_BUILD_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == str(lib)
