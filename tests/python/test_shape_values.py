"""Shapes computed from input dimensions in the ways public models export them, which opforge's
shape tracker must follow to build a plan with dynamic dimensions (each was a build error, found
by trying public architectures: transformers' XLNet, Funnel and SEW, timm's GCViT):

  arange      torch.arange(s, 0, -1.0) (a float Range whose start is a size) and arange(-s, s, 2)
              (a negated size as the start)
  pad_to      F.pad(x, (0, 0, 0, t - s)): pads computed from two lengths; TorchScript reverses
              them through a [-1, 2] Reshape, a Slice with step -1 and a Transpose
  min_len     x[:, :min(s, t // 2)]: Min of two size expressions
  repeat      q.repeat(win.shape[0] // B, 1, 1), where win = reshape(-1, ...) of x: (B * k) // B
  blocks      transformers' LongT5 (transient-global attention): F.pad(x, (0, 0, 0, (-s) % k))
              pads to a multiple of the block size (a Mod of a negated size), and
              F.one_hot(ids, s // k + 1) takes its depth from the length (twenty-fifth session)

Each module is exported by both exporters with dynamic dimensions, built once by opforge (CPU) for
a range of those dimensions, and run at two shapes of the range against PyTorch (FP32: atol 1e-5;
the arithmetic is exact or a single add). An export PyTorch itself fails is skipped with its message.
"""
import os

import numpy as np
import pytest

from conftest import opforge_bin, run, run_plan

torch = pytest.importorskip("torch")
F = torch.nn.functional


class Arange(torch.nn.Module):
    def forward(self, x):
        s = x.shape[1]
        return x + torch.arange(s, 0, -1.0).unsqueeze(-1) + torch.arange(-s, s, 2).float().unsqueeze(-1)


class PadTo(torch.nn.Module):
    def forward(self, x, y):
        return F.pad(x, (0, 0, 0, y.shape[1] - x.shape[1])) + y


class MinLen(torch.nn.Module):
    def forward(self, x, y):
        return x[:, : min(x.shape[1], y.shape[1] // 2)] * 2


class Repeat(torch.nn.Module):
    def forward(self, x):
        b, c, h, w = x.shape
        win = x.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 2, 4, 3, 5, 1).reshape(-1, 4, c)
        q = x.mean((2, 3)).reshape(b, 1, c)
        return win + q.repeat(win.shape[0] // q.shape[0], 1, 1)


# name: (module, {input: (shape at the first run, shape at the second run)}, {input: {axis: name}},
#        {input: (min shape, max shape)})
class Blocks(torch.nn.Module):
    def forward(self, x):
        s = x.shape[1]
        padded = F.pad(x, (0, 0, 0, (-s) % 5))
        ids = torch.arange(s) // 4
        hot = F.one_hot(ids, s // 4 + 1).to(x.dtype)  # [s, s // 4 + 1]
        return padded.sum(1, keepdim=True) + hot.sum(0).reshape(1, -1, 1)[:, :1] * padded.shape[1]


CASES = {
    "arange": (Arange(), {"x": ((2, 6, 4), (3, 11, 4))}, {"x": {0: "b", 1: "s"}},
               {"x": ((1, 2, 4), (4, 16, 4))}),
    "pad_to": (PadTo(), {"x": ((2, 5, 4), (1, 3, 4)), "y": ((2, 7, 4), (1, 9, 4))},
               {"x": {0: "b", 1: "s"}, "y": {0: "b", 1: "t"}},
               {"x": ((1, 2, 4), (4, 8, 4)), "y": ((1, 7, 4), (4, 12, 4))}),
    "min_len": (MinLen(), {"x": ((2, 6, 4), (2, 3, 4)), "y": ((2, 10, 4), (2, 12, 4))},
                {"x": {1: "s"}, "y": {1: "t"}},
                {"x": ((2, 2, 4), (2, 8, 4)), "y": ((2, 4, 4), (2, 16, 4))}),
    "blocks": (Blocks(), {"x": ((2, 6, 3), (3, 13, 3))}, {"x": {0: "b", 1: "s"}},
               {"x": ((1, 2, 3), (4, 20, 3))}),
    "repeat": (Repeat(), {"x": ((2, 8, 4, 4), (3, 8, 4, 4))}, {"x": {0: "b"}},
               {"x": ((1, 8, 4, 4), (4, 8, 4, 4))}),
}


def export(module, example, axes, path, dynamo):
    names = list(example)
    args = tuple(torch.randn(*s) for s in example.values())
    if dynamo:
        dims = {}
        shapes = {}
        for n in names:
            shapes[n] = {a: dims.setdefault(d, torch.export.Dim(d, min=1, max=64)) for a, d in axes[n].items()}
        torch.onnx.export(module, args, path, input_names=names, output_names=["out"],
                          dynamo=True, dynamic_shapes=shapes, external_data=False)
    else:
        torch.onnx.export(module, args, path, input_names=names, output_names=["out"], opset_version=17,
                          dynamo=False, dynamic_axes={n: dict(axes[n]) for n in names})


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_from_dimensions_build_and_match_pytorch(name, exporter, tmp_path):
    module, runs, axes, profile = CASES[name]
    onnx_path = str(tmp_path / "m.onnx")
    first = {n: s[0] for n, s in runs.items()}
    try:
        export(module.eval(), first, axes, onnx_path, exporter == "dynamo")
    except Exception as e:  # PyTorch's exporter, not opforge
        pytest.skip(f"{exporter} export failed: {type(e).__name__}: {str(e)[:200]}")
    import onnx
    for inp in onnx.load(onnx_path).graph.input:
        for a in axes.get(inp.name, {}):
            if inp.type.tensor_type.shape.dim[a].HasField("dim_value"):  # the exporter specialized it
                pytest.skip(f"{exporter} export made {inp.name} axis {a} static "
                            f"({inp.type.tensor_type.shape.dim[a].dim_value})")
    dims = lambda s: "x".join(str(d) for d in s)  # noqa: E731
    plan = str(tmp_path / "m.plan")
    opt = {n: s[0] for n, s in runs.items()}
    run([opforge_bin(), "exec", f"--onnx={onnx_path}", f"--saveEngine={plan}", "--skipInference", "--device=cpu",
         "--noTF32",
         "--minShapes=" + ",".join(f"{n}:{dims(p[0])}" for n, p in profile.items()),
         "--optShapes=" + ",".join(f"{n}:{dims(opt[n])}" for n in profile),
         "--maxShapes=" + ",".join(f"{n}:{dims(p[1])}" for n, p in profile.items())])
    torch.manual_seed(1)
    for k in range(2):
        feeds = {n: torch.randn(*s[k]) for n, s in runs.items()}
        with torch.no_grad():
            want = module(*feeds.values()).numpy()
        outs, _ = run_plan(plan, {n: t.numpy() for n, t in feeds.items()}, str(tmp_path / f"out{k}"))
        got = outs["out"]
        assert got.shape == want.shape, f"run {k}: shape {got.shape}, PyTorch {want.shape}"
        assert not np.isnan(got).any()
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5, err_msg=f"{name} ({exporter}), run {k}")


def test_a_split_of_a_data_dependent_size_is_checked_against_the_data(tmp_path):
    """Split(Transpose(NonZero(x)), split=[1, 1]) as Mixtral's "eager" experts export it (the rows
    the router found, split by the count traced at export): the sizes must add up to the rows the
    data gives, not to NonZero's upper bound (5 here) — built and run with 2 nonzeros; 3 nonzeros
    fail at run time with the Split named."""
    onnx = pytest.importorskip("onnx")
    h = onnx.helper
    T = onnx.TensorProto
    nodes = [h.make_node("NonZero", ["x"], ["nz"]),
             h.make_node("Transpose", ["nz"], ["rows"], perm=[1, 0]),
             h.make_node("Split", ["rows", "sizes"], ["a", "b"], axis=0, name="experts_split"),
             h.make_node("Concat", ["b", "a"], ["out"], axis=0)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [5])],
                     [h.make_tensor_value_info("out", T.INT64, None)],
                     [h.make_tensor("sizes", T.INT64, [2], [1, 1])])
    path = str(tmp_path / "split.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    plan = str(tmp_path / "split.plan")
    run([opforge_bin(), "exec", f"--onnx={path}", f"--saveEngine={plan}", "--skipInference", "--device=cpu"])
    outs, _ = run_plan(plan, {"x": np.array([0, 3, 0, 0, 7], np.float32)}, str(tmp_path / "ok"))
    np.testing.assert_array_equal(outs["out"], np.array([[4], [1]]))
    with pytest.raises(AssertionError, match="experts_split"):
        run_plan(plan, {"x": np.array([1, 3, 0, 0, 7], np.float32)}, str(tmp_path / "bad"))
