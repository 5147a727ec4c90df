"""The registration is generic: opforge's built-in ONNX ops (not registered by default) registered
with opforge.torch.register_op exercise what the contrib ops do not have — optional inputs
(Tensor?), a variadic input (Tensor[]), a variadic output (Tensor[]), value inputs (read by the
shape rule), attributes named like inputs — against PyTorch's own ops, with opcheck."""
import torch

import opforge
from opforge_cases import assert_close, opcheck


def test_optional_inputs_and_clashing_names():
    top = opforge.torch.register_op("ai.onnx::Clip")
    assert top.schema == ("Clip(Tensor input, Tensor? min=None, Tensor? max=None, *, float? min_attr=None, "
                          "float? max_attr=None) -> Tensor")
    x = torch.randn(4, 5)
    assert_close(torch.ops.ai_onnx.Clip(x, torch.tensor(-0.3), torch.tensor(0.4)), x.clamp(-0.3, 0.4))
    assert_close(torch.ops.ai_onnx.Clip(x, None, torch.tensor(0.4)), x.clamp(max=0.4))
    assert_close(torch.ops.ai_onnx.Clip(x), x)
    opcheck("ai.onnx::Clip", (x, None, torch.tensor(0.4)), {})


def test_variadic_input():
    top = opforge.torch.register_op("ai.onnx::Concat")
    assert top.schema == "Concat(Tensor[] inputs, *, int axis) -> Tensor"
    xs = [torch.randn(2, k) for k in (1, 3, 2)]
    assert_close(torch.ops.ai_onnx.Concat(xs, axis=1), torch.cat(xs, 1))
    opcheck("ai.onnx::Concat", (xs,), {"axis": -1})
    torch._dynamo.reset()
    f = torch.compile(lambda a, b: torch.ops.ai_onnx.Concat([a, b], axis=0), fullgraph=True, dynamic=True,
                      backend="aot_eager")
    for n in (2, 5):
        a, b = torch.randn(n, 3), torch.randn(n + 1, 3)
        assert_close(f(a, b), torch.cat([a, b]))


def test_variadic_output_and_value_input():
    opforge.torch.register_op("ai.onnx::Split")
    x = torch.randn(6, 4)
    # `split` is a value input: its values set the output shapes (passed to the shape rule).
    parts = torch.ops.ai_onnx.Split(x, torch.tensor([1, 2, 3]), axis=0)
    for got, want in zip(parts, torch.split(x, [1, 2, 3])):
        assert_close(got, want)
    parts = torch.ops.ai_onnx.Split(x, axis=1, num_outputs=2)
    assert [tuple(p.shape) for p in parts] == [(6, 2), (6, 2)]
    opcheck("ai.onnx::Split", (x,), {"axis": 1, "num_outputs": 2})


def test_register_op_errors():
    import pytest
    with pytest.raises(opforge.NotFoundError, match="op ai.onnx::NoSuchOp v1 is not registered"):
        opforge.torch.register_op("ai.onnx::NoSuchOp")
    assert opforge.torch.register_op("ai.onnx::Concat") is opforge.torch.register_op("ai.onnx::Concat")
