"""ONNX export details: attribute types, value_info from the shape rules with dynamic dimensions,
the translation table and TorchScript symbolics used directly with torch.onnx.export, TensorRT's
plugin fields, in-place ops on views, the ONNX Gelu form of the seed model."""
import onnx
import pytest
import torch
from onnx import AttributeProto

import opforge
from opforge_cases import build_cpu, ROOT, MyNet, OneOp, assert_close, circ_pad_ref, engine_run_compare, out_dims

EXPORTERS = ((True, "dynamo"), (False, "torchscript"))


class Gelus(torch.nn.Module):
    def forward(self, x):
        return opforge.torch.FusedGelu(x)  # every attribute at its default: chain = [] (INTS), chain_scalars = [] (FLOATS)


@pytest.mark.parametrize("dynamo,tag", EXPORTERS)
def test_attribute_types_follow_the_declarations(dynamo, tag, tmp_path):
    path = tmp_path / f"gelu_{tag}.onnx"
    opforge.onnx.export(Gelus(), (torch.randn(2, 3),), path, dynamo=dynamo)
    (node,) = [n for n in onnx.load(str(path)).graph.node if n.domain == "opforge"]
    assert node.op_type == "FusedGelu"
    types = {a.name: a.type for a in node.attribute}
    assert types == {"approximate": AttributeProto.STRING, "chain": AttributeProto.INTS,
                     "chain_scalars": AttributeProto.FLOATS, "plugin_namespace": AttributeProto.STRING,
                     "plugin_version": AttributeProto.STRING}
    e = build_cpu(path, strict_attributes=True)  # every attribute is one the op declares
    x = torch.randn(2, 3)
    engine_run_compare(e, {n.name: x for n in onnx.load(str(path)).graph.input}, (torch.nn.functional.gelu(x),))


@pytest.mark.parametrize("dynamo,tag", EXPORTERS)
def test_value_info_from_the_shape_rule_with_dynamic_dims(dynamo, tag, tmp_path):
    class Pad(torch.nn.Module):
        def forward(self, x):
            return opforge.torch.circ_pad_plugin(x, [1, 2, 3, 4]) * 2

    path = tmp_path / f"pad_{tag}.onnx"
    x = torch.randn(2, 3, 5, 6)
    opforge.onnx.export(Pad(), (x,), path, dynamo=dynamo, input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "batch", 3: "width"}, "y": {0: "batch"}})
    m = onnx.load(str(path))
    (node,) = [n for n in m.graph.node if n.domain == "example"]
    vi = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}[node.output[0]]
    assert vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    # [batch, 3, 5 + 3 + 4, width + 1 + 2]: constants from the rule, the symbolic sum over the input's name.
    dims = out_dims(vi)
    assert dims[:3] == ["batch", 3, 12] and dims[3].replace(" ", "") == "width+3", dims
    assert out_dims(m.graph.input[0]) == ["batch", 3, 5, "width"]
    e = build_cpu(path, profiles={"x": ((1, 3, 5, 2), (2, 3, 5, 6), (4, 3, 5, 9))})
    for shape in ((1, 3, 5, 2), (4, 3, 5, 9)):
        xx = torch.randn(shape)
        engine_run_compare(e, {"x": xx}, (circ_pad_ref(xx, [1, 2, 3, 4]) * 2,), what=f"{tag} {shape}")


def test_translation_table_with_torch_onnx_export(tmp_path):
    """The table works in a plain torch.onnx.export(dynamo=True) call (no opforge helper)."""
    path = tmp_path / "direct_dynamo.onnx"
    x = torch.randn(3, 4)
    prog = torch.onnx.export(Gelus(), (x,), dynamo=True, custom_translation_table=opforge.onnx.translation_table())
    prog.save(str(path))
    nodes = [n for n in onnx.load(str(path)).graph.node]
    assert [(n.domain, n.op_type) for n in nodes] == [("opforge", "FusedGelu")]
    e = build_cpu(path)
    engine_run_compare(e, {e.inputs[0]["name"]: x}, (torch.nn.functional.gelu(x),))


def test_torchscript_symbolics_with_torch_onnx_export(tmp_path):
    """register_torchscript_symbolics() makes a plain torch.onnx.export(dynamo=False) call work."""
    opforge.onnx.register_torchscript_symbolics()
    path = tmp_path / "direct_ts.onnx"
    x = torch.randn(2, 3, 4)
    torch.onnx.export(OneOp("example::circ_pad_plugin", {"pads": [2, 2]}), (x,), str(path), dynamo=False,
                      input_names=["x"], output_names=["y"])
    m = onnx.load(str(path))
    (node,) = [n for n in m.graph.node if n.domain == "example"]
    assert node.op_type == "circ_pad_plugin"
    assert {a.name for a in node.attribute} == {"pads", "plugin_namespace", "plugin_version"}
    assert out_dims(m.graph.output[0]) == [2, 3, 8]  # the symbolic set the type from the shape rule
    e = build_cpu(path)
    engine_run_compare(e, {"x": x}, (circ_pad_ref(x, [2, 2]),))


def test_in_place_op_on_a_view_is_refused(tmp_path):
    class ViewAdd(torch.nn.Module):
        def forward(self, x):
            y = x * 1
            opforge.torch.elemwise_add_plugin_(y[0], 1)
            return y

    with pytest.raises(opforge.UnsupportedError, match="writes in place into a view"):
        opforge.onnx.export(ViewAdd(), (torch.randn(2, 3),), tmp_path / "view.onnx", dynamo=True)


def test_in_place_op_later_readers_see_the_new_value(tmp_path):
    """After the rewrite to the out-of-place twin, every later use of the mutated tensor reads the op's
    result (the exported graph computes what eager PyTorch computes)."""
    class Later(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            z = y + 1  # before the in-place add: sees y
            opforge.torch.elemwise_add_plugin_(y, 5)
            return z, y * 3  # after: sees y + 5

    x = torch.randn(2, 3)
    with torch.no_grad():
        want = Later()(x)
    for dynamo, tag in EXPORTERS:
        path = tmp_path / f"later_{tag}.onnx"
        opforge.onnx.export(Later(), (x,), path, dynamo=dynamo, input_names=["x"], output_names=["z", "w"])
        e = build_cpu(path)
        engine_run_compare(e, {"x": x}, want, what=f"in-place add ({tag})")


def test_exported_schemas_do_not_stay_registered(tmp_path):
    """opforge.onnx.export registers ONNX schemas only for the dynamo export: afterwards the plugin
    guide's files, whose `pads` is a TENSOR attribute, still pass onnx.checker."""
    opforge.onnx.unregister_onnx_schemas(list(opforge.ops()))  # what translation_table() left registered
    opforge.onnx.export(OneOp("example::circ_pad_plugin", {"pads": [1, 1]}), (torch.randn(2, 3),),
                        tmp_path / "p.onnx", dynamo=True)
    assert not onnx.defs.has("circ_pad_plugin", "example")
    onnx.checker.check_model(onnx.load(str(ROOT / "examples" / "circ_pad" / "circ_pad.onnx")))
    # The shipped example (TENSOR `pads`) builds too.
    e = build_cpu(ROOT / "examples" / "circ_pad" / "circ_pad.onnx",
                             profiles={"x": ((1, 3, 32, 32), (2, 3, 32, 32), (2, 3, 32, 32))})
    x = torch.randn(2, 3, 32, 32)
    engine_run_compare(e, {"x": x}, (circ_pad_ref(x, [1, 1, 2, 2]),))


def test_gelu_seed_with_onnx_gelu_op(tmp_path):
    """Opset 20 has ai.onnx Gelu: the dynamo exporter writes it, and the engine still fuses
    GELU(GELU(x)) into one layer: the engine's own fused GELU (opforge::FusedGeluChain)."""
    path = tmp_path / "mynet_opset20.onnx"
    x = torch.randn(4, 8)
    opforge.onnx.export(MyNet(), (x,), path, dynamo=True, opset_version=20, input_names=["x"], output_names=["y"])
    kinds = [n.op_type for n in onnx.load(str(path)).graph.node]
    assert kinds == ["Gelu", "Gelu"], kinds
    e = build_cpu(path)
    assert [ly["op"] for ly in e.layers()] == ["opforge::FusedGeluChain v1"]
    assert_close(torch.from_numpy(e.run({"x": x.numpy()})["y"]), MyNet()(x), what="MyNet opset 20")
