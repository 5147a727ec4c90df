"""Bad input to the PyTorch ops and the package: clear errors (class and message naming the op, the
input or attribute and the value), non-contiguous tensors handled, a missing build explained."""
import pathlib
import shutil

import pytest
import torch

import opforge
from opforge_cases import ROOT, assert_close, circ_pad_ref, da_inputs, da_ref, fused_gelu_ref, run_python


# ---- wrong dtype -------------------------------------------------------------------------------

def test_wrong_dtype_names_op_input_and_accepted_types():
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    with pytest.raises(opforge.DTypeError) as e:
        torch.ops.example.circ_pad_plugin(x, pads=[1, 1])
    msg = str(e.value)
    assert isinstance(e.value, TypeError)
    assert "example::circ_pad_plugin" in msg and "x: INT32" in msg and "FP32, FP32 | FP16, FP16 | BF16, BF16" in msg
    with pytest.raises(opforge.DTypeError, match=r"input 'x' has dtype torch.complex64, which opforge does not support"):
        opforge.torch.FusedGelu(torch.zeros(2, dtype=torch.complex64))
    with pytest.raises(opforge.DTypeError, match="elemwise_add_plugin_.*x: FP64"):
        opforge.torch.elemwise_add_plugin_(torch.zeros(3, dtype=torch.float64), 1)
    # Mixed types the op's combinations do not allow (the backward op takes one type for x and dy).
    with pytest.raises(opforge.OpforgeError, match="FusedGeluGrad"):
        torch.ops.opforge.FusedGeluGrad(torch.zeros(3), torch.zeros(3, dtype=torch.float16))


def test_wrong_dtype_from_the_shape_rule():
    feat, spatial, start, loc, w = da_inputs(B=1, A=2, P=2, ncam=1, levels=((2, 3),), C=4, G=2)
    with pytest.raises(opforge.InvalidArgumentError, match="sampling_location and weights must be FP32.*got FP16"):
        opforge.torch.DeformableAggregation(feat, spatial, start, loc.half(), w)
    with pytest.raises(opforge.InvalidArgumentError, match="spatial_shape and scale_start_index must be INT32"):
        opforge.torch.DeformableAggregation(feat, spatial.long(), start, loc, w)


def test_wrong_dtype_under_torch_compile():
    """The fake kernel applies the same checks: the error surfaces while compiling."""
    torch._dynamo.reset()
    f = torch.compile(lambda x: torch.ops.example.circ_pad_plugin(x, pads=[1, 1]), fullgraph=True, dynamic=True,
                      backend="aot_eager")
    with pytest.raises(Exception, match="no type combination of the op accepts inputs \\(x: INT64\\)"):
        f(torch.zeros(2, 3, dtype=torch.int64))


# ---- wrong device --------------------------------------------------------------------------------

def test_inputs_on_different_devices():
    with pytest.raises(opforge.DeviceError) as e:
        torch.ops.opforge.FusedGeluGrad(torch.zeros(2, 3), torch.zeros(2, 3, device="meta"))
    assert isinstance(e.value, ValueError)
    assert "input 'dy' is on meta but input 'x' is on cpu" in str(e.value)
    feat, spatial, start, loc, w = da_inputs(B=1, A=2, P=2, ncam=1, levels=((2, 3),), C=4, G=2)
    with pytest.raises(opforge.DeviceError, match="DeformableAggregation: input 'spatial_shape' is on meta"):
        opforge.torch.DeformableAggregation(feat, spatial.to("meta"), start, loc, w)


def test_meta_tensors_get_shapes_from_the_shape_rule():
    """All inputs on the meta device: the fake kernel (the C++ shape rule) gives the shapes."""
    y = opforge.torch.circ_pad_plugin(torch.empty(2, 3, 4, device="meta"), [1, 2, 3, 4])
    assert y.device.type == "meta" and tuple(y.shape) == (2, 10, 7)
    # A data-dependent size needs fake tensors with a shape environment (meta tensors cannot hold one).
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        idx, cnt = opforge.torch.non_zero_plugin(mode.from_tensor(torch.empty(5, 6)))
    assert isinstance(idx.shape[0], torch.SymInt) and idx.shape[1] == 2
    assert cnt.shape == () and cnt.dtype == torch.int32


def test_cuda_tensors_on_a_machine_without_cuda_tactics_or_device():
    if torch.cuda.is_available():
        pytest.skip("covered by test_torch_gpu.py on this machine")
    with pytest.raises((RuntimeError, AssertionError)):
        torch.ops.example.circ_pad_plugin(torch.zeros(2, 3, device="cuda"), pads=[1, 1])


# ---- attributes ------------------------------------------------------------------------------------

def test_attribute_errors_name_the_attribute():
    x = torch.randn(2, 3, 4)
    with pytest.raises(opforge.InvalidArgumentError, match="attribute 'pads' must have an even, non-zero length; got 3"):
        opforge.torch.circ_pad_plugin(x, [1, 1, 1])
    with pytest.raises(opforge.InvalidArgumentError, match="attribute 'pads' value -1 at index 0 is negative"):
        opforge.torch.circ_pad_plugin(x, [-1, 1])
    with pytest.raises(opforge.InvalidArgumentError, match="pads 4 dimensions, but the input has rank 3"):
        opforge.torch.circ_pad_plugin(x, [1] * 8)
    with pytest.raises(opforge.InvalidArgumentError, match="attribute 'approximate' must be \"none\" or \"tanh\""):
        opforge.torch.FusedGelu(x, approximate="exact")
    with pytest.raises(opforge.InvalidArgumentError, match="chain"):
        opforge.torch.FusedGelu(x, chain=[9])
    with pytest.raises(RuntimeError, match="missing value for argument 'pads'"):
        torch.ops.example.circ_pad_plugin(x)
    with pytest.raises(TypeError, match="circ_pad_plugin takes 1 inputs and 1 attributes"):
        opforge.torch.circ_pad_plugin(x, [1, 1], 3)
    with pytest.raises(TypeError, match="attribute 'pads' given twice"):
        opforge.torch.circ_pad_plugin(x, [1, 1], pads=[1, 1])


def test_shape_relation_errors():
    with pytest.raises(opforge.InvalidArgumentError,
                       match=r"a padded dimension must not be empty \(dimension 1\): 1 <= 0 does not hold"):
        opforge.torch.circ_pad_plugin(torch.randn(2, 0), [1, 1])
    with pytest.raises(opforge.InvalidArgumentError, match="input must be 2-D"):
        opforge.torch.non_zero_plugin(torch.randn(2, 3, 4))
    feat, spatial, start, loc, w = da_inputs(B=1, A=2, P=2, ncam=1, levels=((2, 3),), C=4, G=2)
    with pytest.raises(opforge.InvalidArgumentError, match="not divisible by the group count G = 3"):
        opforge.torch.DeformableAggregation(feat, spatial, start, loc, torch.zeros(1, 2, 2, 1, 1, 3))
    # Bad tables: on the CPU the shape rule sees their values (InvalidArgumentError); the kernel
    # checks them too (OutOfRangeError, what CUDA tensors get). Both are ValueErrors naming the entry.
    bad_start = start.clone()
    bad_start[0, 0] = 5
    with pytest.raises(ValueError, match=r"scale_start_index\[0\]\[0\] = 5"):
        opforge.torch.DeformableAggregation(feat, spatial, bad_start, loc, w)


# ---- non-contiguous inputs ----------------------------------------------------------------------------

def test_non_contiguous_inputs_are_made_contiguous():
    base = torch.randn(5, 6, 7)
    cases = {
        "transposed": base.transpose(0, 2),
        "strided": base[:, ::2, 1:],
        "expanded": torch.randn(1, 6, 1).expand(5, 6, 7),
        "channels_last": torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
    }
    for name, x in cases.items():
        assert not x.is_contiguous() or name == "channels_last"
        assert_close(opforge.torch.circ_pad_plugin(x, [1, 2, 0, 3]), circ_pad_ref(x.contiguous(), [1, 2, 0, 3]),
                     what=f"circ_pad of a {name} tensor")
        assert_close(opforge.torch.FusedGelu(x, chain=[1]), fused_gelu_ref(x.contiguous(), chain=[1]),
                     what=f"FusedGelu of a {name} tensor")
    feat, spatial, start, loc, w = da_inputs(B=1, A=4, P=2, ncam=2, levels=((3, 4), (2, 2)), C=8, G=2)
    loc_t = loc.transpose(1, 2).contiguous().transpose(1, 2)  # same values, permuted strides
    assert not loc_t.is_contiguous()
    assert_close(opforge.torch.DeformableAggregation(feat, spatial, start, loc_t, w), da_ref(feat, spatial, start, loc, w),
                 what="DeformableAggregation with non-contiguous locations")


def test_in_place_op_writes_back_into_a_non_contiguous_input():
    base = torch.zeros(4, 6)
    view = base[:, ::2]  # every other column: not contiguous
    assert not view.is_contiguous()
    out = opforge.torch.elemwise_add_plugin_(view, 3)
    assert out is view
    assert torch.equal(base[:, ::2], torch.full((4, 3), 3.0)) and torch.equal(base[:, 1::2], torch.zeros(4, 3))


def test_gradient_of_a_non_contiguous_output_gradient():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    y = opforge.torch.FusedGelu(x)
    g = torch.randn(4, 3, dtype=torch.float64).t()  # non-contiguous grad_output
    (gx,) = torch.autograd.grad(y, x, g)
    xr = x.detach().clone().requires_grad_()
    (gr,) = torch.autograd.grad(torch.nn.functional.gelu(xr), xr, g)
    assert_close(gx, gr, what="FusedGelu gradient")


# ---- autograd without a backward ------------------------------------------------------------------------

def test_backward_through_an_op_without_backward():
    x = torch.randn(3, requires_grad=True)
    dy = torch.randn(3)
    dx = torch.ops.opforge.FusedGeluGrad(x, dy)
    with pytest.raises(opforge.UnsupportedError, match="opforge::FusedGeluGrad has no gradient: it declares no backward"):
        dx.sum().backward()
    with pytest.raises(opforge.UnsupportedError, match="cannot modify a tensor that requires grad"):
        opforge.torch.elemwise_add_plugin_(torch.randn(3, requires_grad=True) * 1, 1)


# ---- missing builds -------------------------------------------------------------------------------------------

def _copy_package_sources(dst):
    """The package's Python files without the compiled extension (what a checkout has before the build)."""
    src = ROOT / "python" / "opforge"
    shutil.copytree(src, dst / "opforge", ignore=shutil.ignore_patterns("*.so", "__pycache__", "_build_info.py", "csrc"))
    assert not list((dst / "opforge").glob("_C*"))


def test_missing_extension_says_how_to_build_it(tmp_path):
    _copy_package_sources(tmp_path)
    # Only the copy: an editable install's import hook would otherwise find the built extension.
    code = ("import sys\n"
            "sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in getattr(f, '__name__', type(f).__name__)]\n"
            "import opforge\n")
    r = run_python(code, env={"PYTHONPATH": str(tmp_path), "OPFORGE_BUILD_DIR": str(opforge.build_dir())},
                   cwd=str(tmp_path))
    assert r.returncode != 0
    assert "ImportError" in r.stderr
    assert "the C++ extension opforge._C is not built" in r.stderr, r.stderr[-2000:]
    assert "pip install --no-build-isolation -e python/" in r.stderr
    assert "scripts/build.sh" in r.stderr


def test_missing_libopforge_says_where_it_looked(tmp_path):
    r = run_python("import opforge", env={"OPFORGE_BUILD_DIR": str(tmp_path / "nowhere")})
    assert r.returncode != 0
    assert f"{tmp_path / 'nowhere' / 'lib' / 'libopforge.so'} does not exist" in r.stderr, r.stderr[-2000:]
    assert "pip install --no-build-isolation -e python/" in r.stderr


def test_missing_ops_library(tmp_path):
    r = run_python("import opforge", env={"OPFORGE_OPS_LIBRARY": str(tmp_path / "libnothing.so")})
    assert r.returncode != 0
    assert "libnothing.so does not exist" in r.stderr and "OPFORGE_OPS_LIBRARY=none" in r.stderr, r.stderr[-2000:]
    r = run_python("import opforge; print(sorted(opforge.ops()))", env={"OPFORGE_OPS_LIBRARY": "none"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


def test_load_library_errors(tmp_path):
    with pytest.raises(opforge.OpforgeError, match="libmissing.so"):
        opforge.load_library(tmp_path / "libmissing.so")
    text = tmp_path / "libtext.so"
    text.write_text("not a shared object")
    with pytest.raises(opforge.OpforgeError, match="libtext.so"):
        opforge.load_library(text)
    # Loading the contrib library again is a no-op (no new ops, nothing re-registered).
    assert opforge.load_library(opforge.default_ops_library()) == []


def test_extra_op_library_registers_its_ops(tmp_path):
    """opforge.load_library(path) makes a library's ops torch ops (the test plugin of the C++ tests)."""
    lib = pathlib.Path(opforge.library_dir()) / "libtest_plugin_extra_op.so"
    if not lib.exists():
        pytest.skip(f"{lib} is built with the C++ tests (OPFORGE_TESTS=ON)")
    code = (f"import opforge, torch\nnew = opforge.load_library({str(lib)!r})\nassert new == ['test::copy'], new\n"
            "t = opforge.torch.registered('test::copy')\nprint(t.schema)\n"
            "x = torch.randn(3, 4)\nassert torch.equal(torch.ops.test.copy(x), x)\n"
            "assert opforge.torch.registration_problems() == {}\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "copy(Tensor x) -> Tensor"
