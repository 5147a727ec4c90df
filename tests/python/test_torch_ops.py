"""Every contrib op through the whole front half of the seeds' workflow, one test per op:

  1. the PyTorch op (torch.ops.<ns>.<name>, CPU kernel = the op's CPU reference) against a pure
     PyTorch reference in float64, for every dtype the op accepts and two shapes, and the seed-style
     wrapper opforge.torch.<name>;
  2. torch.library.opcheck (schema, autograd registration, fake kernel, AOT dispatch with dynamic
     shapes);
  3. gradients, where the op declares a backward: torch.autograd.gradcheck (central differences)
     and the autograd gradient against the reference's;
  4. torch.compile(fullgraph=True, dynamic=True) at two shapes (fullgraph: no graph break);
  5. ONNX export of a module calling the op with both exporters (dynamo=True and TorchScript): the
     TensorRT-style node, value_info from the shape rule;
  6. each ONNX file built by the opforge engine through the Python bindings and run against PyTorch,
     then the engine bindings: save / load (file and bytes) / run on NumPy arrays and on tensors.

Each op's case is ops/contrib/<op>/<op>_cases.py (collected into opforge_cases.OP_CASES).
Tolerances: opforge_cases.TOL (per dtype) unless the case overrides them (written there).
"""
import numpy as np
import pytest
import torch

import opforge
from opforge_cases import (OP_CASES, OneOp, as_tuple, assert_close, check_plugin_node, compile_and_compare,
                           engine_run_compare, op_call, opcheck)


def clone_args(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def test_every_op_is_registered_and_covered():
    """Every op of libopforge_ops.so is a torch op, without registration problems, and has a case
    (ops/contrib/<op>/<op>_cases.py; a new op without one fails this test)."""
    keys = set(opforge.ops())
    lib_keys = {k for k, op in opforge.ops().items() if op.library.endswith("libopforge_ops.so")}
    assert lib_keys, "libopforge_ops.so defines no ops?"
    registered = set(opforge.torch.registered())
    assert keys <= registered
    # Anything else was registered on purpose with register_op (built-in ONNX ops, test_torch_generic.py).
    assert all(k.startswith("ai.onnx::") for k in registered - keys), registered - keys
    assert opforge.torch.registration_problems() == {}
    assert lib_keys <= set(OP_CASES), f"ops without a test case (ops/contrib/<op>/<op>_cases.py): {sorted(lib_keys - set(OP_CASES))}"
    for key in keys:
        top = opforge.torch.registered(key)
        ns, name = top.qualname.split("::")
        assert getattr(getattr(torch.ops, ns), name).default is top.callable()


def test_schemas_follow_the_definitions():
    """Attributes become typed keyword-only arguments with their defaults, the in-place op mutates
    and returns its input, optional/typed per the C++ definitions."""
    schemas = {k: str(t.callable()._schema) for k, t in opforge.torch.registered().items()}
    assert schemas["example::circ_pad_plugin"] == "example::circ_pad_plugin(Tensor x, *, int[] pads) -> Tensor"
    assert schemas["opforge::FusedGelu"] == ('opforge::FusedGelu(Tensor x, *, str approximate="none", int[] chain=[], '
                                             'float[] chain_scalars=[]) -> Tensor')
    if opforge.torch.INPLACE_RETURNS:  # PyTorch >= 2.13: torch.Tag.inplace
        assert schemas["sample::elemwise_add_plugin_"] == \
            "sample::elemwise_add_plugin_(Tensor(a!) x, *, int delta) -> Tensor(a!)"
        assert torch.Tag.inplace in torch.ops.sample.elemwise_add_plugin_.default.tags
    else:
        assert schemas["sample::elemwise_add_plugin_"] == "sample::elemwise_add_plugin_(Tensor(a!) x, *, int delta) -> ()"
    assert schemas["example::non_zero_plugin"] == "example::non_zero_plugin(Tensor x) -> (Tensor, Tensor)"
    assert schemas["opforge::DeformableAggregationGrad"].endswith("Tensor grad_output) -> (Tensor, Tensor, Tensor)")
    # The out-of-place twin of the in-place op (what ONNX export writes as the same node).
    twin = torch.ops.sample.elemwise_add_plugin__functional.default
    assert str(twin._schema) == "sample::elemwise_add_plugin__functional(Tensor x, *, int delta) -> Tensor"
    x = torch.arange(4.0)
    y = twin(x, delta=5)
    assert torch.equal(x, torch.arange(4.0)) and torch.equal(y, torch.arange(4.0) + 5)


@pytest.mark.parametrize("key", sorted(OP_CASES))
def test_op_pipeline(key, tmp_path):
    case = OP_CASES[key]
    op = opforge.find(key)
    top = opforge.torch.registered(key)

    # 1. eager against the reference, every dtype, two shapes; the seed-style wrapper.
    for dt in case.dtypes:
        for make in (case.make, case.second_shape):
            args, attrs = make(dt, "cpu")
            want = case.reference(clone_args(args), attrs)
            if top.inplace:  # through the wrapper, which returns the mutated input on every PyTorch
                got = as_tuple(op_call(key, clone_args(args), attrs))
            else:  # torch.ops.<ns>.<name> itself
                got = as_tuple(top.callable()(*clone_args(args), **attrs))
            assert len(got) == len(want)
            atol, rtol = case.tol.get(dt, (None, None))
            for k, (g, w) in enumerate(zip(got, want)):
                assert_close(g, w, atol, rtol, f"{key} {dt} output {k}")
    args, attrs = case.make(case.dtypes[0], "cpu")
    fn = getattr(opforge.torch, top.name)
    positional = [attrs[a["name"]] for a in op.attrs if a["name"] in attrs]
    if len(positional) == len(attrs):
        w = as_tuple(op_call(key, clone_args(args), attrs))
        for g, ww in zip(as_tuple(fn.apply(*clone_args(args), *positional)), w):
            assert_close(g, ww, what=f"opforge.torch.{top.name}.apply")

    # 2. opcheck (inputs with gradients require grad where the op has a backward).
    args, attrs = case.make(torch.float32 if torch.float32 in case.dtypes else case.dtypes[0], "cpu")
    args = clone_args(args)
    if case.grad:
        for i in case.grad[1]:
            args[i].requires_grad_(True)
    opcheck(key, args, attrs)

    # 3. gradients: finite differences, and the reference's autograd.
    if case.grad:
        assert op.backward, f"{key} has a gradient case but declares no backward"
        gdt, gidx, gkw = case.grad
        gargs, gattrs = case.grad_make(gdt, "cpu")
        gargs = [a.detach().clone() for a in gargs]
        for i in gidx:
            gargs[i].requires_grad_(True)

        def f(*xs):
            a = list(gargs)
            for i, x in zip(gidx, xs):
                a[i] = x
            return op_call(key, tuple(a), gattrs)

        assert torch.autograd.gradcheck(f, tuple(gargs[i] for i in gidx), **gkw)
        out = f(*(gargs[i] for i in gidx))
        gout = torch.randn(out.shape, generator=torch.Generator().manual_seed(11), dtype=torch.float64).to(out.dtype)
        got = torch.autograd.grad(out, [gargs[i] for i in gidx], gout)
        ref_in = [a.detach().double().requires_grad_() if i in gidx else a for i, a in enumerate(gargs)]
        ref_out = case.reference(ref_in, gattrs)[0]
        want = torch.autograd.grad(ref_out.double(), [ref_in[i] for i in gidx], gout.double())
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w.to(g.dtype), *(case.grad_tol or (None, None)), what=f"{key} gradient {k}")
    else:
        assert not op.backward or key == "opforge::DeformableAggregationGrad"

    # 4. torch.compile(fullgraph=True, dynamic=True) at two shapes.
    a1, attrs1 = case.make(torch.float32 if torch.float32 in case.dtypes else case.dtypes[0], "cpu")
    a2, attrs2 = case.second_shape(torch.float32 if torch.float32 in case.dtypes else case.dtypes[0], "cpu", 5)
    if attrs1 == attrs2:
        compile_and_compare(lambda *xs: op_call(key, xs, attrs1), [a1, a2], what=f"{key} compiled")
    else:
        compile_and_compare(lambda *xs: op_call(key, xs, attrs1), [a1, case.make(a1[0].dtype, "cpu", 9)[0]],
                            what=f"{key} compiled")

    # 5. + 6. ONNX export with both exporters, the engine on each file, the engine bindings.
    dt = torch.float32 if torch.float32 in case.dtypes else case.dtypes[0]
    args, attrs = case.make(dt, "cpu")
    consts = {i: args[i] for i in case.constants}
    feeds = {f"in{i}": a for i, a in enumerate(args) if i not in consts}
    module = OneOp(key, attrs, consts)
    want = as_tuple(module(*clone_args(tuple(feeds.values()))))
    for dynamo in (True, False):
        path = tmp_path / f"{top.name}_{'dynamo' if dynamo else 'ts'}.onnx"
        out_names = [f"out{k}" for k in range(len(want))]
        opforge.onnx.export(module, clone_args(tuple(feeds.values())), path, dynamo=dynamo,
                            input_names=list(feeds), output_names=out_names)
        node, typed = check_plugin_node(path, key, attrs)
        engine = opforge.Engine.build(path, device="cpu")
        assert [ly["op"] for ly in engine.layers()].count(f"{key} v{op.version}") == 1, engine.layers()
        got = engine_run_compare(engine, {k: v.clone() for k, v in feeds.items()}, want,
                                 what=f"{key} engine ({'dynamo' if dynamo else 'TorchScript'} export)")
        # The bindings: a plan saved and loaded (file and bytes) gives the same outputs.
        plan = tmp_path / f"{top.name}_{dynamo}.plan"
        engine.save(plan)
        for loaded in (opforge.Engine.load(plan), opforge.Engine.load(plan.read_bytes())):
            again = loaded.run({k: v.numpy() for k, v in feeds.items()})
            for n in got:
                np.testing.assert_array_equal(again[n], got[n])


@pytest.mark.parametrize("key", sorted(k for k, c in OP_CASES.items() if c.grad))
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_backward_through_torch_compile(key, backend):
    """Training through torch.compile(fullgraph=True, dynamic=True): AOTAutograd traces the backward
    op's fake kernel into the joint graph; the gradients equal eager ones."""
    case = OP_CASES[key]
    gdt, gidx, _ = case.grad
    args, attrs = case.grad_make(gdt, "cpu")
    args = [a.detach() for a in args]

    def f(*xs):
        a = list(args)
        for i, x in zip(gidx, xs):
            a[i] = x
        return op_call(key, tuple(a), attrs).square().sum()

    ins = [args[i].clone().requires_grad_() for i in gidx]
    want = torch.autograd.grad(f(*ins), ins)
    torch._dynamo.reset()
    cf = torch.compile(f, fullgraph=True, dynamic=True, backend=backend)
    ins2 = [args[i].clone().requires_grad_() for i in gidx]
    cf(*ins2).backward()
    for k, (w, x) in enumerate(zip(want, ins2)):
        assert_close(x.grad, w, what=f"{key} compiled ({backend}) gradient {k}")
