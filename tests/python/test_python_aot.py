"""Ops defined in Python that run ahead of time (@ofp.aot_impl, issue 16): the lowering of a node
to opforge::AotKernel (its attributes: the image, the launches, the outputs), a plan holding only
engine ops (saved, inspected and refused to run by the C++ CLI on the CPU), the JIT/AOT choice
(node attribute `aot`, prefer_aot, the error when both exist and nothing says which), and the bad
answers of an aot_impl, each a clear error naming the op, the function and the value. Without a
GPU, a CUDA plan cannot be built: these tests lower with ofp.lower(..., device="cuda") and build
the lowered network for the CPU. The GPU tests (marker gpu) run the plan with `opforge exec` and
show that the process has no libpython."""
import os
import struct
import subprocess
import sys
from typing import Tuple

import numpy as np
import numpy.typing as npt
import pytest
import torch
import torch.nn.functional as F

import opforge
import opforge.plugin as ofp
from conftest import opforge_bin
from opforge_cases import ROOT

triton = pytest.importorskip("triton")
from opforge._ops import _C  # noqa: E402
from opforge.plugin import _aot  # noqa: E402
from opforge.plugin import triton as oft  # noqa: E402

EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))
import python_plugins.circ_pad  # noqa: E402,F401  (pyexample::circ_pad_plugin: JIT only)
import python_plugins.circ_pad_aot as circ_pad_aot  # noqa: E402
import triton_kernels  # noqa: E402

PADS = np.array([1, 1, 2, 2], np.int32)
PROFILE = {"x": ((1, 4, 8, 8), (2, 4, 8, 8), (4, 4, 8, 8))}
# GPU tests: marker gpu, and skipped where PyTorch sees no CUDA device.
gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to PyTorch")
ADD_SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}


# ---- ops of these tests --------------------------------------------------------------------------------
# pyaot::twice: y = 2 x, with an impl (JIT, NumPy) and an aot_impl (a Triton kernel, AOT).

@ofp.register("pyaot::twice")
def twice_desc(inp0: ofp.TensorDesc) -> ofp.TensorDesc:
    return inp0.like()


@ofp.impl("pyaot::twice")
def twice_impl(inp0: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
    np.asarray(outputs[0])[...] = np.asarray(inp0) * 2


@ofp.aot_impl("pyaot::twice")
def twice_aot(inp0: ofp.TensorDesc, outputs: Tuple[ofp.TensorDesc], tactic: int):
    img = oft.compile(triton_kernels.scale_kernel, {"x": "*fp32", "n": "i32", "a": "fp32", "out": "*fp32"},
                      {"BLOCK": 128})
    n = inp0.shape_expr.numel()
    return oft.launch(img, (ofp.cdiv(n, 128),), [ofp.SymInt32(n), ofp.SymFloat32(2.0)])


# pyaot::tuned: y = 3 x, with two autotune tactics whose aot_impl answers differ (Triton BLOCK 128 and
# 512): the lowered node holds both as variants, which a CUDA build times against each other.
TUNED_BLOCKS = {1: 128, 2: 512}


@ofp.register("pyaot::tuned")
def tuned_desc(inp0: ofp.TensorDesc) -> ofp.TensorDesc:
    return inp0.like()


@ofp.autotune("pyaot::tuned")
def tuned_tune(inp0: ofp.TensorDesc, outputs):
    return [ofp.AutoTuneCombination("FP32, FP32", "LINEAR", [1, 2])]


@ofp.aot_impl("pyaot::tuned")
def tuned_aot(inp0: ofp.TensorDesc, outputs: Tuple[ofp.TensorDesc], tactic: int):
    block = TUNED_BLOCKS[tactic]
    img = oft.compile(triton_kernels.scale_kernel, {"x": "*fp32", "n": "i32", "a": "fp32", "out": "*fp32"},
                      {"BLOCK": block})
    n = inp0.shape_expr.numel()
    return oft.launch(img, (ofp.cdiv(n, block),), [ofp.SymInt32(n), ofp.SymFloat32(3.0)])


# pyaot::answer: an aot_impl whose answer each test sets (BAD), to check every refusal.
BAD = {}


@ofp.register("pyaot::answer")
def answer_desc(inp0: ofp.TensorDesc, scale: float = 1.5) -> ofp.TensorDesc:
    return inp0.like()


@ofp.aot_impl("pyaot::answer")
def answer_aot(inp0: ofp.TensorDesc, scale: float, outputs: Tuple[ofp.TensorDesc], tactic: int):
    return BAD["fn"](inp0, scale, outputs)


@pytest.fixture(autouse=True)
def committed():
    ofp.commit()


def net_of(key, shape=(-1, 4, 8, 8), aot=None, **attrs):
    net = opforge.Network()
    x = net.add_input("x", np.float32, shape)
    ns, name = key.split("::")
    y = net.add_plugin(getattr(getattr(ofp.op, ns), name)(x, **attrs), name="node", aot=aot)
    net.mark_output(y, "y")
    return net


def cubin_sm(b):
    flags, = struct.unpack_from("<I", b, 48)
    return (flags >> 8) & 0xFF if b[8] >= 8 else flags & 0xFF


# ---- lowering and the plan ---------------------------------------------------------------------------------

def test_lowering_makes_an_aot_kernel_node_with_everything_in_its_attributes():
    net = net_of("pyexample::circ_pad_aot", pads=PADS)
    low = ofp.lower(net, device="cuda", arch="sm_90")
    assert net._n.node(0)["op"] == "pyexample::circ_pad_aot"  # the user's network is not changed
    node = low._n.node(0)
    assert node["op"] == "opforge::AotKernel" and node["library"] == "<built-in>" and node["name"] == "node"
    a = node["attrs"]
    assert a["op"] == "pyexample::circ_pad_aot" and a["origin"] == "python:python_plugins.circ_pad_aot"
    assert a["arch"] == 90 and list(a["input_dtypes"]) == [1] and list(a["input_ranks"]) == [4]
    image = bytes(a["images"])
    assert list(a["image_sizes"]) == [len(image)] and a["image_hash"] == _aot.fnv1a64(image)
    assert image[:4] == b"\x7fELF" and struct.unpack_from("<H", image, 18)[0] == 190 and cubin_sm(image) == 90
    assert a["outputs"] == "FP32[in0.0, 4, 12, 10]"
    (launch,) = a["launches"].split("\n")
    fields = dict(f.strip().split("=", 1) for f in launch.split(";"))
    assert fields["kernel"] == "circ_pad_kernel" and fields["image"] == "0"
    assert fields["grid"] == "ceildiv(in0.0*480,256), 1, 1" and fields["block"] == "128, 1, 1"
    assert fields["shared"] == "0"
    # TensorRT's order: inputs, extra args, outputs; then Triton's two scratch pointers.
    extra = _aot.param_count(image, "circ_pad_kernel") - 9  # Triton's scratch pointers (2 in Triton 3.9)
    assert 1 <= extra <= 2
    assert fields["args"] == ("in0, i64:8, i64:8, i64:12, i64:10, i64:2, i64:1, i64:in0.0*480, out0" +
                              ", scratch:0:1" * extra)
    assert low._n.shape_of(low._n.node(0)["outputs"][0]) == "[x.0, 4, 12, 10]"
    assert ofp.DimExpr.parse("ceildiv(in0.0*480,256)") == ofp.cdiv(ofp.DimExpr.symbol("in0.0") * 480, 256)


def test_each_autotune_tactic_becomes_a_variant_the_builder_can_time():
    low = ofp.lower(net_of("pyaot::tuned"), device="cuda", arch="sm_90")
    a = low._n.node(0)["attrs"]
    assert list(a["variant_tactics"]) == [1, 2]
    lines = a["launches"].split("\n")
    assert [ln.split(";")[0] for ln in lines] == ["variant=0", "variant=1"], lines
    assert "grid=in0.0*2, 1, 1" in lines[0] and "grid=ceildiv(in0.0*256,512), 1, 1" in lines[1]
    assert len(a["image_sizes"]) == 2  # one image per BLOCK
    # The CPU build keeps the layer (it cannot run it) with its two variants.
    e = opforge.Engine.build(low, device="cpu", profiles=PROFILE)
    assert e.layers()[0]["op"] == "opforge::AotKernel v1"


def test_aot_plan_holds_only_engine_ops_and_the_cli_inspects_it_without_python(tmp_path):
    low = ofp.lower(net_of("pyexample::circ_pad_aot", pads=PADS), device="cuda", arch="sm_90")
    plan = tmp_path / "aot.plan"
    e = opforge.Engine.build(low, device="cpu", profiles=PROFILE)
    e.save(plan)
    (layer,) = e.layers()
    assert layer["op"] == "opforge::AotKernel v1" and layer["library"] == "<built-in>"
    # No Python op in the plan: the C++ CLI loads it with no module and no op library.
    p = subprocess.run([opforge_bin(), "inspect", str(plan)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "opforge::AotKernel" in p.stdout and "python:" not in p.stdout.replace(
        "python:python_plugins.circ_pad_aot", ""), p.stdout
    # A CPU plan cannot run GPU images: a clear error, not a crash.
    p = subprocess.run([opforge_bin(), "exec", f"--loadEngine={plan}", "--shapes=x:2x4x8x8"], capture_output=True,
                       text=True)
    assert p.returncode != 0
    msg = p.stdout + p.stderr
    assert "opforge::AotKernel (op pyexample::circ_pad_aot) runs only on CUDA" in msg, msg
    with pytest.raises(opforge.OpforgeError, match="runs only on CUDA"):
        opforge.Engine.load(plan).run({"x": np.zeros((2, 4, 8, 8), np.float32)})


def test_an_aot_only_op_cannot_be_built_for_the_cpu():
    net = net_of("pyexample::circ_pad_aot", pads=PADS)
    with pytest.raises(opforge.UnsupportedError,
                       match=r"node 'node' \(op pyexample::circ_pad_aot\): the op has only an aot_impl .*circ_pad_aot"
                             r"\.py.*this is a CPU build: build with device='cuda'"):
        opforge.Engine.build(net, device="cpu", profiles=PROFILE)
    # Nor run through its JIT path (torch.ops): it says why.
    with pytest.raises(Exception, match="has only an aot_impl"):
        torch.ops.pyexample.circ_pad_aot(torch.zeros(1, 1, 4, 4), pads=[1, 1, 1, 1])


# ---- JIT or AOT --------------------------------------------------------------------------------------------

def test_jit_or_aot_follows_the_node_then_prefer_aot_and_both_without_a_choice_is_an_error():
    net = net_of("pyaot::twice")
    with pytest.raises(opforge.InvalidArgumentError,
                       match=r"node 'node' \(op pyaot::twice\) has both an impl \(JIT: .*\) and an aot_impl \(AOT: "
                             r".*\): choose with Engine.build\(..., prefer_aot=True or False\)"):
        ofp.lower(net, device="cuda")
    assert ofp.lower(net, device="cuda", prefer_aot=True)._n.node(0)["op"] == "opforge::AotKernel"
    assert ofp.lower(net, device="cuda", prefer_aot=False)._n.node(0)["op"] == "pyaot::twice"
    # The node's own choice wins over the preference.
    assert ofp.lower(net_of("pyaot::twice", aot=False), device="cuda", prefer_aot=True)._n.node(0)["op"] == \
        "pyaot::twice"
    assert ofp.lower(net_of("pyaot::twice", aot=True), device="cuda")._n.node(0)["op"] == "opforge::AotKernel"
    # A CPU build runs the impl (JIT) whatever is preferred.
    x = np.random.default_rng(0).standard_normal((2, 4, 8, 8)).astype(np.float32)
    for pref in (None, True, False):
        e = opforge.Engine.build(net, device="cpu", profiles=PROFILE, prefer_aot=pref)
        assert e.layers()[0]["op"] == "pyaot::twice v1"
        np.testing.assert_array_equal(e.run({"x": x})["y"], 2 * x)
    # AOT forced on an op without an aot_impl, JIT on one without an impl.
    with pytest.raises(opforge.InvalidArgumentError, match=r"AOT is asked for \(aot=1\) but the op has no aot_impl"):
        ofp.lower(net_of("pyexample::circ_pad_plugin", aot=True, pads=PADS), device="cuda")
    with pytest.raises(opforge.InvalidArgumentError, match=r"JIT is asked for \(aot=0\) but the op has no impl"):
        ofp.lower(net_of("pyexample::circ_pad_aot", aot=False, pads=PADS), device="cuda")


def test_onnx_node_attribute_aot_chooses(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("twice", ["x"], ["t"], name="a", plugin_namespace="pyaot", aot=1),
             helper.make_node("twice", ["t"], ["y"], name="b", plugin_namespace="pyaot", aot=0)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "twice.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    net = opforge.Network.__new__(opforge.Network)
    net._n = _C.Network.import_onnx(str(path), strict_attributes=True)  # `aot` is not an op attribute
    choices = _aot.onnx_choices(path, net)
    assert choices == {0: True, 1: False}
    low = _aot.lower_network(net, device="cuda", choices=choices)
    assert [low._n.node(i)["op"] for i in range(2)] == ["opforge::AotKernel", "pyaot::twice"]
    # The CPU build of the same file: both JIT.
    e = opforge.Engine.build(path, device="cpu", profiles={"x": ((1, 4, 8, 8), (2, 4, 8, 8), (2, 4, 8, 8))})
    assert [l["op"] for l in e.layers()] == ["pyaot::twice v1"] * 2
    x = np.ones((2, 4, 8, 8), np.float32)
    np.testing.assert_array_equal(e.run({"x": x})["y"], 4 * x)


# ---- what an aot_impl may return ---------------------------------------------------------------------------

def ptx_of(fn=None, sig=ADD_SIG, arch="sm_90"):
    return oft.compile(fn or triton_kernels.add_kernel, sig, {"BLOCK": 128}, arch=arch)


def lowered_answer(fn):
    BAD["fn"] = fn
    return ofp.lower(net_of("pyaot::answer", shape=(-1, 16)), device="cuda", arch="sm_90")._n.node(0)["attrs"]


def refusal(fn):
    BAD["fn"] = fn
    with pytest.raises(opforge.OpforgeError) as e:
        ofp.lower(net_of("pyaot::answer", shape=(-1, 16)), device="cuda", arch="sm_90")
    msg = str(e.value)
    assert "op pyaot::answer (node 'node')" in msg and "test_python_aot.py" in msg, msg
    return msg


def test_tensorrt_style_answer_with_triton_ptx_floats_and_several_launches():
    img = ptx_of(triton_kernels.scale_kernel, {"x": "*fp32", "n": "i32", "a": "fp32", "out": "*fp32"})

    def trt_style(inp0, scale, outputs):  # (name, PTX str, params, SymIntExprs), as TensorRT's guide
        p = ofp.KernelLaunchParams()
        n = inp0.shape_expr.numel()
        p.grid_x, p.block_x = ofp.cdiv(n, 128), 128
        extra = ofp.SymIntExprs(2)
        extra[0], extra[1] = ofp.SymInt32(n), ofp.SymFloat32(scale)
        return img.name, img.ptx, p, extra

    a = lowered_answer(trt_style)
    nulls = ", null" * (_aot.param_count(img.ptx, "scale_kernel") - 4)
    assert a["launches"] == ("kernel=scale_kernel; image=0; grid=ceildiv(in0.0*16,128), 1, 1; block=128, 1, 1; "
                             "shared=0; args=in0, i32:in0.0*16, f32:1.5, out0" + nulls)
    assert ".version" in bytes(a["images"]).decode() and ".target sm_90" in bytes(a["images"]).decode()

    def two_launches(inp0, scale, outputs):
        first = trt_style(inp0, scale, outputs)
        return [first, (img.name, img.cubin, first[2], [inp0.shape_expr.numel(), 0.25])]

    a = lowered_answer(two_launches)
    lines = a["launches"].split("\n")
    assert len(lines) == 2 and "image=1" in lines[1] and "args=in0, i32:in0.0*16, f32:0.25, out0" in lines[1]
    assert len(a["image_sizes"]) == 2


def test_bad_answers_are_clear_errors():
    img = ptx_of(triton_kernels.scale_kernel, {"x": "*fp32", "n": "i32", "a": "fp32", "out": "*fp32"})
    good = ofp.KernelLaunchParams(grid_x=1, block_x=128)
    m = refusal(lambda i, s, o: ("scale_kernel", img.ptx))
    assert "returned tuple" in m and "(kernel name, PTX or cubin, ofp.KernelLaunchParams, extra args)" in m
    m = refusal(lambda i, s, o: (7, img.ptx, good, []))
    assert "the kernel name is 7, not an identifier" in m
    m = refusal(lambda i, s, o: ("scale_kernel", b"\x00garbage", good, []))
    assert "bad kernel image: the image is neither a cubin" in m
    m = refusal(lambda i, s, o: ("nope", img.ptx, good, []))
    assert "the ptx has no kernel named 'nope' (it has: scale_kernel)" in m
    m = refusal(lambda i, s, o: ("scale_kernel", img.ptx, (1, 1, 1), []))
    assert "the launch parameters are tuple" in m and "not ofp.KernelLaunchParams" in m
    m = refusal(lambda i, s, o: ("scale_kernel", img.ptx, good, ["n"]))
    assert "extra argument 0 is str 'n'" in m
    m = refusal(lambda i, s, o: ("scale_kernel", img.ptx, good, 5))
    assert "the extra arguments are int 5, not ofp.SymExprs" in m
    # Images for another GPU.
    sm80 = ptx_of(triton_kernels.scale_kernel, {"x": "*fp32", "n": "i32", "a": "fp32", "out": "*fp32"}, arch="sm_80")
    m = refusal(lambda i, s, o: ("scale_kernel", sm80.cubin, good, []))
    assert "the image is a cubin for sm_80, but the build targets sm_90" in m
    newer = img.ptx.replace(".target sm_90", ".target sm_100")
    m = refusal(lambda i, s, o: ("scale_kernel", newer, good, []))
    assert "the image is PTX for sm_100, but the build targets sm_90" in m
    # What only the engine's check sees: the kernel's parameters against the arguments.
    m = refusal(lambda i, s, o: ("scale_kernel", img.cubin, good, [ofp.SymInt64(3), 1.0]))
    assert "its answer is refused" in m and "argument 1 (\"i64:3\") is 8 bytes at offset 8; the kernel's " \
        "parameter 1 is 4 bytes at offset 8" in m, m
    m = refusal(lambda i, s, o: ("scale_kernel", img.cubin, good, []))
    n = _aot.param_count(img.cubin, "scale_kernel")
    assert f"the kernel takes {n} parameters; the launch passes 2 (in0, out0)" in m, m
    m = refusal(lambda i, s, o: ("scale_kernel", img.cubin, ofp.KernelLaunchParams(block_x=64), [1, 1.0]))
    assert "block is (64, 1, 1) but the kernel requires (128, 1, 1)" in m, m
    m = refusal(lambda i, s, o: ("scale_kernel", img.ptx, ofp.KernelLaunchParams(grid_x=ofp.DimExpr.symbol("x.0")),
                                 [1, 1.0]))
    assert "symbol 'x.0' is not in<k>.<d>" in m, m

    def raises(i, s, o):
        raise RuntimeError("no kernel today")
    m = refusal(raises)
    assert "raised RuntimeError: no kernel today" in m
    with pytest.raises(TypeError, match="KernelLaunchParams.grid_x must be an int or a shape expression"):
        ofp.KernelLaunchParams(grid_x=1.5)
    with pytest.raises(TypeError, match="SymFloat32 takes a number"):
        ofp.SymFloat32("1")


def test_bad_aot_impl_signatures_and_ops_aot_cannot_run():
    @ofp.register("pyaot::sig")
    def sig_desc(inp0: ofp.TensorDesc, k: int = 1) -> ofp.TensorDesc:
        return inp0.like()

    with pytest.raises(opforge.InvalidArgumentError, match=r"aot_impl function .*: parameter 'stream' is neither"):
        @ofp.aot_impl("pyaot::sig")
        def bad1(inp0: ofp.TensorDesc, outputs, stream):
            pass
    with pytest.raises(opforge.InvalidArgumentError, match=r"attribute 'k' is annotated <class 'float'>"):
        @ofp.aot_impl("pyaot::sig")
        def bad2(inp0: ofp.TensorDesc, k: float, outputs):
            pass
    with pytest.raises(opforge.InvalidArgumentError, match=r"has no parameter 'outputs'"):
        @ofp.aot_impl("pyaot::sig")
        def bad3(inp0: ofp.TensorDesc, tactic):
            pass

    @ofp.aot_impl("pyaot::sig")
    def fine(inp0: ofp.TensorDesc, outputs, tactic):
        return ("k", "", ofp.KernelLaunchParams(), [])
    ofp.commit()

    # Data-dependent sizes cannot be AOT.
    @ofp.register("pyaot::dds")
    def dds_desc(inp0: ofp.TensorDesc) -> Tuple[ofp.TensorDesc, ofp.TensorDesc]:
        st = ofp.size_tensor(inp0.shape_expr[0] // 2, inp0.shape_expr[0])
        return ofp.from_shape_expr((st.expr(),), dtype=np.int32), st

    @ofp.aot_impl("pyaot::dds")
    def dds_aot(inp0: ofp.TensorDesc, outputs, tactic):
        raise AssertionError("not called")
    ofp.commit()
    net = opforge.Network()
    x = net.add_input("x", np.float32, (8,))
    y, _ = net.add_plugin(ofp.op.pyaot.dds(x))
    net.mark_output(y, "y")
    with pytest.raises(opforge.UnsupportedError, match=r"op pyaot::dds .*size_tensor\(\): an op with data-dependent "
                                                       r"output sizes cannot run ahead of time"):
        ofp.lower(net, device="cuda")


# ---- on a GPU -------------------------------------------------------------------------------------------------

@pytest.mark.gpu
@gpu
def test_gpu_aot_circ_pad_plan_runs_in_the_cli_with_no_python(tmp_path):
    plan = tmp_path / "circ_pad_aot.plan"
    e = circ_pad_aot.build_plan(plan, shape=(-1, 64, 32, 32))
    assert [l["op"] for l in e.layers()] == ["opforge::AotKernel v1"] and e.backend == "cuda"
    x = np.random.default_rng(0).standard_normal((8, 64, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    env = dict(os.environ, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    p = subprocess.run([opforge_bin(), "exec", f"--loadEngine={plan}", "--shapes=x:8x64x32x32",
                        f"--loadInputs=x:{tmp_path / 'x.npy'}", f"--saveOutputs={out}", "--iterations=20"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    want = F.pad(torch.from_numpy(x), [1, 1, 2, 2], mode="circular").numpy()
    np.testing.assert_array_equal(np.load(out / "y.npy"), want)
    # The dynamic loader's log of that process (every library it loaded, dlopen included).
    logs = "".join(f.read_text(errors="replace") for f in tmp_path.glob("ld.*"))
    assert "calling init: " in logs and "libopforge.so" in logs, logs[:2000]
    assert "libcuda.so" in logs  # it did run on the GPU
    assert "libpython" not in logs, [l for l in logs.splitlines() if "libpython" in l][:5]
    ldd = subprocess.run(["ldd", opforge_bin()], capture_output=True, text=True).stdout
    assert "libpython" not in ldd


@pytest.mark.gpu
@gpu
def test_gpu_aot_and_jit_plans_agree_and_replay_in_a_cuda_graph(tmp_path):
    net = net_of("pyaot::twice", shape=(-1, 4, 8, 8))
    x = torch.randn(3, 4, 8, 8, device="cuda")
    aot = opforge.Engine.build(net, device="cuda", profiles=PROFILE, prefer_aot=True)
    assert aot.layers()[0]["op"] == "opforge::AotKernel v1"
    for _ in range(4):  # the later runs replay a captured graph holding the AOT launch
        y = aot.run({"x": x})["y"]
    torch.testing.assert_close(y, 2 * x, rtol=0, atol=0)
    big = circ_pad_aot.build_plan(tmp_path / "p.plan", shape=(-1, 64, 32, 32))
    xb = torch.randn(5, 64, 32, 32, device="cuda")
    torch.testing.assert_close(big.run({"x": xb})["y"], F.pad(xb, [1, 1, 2, 2], mode="circular"), rtol=0, atol=0)


@pytest.mark.gpu
@gpu
def test_gpu_aot_variants_are_timed_and_the_plan_names_the_winner():
    e = opforge.Engine.build(net_of("pyaot::tuned"), device="cuda", profiles=PROFILE, prefer_aot=True)
    (layer,) = e.layers()
    assert layer["tactic"] in ("1 (cuda.aot)", "2 (cuda.aot.variant1)"), layer["tactic"]
    x = torch.randn(4, 4, 8, 8, device="cuda")
    torch.testing.assert_close(e.run({"x": x})["y"], 3 * x, rtol=0, atol=0)


@pytest.mark.gpu
@gpu
def test_gpu_triton_jit_impl_runs_on_the_engines_stream():
    @ofp.register("pyaot::triton_jit")
    def tj_desc(inp0: ofp.TensorDesc) -> ofp.TensorDesc:
        return inp0.like()

    @ofp.impl("pyaot::triton_jit")
    def tj_impl(inp0: ofp.Tensor, outputs: Tuple[ofp.Tensor], stream: int) -> None:
        n = inp0.numel
        oft.jit_launch(triton_kernels.add_kernel, (triton.cdiv(n, 256),), inp0, inp0, outputs[0], n,
                       stream=stream, BLOCK=256)
    ofp.commit()
    e = opforge.Engine.build(net_of("pyaot::triton_jit"), device="cuda", profiles=PROFILE)
    x = torch.randn(4, 4, 8, 8, device="cuda")
    torch.testing.assert_close(e.run({"x": x})["y"], 2 * x, rtol=0, atol=0)
