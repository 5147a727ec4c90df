"""The seed models through the front half of the workflow, one test each: the PyTorch model with the
opforge op against the same model computed with PyTorch's own ops, opcheck of the op at the model's
shapes, gradients (finite differences / the reference model's autograd), torch.compile(fullgraph=True,
dynamic=True) with the inductor backend, ONNX export with both exporters, each file through the
opforge engine (Python bindings) against PyTorch, and the engine bindings (save, load, run on NumPy
arrays and tensors).

Models (opforge_cases.py): MyNet = GELU(GELU(x)) from the GELU seed (its plan must be one fused
FusedGelu layer); CircPadNet (circular padding between two convolutions); NonZeroNet (data-dependent
output); InPlaceAddNet (the aliasing sample inside a network); Sparse4DAggregation (deformable
aggregation at Sparse4Dv3's structure, reduced sizes on the CPU; full sizes in test_torch_gpu.py).
"""
import numpy as np
import onnx
import pytest
import torch

import opforge
from opforge_cases import (build_cpu, SPARSE4D_SMALL, CircPadNet, InPlaceAddNet, MyNet, MyNetFused, NonZeroNet,
                           Sparse4DAggregation, as_tuple, assert_close, check_plugin_node, compile_and_compare,
                           engine_run_compare, opcheck, out_dims)

EXPORTERS = ((True, "dynamo"), (False, "torchscript"))


def roundtrip(engine, tmp_path, name, feeds):
    """Saves the plan, loads it from the file and from bytes, and checks the outputs are unchanged."""
    plan = tmp_path / f"{name}.plan"
    engine.save(plan)
    first = engine.run({k: v.numpy() for k, v in feeds.items()})
    for loaded in (opforge.Engine.load(plan), opforge.Engine.load(plan.read_bytes())):
        assert [ly["op"] for ly in loaded.layers()] == [ly["op"] for ly in engine.layers()]
        again = loaded.run({k: v.numpy() for k, v in feeds.items()})
        for n in first:
            np.testing.assert_array_equal(again[n], first[n])


def test_mynet_gelu_seed(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(4, 3, 16, 16) * 3
    # The op (FusedGelu with chain [1]) against nn.GELU twice, float32 and float64.
    for dt in (torch.float32, torch.float64):
        assert_close(MyNetFused()(x.to(dt)), MyNet()(x.to(dt)).to(dt), what=f"MyNetFused {dt}")
    opcheck("opforge::FusedGelu", (x.clone().requires_grad_(),), {"chain": [1]})
    # Gradients: central differences in float64, and nn.GELU's autograd.
    xd = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(MyNetFused(), (xd,))
    g_op, = torch.autograd.grad(MyNetFused()(xd).sum(), xd)
    g_ref, = torch.autograd.grad(MyNet()(xd).sum(), xd)
    assert_close(g_op, g_ref, what="MyNet gradient")
    compile_and_compare(MyNetFused(), [(x,), (torch.randn(2, 3, 5, 9),)], backend="inductor", what="MyNetFused compiled")

    # Both exporters, nn.GELU (the erf-decomposed graph or ai.onnx Gelu): the engine fuses the whole
    # GELU(GELU(x)) into one fused GELU layer.
    for dynamo, tag in EXPORTERS:
        for model, name in ((MyNet(), "mynet"), (MyNetFused(), "mynet_fused")):
            path = tmp_path / f"{name}_{tag}.onnx"
            opforge.onnx.export(model, (x,), path, dynamo=dynamo, input_names=["x"], output_names=["y"],
                                dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
            kinds = [n.op_type for n in onnx.load(str(path)).graph.node]
            if model.__class__ is MyNet:
                assert "FusedGelu" not in kinds and ("Erf" in kinds or "Gelu" in kinds), kinds
            else:
                check_plugin_node(path, "opforge::FusedGelu", {"chain": [1]})
            engine = build_cpu(path, profiles={"x": ((1, 3, 16, 16), (4, 3, 16, 16), (8, 3, 16, 16))})
            layers = engine.layers()
            # The plain graph: the engine's own fused GELU (gelu_fusion, no op library needed); the
            # exported plugin node: the plugin op itself.
            want = "opforge::FusedGeluChain" if model.__class__ is MyNet else "opforge::FusedGelu"
            assert [ly["op"] for ly in layers] == [f"{want} v1"], \
                f"{name} ({tag}): the plan is not one fused GELU layer: {[(ly['name'], ly['op']) for ly in layers]}"
            assert want in engine.inspect()
            for b in (1, 5, 8):
                xb = torch.randn(b, 3, 16, 16) * 3
                engine_run_compare(engine, {"x": xb}, (MyNet()(xb),), what=f"{name} ({tag}) batch {b}")
            roundtrip(engine, tmp_path, f"{name}_{tag}", {"x": x})


def test_circ_pad_between_convolutions(tmp_path):
    net, ref = CircPadNet(), CircPadNet(reference=True)
    ref.load_state_dict(net.state_dict())
    x = torch.randn(2, 3, 12, 10)
    assert_close(net(x), ref(x), what="CircPadNet vs F.pad(circular)")
    mid = torch.relu(net.conv1(x)).detach()
    opcheck("example::circ_pad_plugin", (mid.clone().requires_grad_(),), {"pads": [2, 2, 1, 1]})
    # Gradients of the input and of both convolutions' weights against the reference network
    # (float32: the forward op has no FP64 combination; the backward sums at most 3 terms per
    # element, so the only difference is the convolutions' own rounding: 1e-5 relative).
    xg = x.clone().requires_grad_()
    xr = x.clone().requires_grad_()
    g1 = torch.autograd.grad(net(xg).square().sum(), [xg, net.conv1.weight, net.conv2.weight])
    g2 = torch.autograd.grad(ref(xr).square().sum(), [xr, ref.conv1.weight, ref.conv2.weight])
    for k, (a, b) in enumerate(zip(g1, g2)):
        assert_close(a, b, 1e-4, 1e-4, f"CircPadNet gradient {k}")
    # The op alone by central differences (float32, eps 1e-2: a copy is linear).
    xs = torch.randn(1, 2, 3, 4, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: opforge.torch.circ_pad_plugin(t, [2, 2, 1, 1]), (xs,), eps=1e-2,
                                    atol=1e-3, rtol=1e-3)
    with torch.no_grad():
        compile_and_compare(net, [(x,), (torch.randn(3, 3, 9, 14),)], backend="inductor", atol=1e-5, rtol=1e-4,
                            what="CircPadNet compiled")
    for dynamo, tag in EXPORTERS:
        path = tmp_path / f"circ_pad_net_{tag}.onnx"
        opforge.onnx.export(net, (x,), path, dynamo=dynamo, input_names=["x"], output_names=["y"],
                            dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        node, typed = check_plugin_node(path, "example::circ_pad_plugin", {"pads": [2, 2, 1, 1]})
        # value_info from the shape rule: [batch, 8, 10+2, 8+4] with the dynamic batch kept.
        dims = out_dims(typed[node.output[0]])
        assert dims[1:] == [8, 12, 12] and isinstance(dims[0], str), dims
        engine = build_cpu(path, profiles={"x": ((1, 3, 12, 10), (2, 3, 12, 10), (4, 3, 12, 10))})
        ops = [ly["op"] for ly in engine.layers()]
        assert ops.count("example::circ_pad_plugin v1") == 1, ops
        for b in (1, 4):
            xb = torch.randn(b, 3, 12, 10)
            with torch.no_grad():
                want = net(xb)
            # Convolutions: OpenBLAS im2col in the engine vs PyTorch's: sums of 72 products.
            engine_run_compare(engine, {"x": xb}, (want,), 1e-5, 1e-4, what=f"CircPadNet ({tag}) batch {b}")
        roundtrip(engine, tmp_path, f"circ_pad_{tag}", {"x": x})


def test_non_zero_network(tmp_path):
    net, ref = NonZeroNet(), NonZeroNet(reference=True)
    x = torch.rand(6, 9) * 1.2
    for g, w in zip(net(x), ref(x)):
        assert_close(g, w, what="NonZeroNet")
    opcheck("example::non_zero_plugin", (torch.relu(x - 0.5),), {})
    assert opforge.find("example::non_zero_plugin").backward == ""  # indices: nothing to differentiate
    compile_and_compare(net, [(x,), (torch.rand(4, 11) * 1.2,)], backend="inductor", what="NonZeroNet compiled")
    for dynamo, tag in EXPORTERS:
        path = tmp_path / f"non_zero_net_{tag}.onnx"
        opforge.onnx.export(net, (x,), path, dynamo=dynamo, input_names=["x"], output_names=["idx", "count", "pos"])
        node, typed = check_plugin_node(path, "example::non_zero_plugin", {})
        dims = out_dims(typed[node.output[0]])
        assert dims[1] == 2 and isinstance(dims[0], str), dims  # [K, 2], K data-dependent
        engine = build_cpu(path)
        for xx in (x, torch.rand(6, 9) * 1.2, torch.zeros(6, 9)):
            engine_run_compare(engine, {"x": xx}, ref(xx), what=f"NonZeroNet ({tag})")
        roundtrip(engine, tmp_path, f"non_zero_{tag}", {"x": x})


def test_inplace_add_network(tmp_path):
    net, ref = InPlaceAddNet(), InPlaceAddNet(reference=True)
    ref.load_state_dict(net.state_dict())
    x = torch.randn(2, 4, 6, 6)
    with torch.no_grad():
        assert_close(net(x), ref(x), what="InPlaceAddNet")
        # The op writes its input: same object returned, values changed, version counter bumped.
        y = torch.randn(3, 5)
        before, version = y.clone(), y._version
        assert opforge.torch.elemwise_add_plugin_(y, 2) is y
        assert_close(y, before + 2)
        assert y._version > version
    opcheck("sample::elemwise_add_plugin_", (torch.randn(3, 5),), {"delta": 2})
    # No backward: writing into a tensor that requires grad is refused with the reason.
    with pytest.raises(opforge.UnsupportedError, match="elemwise_add_plugin_ writes its input in place"):
        net(x)
    with torch.no_grad():
        compile_and_compare(net, [(x,), (torch.randn(1, 4, 9, 5),)], backend="inductor", what="InPlaceAddNet compiled")
    for dynamo, tag in EXPORTERS:
        path = tmp_path / f"inplace_net_{tag}.onnx"
        opforge.onnx.export(net, (x,), path, dynamo=dynamo, input_names=["x"], output_names=["y"],
                            dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        check_plugin_node(path, "sample::elemwise_add_plugin_", {"delta": 2})
        engine = build_cpu(path, profiles={"x": ((1, 4, 6, 6), (2, 4, 6, 6), (3, 4, 6, 6))})
        assert [ly["op"] for ly in engine.layers()].count("sample::elemwise_add_plugin_ v1") == 1
        for b in (1, 3):
            xb = torch.randn(b, 4, 6, 6)
            with torch.no_grad():
                want = ref(xb)
            engine_run_compare(engine, {"x": xb}, (want,), 1e-5, 1e-4, what=f"InPlaceAddNet ({tag}) batch {b}")
        roundtrip(engine, tmp_path, f"inplace_{tag}", {"x": x})


def test_sparse4d_deformable_aggregation(tmp_path):
    size = SPARSE4D_SMALL
    net = Sparse4DAggregation(**size)
    ref = Sparse4DAggregation(**size, reference=True)
    ref.load_state_dict(net.state_dict())
    gen = torch.Generator().manual_seed(2)
    _, _, F_ = net.spatial_shape, net.scale_start_index, sum(h * w for h, w in size["levels"]) * size["ncam"]
    B, A = size["B"], size["A"]
    feat = torch.randn(B, F_, size["C"], generator=gen)
    inst = torch.randn(B, A, 32, generator=gen)
    kp = torch.rand(B, A, size["P"], size["ncam"], 2, generator=gen) * 1.2 - 0.1  # some points outside (0, 1)
    with torch.no_grad():
        assert_close(net(feat, inst, kp), ref(feat, inst, kp), what="Sparse4DAggregation vs grid_sample")
    # The op at the model's shapes.
    w = net.weights_fc(inst).reshape(B, A, -1, size["G"]).softmax(-2).reshape(
        B, A, size["P"], size["ncam"], len(size["levels"]), size["G"]).detach()
    opcheck("opforge::DeformableAggregation",
            (feat.clone().requires_grad_(), net.spatial_shape, net.scale_start_index, kp.clone().requires_grad_(),
             w.clone().requires_grad_()), {})
    # Gradients of every input and of the weight projection in float64, against grid_sample's
    # autograd (the op's backward op: opforge::DeformableAggregationGrad). Points are kept off the
    # mask border and the cell edges are measure-zero for random locations.
    netd, refd = net.double(), ref.double()
    ins = [feat.double().requires_grad_(), inst.double().requires_grad_(),
           (torch.rand(B, A, size["P"], size["ncam"], 2, generator=gen, dtype=torch.float64) * 0.9 + 0.05)
           .requires_grad_()]
    g_op = torch.autograd.grad(netd(*ins).square().sum(), ins + [netd.weights_fc.weight])
    g_ref = torch.autograd.grad(refd(*ins).square().sum(), ins + [refd.weights_fc.weight])
    for k, (a, b) in enumerate(zip(g_op, g_ref)):
        assert_close(a, b, 1e-9, 1e-9, f"Sparse4D gradient {k}")
    net, ref = net.float(), ref.float()
    with torch.no_grad():
        kp2 = torch.rand(B, 17, size["P"], size["ncam"], 2, generator=gen)
        compile_and_compare(net, [(feat, inst, kp), (feat, torch.randn(B, 17, 32, generator=gen), kp2)],
                            backend="inductor", atol=1e-5, rtol=1e-4, what="Sparse4DAggregation compiled")
    for dynamo, tag in EXPORTERS:
        path = tmp_path / f"sparse4d_{tag}.onnx"
        opforge.onnx.export(net, (feat, inst, kp), path, dynamo=dynamo,
                            input_names=["feature_maps", "instance_feature", "key_points"], output_names=["y"])
        node, typed = check_plugin_node(path, "opforge::DeformableAggregation", {})
        assert out_dims(typed[node.output[0]]) == [B, A, size["C"]]
        # The tables are initializers (constants): the engine checks them at build time.
        inits = {i.name for i in onnx.load(str(path)).graph.initializer}
        assert node.input[1] in inits and node.input[2] in inits, (node.input, inits)
        engine = build_cpu(path)
        assert [ly["op"] for ly in engine.layers()].count("opforge::DeformableAggregation v1") == 1
        with torch.no_grad():
            want = net(feat, inst, kp)
        engine_run_compare(engine, {"feature_maps": feat, "instance_feature": inst, "key_points": kp}, (want,),
                           1e-5, 1e-4, what=f"Sparse4D ({tag})")
        roundtrip(engine, tmp_path, f"sparse4d_{tag}", {"feature_maps": feat, "instance_feature": inst, "key_points": kp})
