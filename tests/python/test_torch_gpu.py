"""GPU variants (marker `gpu`; skipped when torch.cuda.is_available() is False): every op on CUDA
tensors with every applicable CUDA tactic against the float64 reference, opcheck and torch.compile
on CUDA, gradients on CUDA, the deformable aggregation at Sparse4Dv3's full sizes, CUDA plans run
on CUDA tensors in place (DLPack, no staging copies), the seed models on a CUDA plan.

Tolerances on the GPU (CUDA tactics compute in fp32 registers; the CPU reference in float64):
  FusedGelu / FusedGeluGrad fp32  5e-5 abs and rel: erf from Numerical Recipes' erfcc (rel err < 1.2e-7)
                                   through up to four chained stages and their derivatives
  DeformableAggregation(+Grad) fp32 1e-4 abs and rel: fp32 accumulation over P*Ncam*L*4 products
                                   (312*4 at full size); feature gradients by fp32 atomics
  everything else: opforge_cases.TOL
"""
import numpy as np
import pytest
import torch

import opforge
from opforge_cases import (OP_CASES, SPARSE4D_FULL, CircPadNet, InPlaceAddNet, MyNet, NonZeroNet, Sparse4DAggregation,
                           as_tuple, assert_close, compile_and_compare, da_inputs, da_tables, op_call, opcheck)

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to PyTorch")]

GPU_TOL = {
    "opforge::FusedGelu": {torch.float32: (5e-5, 5e-5)},
    "opforge::FusedGeluGrad": {torch.float32: (5e-5, 5e-5)},
    "opforge::DeformableAggregation": {torch.float32: (1e-4, 1e-4)},
    "opforge::DeformableAggregationGrad": {torch.float32: (1e-4, 1e-4)},
}
CPU_ONLY_DTYPES = {"opforge::DeformableAggregation": [torch.float64],
                   "opforge::DeformableAggregationGrad": [torch.float64]}  # FP64 combination: tactic 0 only


def to(args, device):
    return tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in args)


def tol(key, dt, case):
    return GPU_TOL.get(key, {}).get(dt) or case.tol.get(dt, (None, None))


@pytest.mark.parametrize("key", sorted(OP_CASES))
def test_op_on_cuda_every_tactic(key):
    case = OP_CASES[key]
    op = opforge.find(key)
    cuda_tactics = [t[0] for t in op.tactics if t[2] == "cuda"]
    assert cuda_tactics, f"{key} has no CUDA tactic: was libopforge_ops.so built with CUDA?"
    for dt in case.dtypes:
        for make in (case.make, case.second_shape):
            args, attrs = make(dt, "cpu")
            if dt in CPU_ONLY_DTYPES.get(key, []):
                with pytest.raises(opforge.UnsupportedError, match="no CUDA tactic applies"):
                    op_call(key, to(args, "cuda"), attrs)
                continue
            want = case.reference(tuple(a.clone() for a in args), attrs)
            ran = []
            for tactic in [None] + cuda_tactics:  # None: the default choice (timed once per shape)
                ctx = opforge.torch.use_tactic(key, tactic) if tactic is not None else _null()
                try:
                    with ctx:
                        got = as_tuple(op_call(key, to(args, "cuda"), attrs))
                except opforge.UnsupportedError as e:
                    assert tactic is not None and "does not apply" in str(e), str(e)
                    continue
                ran.append(tactic)
                for k, (g, w) in enumerate(zip(got, want)):
                    assert g.device.type == "cuda"
                    assert_close(g, w, *tol(key, dt, case), what=f"{key} {dt} tactic {tactic} output {k}")
            assert len(ran) >= 2, f"{key} {dt}: no CUDA tactic ran ({ran})"


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@pytest.mark.parametrize("key", sorted(OP_CASES))
def test_opcheck_compile_and_gradients_on_cuda(key):
    case = OP_CASES[key]
    dt = torch.float32 if torch.float32 in case.dtypes else case.dtypes[0]
    args, attrs = case.make(dt, "cuda")
    args = tuple(a.clone() for a in args)
    if case.grad:
        for i in case.grad[1]:
            args[i].requires_grad_(True)
    opcheck(key, args, attrs)
    a1, _ = case.make(dt, "cuda")
    a2, _ = case.make(dt, "cuda", 9)
    compile_and_compare(lambda *xs: op_call(key, xs, attrs), [a1, a2], backend="inductor",
                        atol=tol(key, dt, case)[0], rtol=tol(key, dt, case)[1], what=f"{key} compiled on CUDA")
    if case.grad:
        gidx = case.grad[1]
        cpu_args, _ = case.grad_make(torch.float32, "cpu")
        outs = []
        for dev in ("cpu", "cuda"):
            a = [x.clone().to(dev) for x in cpu_args]
            for i in gidx:
                a[i].requires_grad_(True)
            y = op_call(key, tuple(a), attrs)
            g = torch.ones_like(y)
            outs.append(torch.autograd.grad(y, [a[i] for i in gidx], g))
        for k, (c, g) in enumerate(zip(*outs)):
            assert_close(g, c, *tol(key, torch.float32, case), what=f"{key} CUDA gradient {k}")


def test_inputs_on_cpu_and_cuda_are_refused():
    feat, spatial, start, loc, w = da_inputs(B=1, A=4, P=2, ncam=1, levels=((3, 4),), C=8, G=2)
    with pytest.raises(opforge.DeviceError, match="input 'spatial_shape' is on cpu but input 'mc_ms_feat' is on cuda"):
        opforge.torch.DeformableAggregation(feat.cuda(), spatial, start.cuda(), loc.cuda(), w.cuda())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_deformable_aggregation_sparse4d_full_size(dtype):
    """Sparse4Dv3 sizes (1 x 89760 x 256 features, 900 anchors, 13 points, 6 cameras, 4 levels,
    8 groups): every CUDA tactic against the CPU reference op (float64 accumulation)."""
    args = da_inputs(**SPARSE4D_FULL, dtype=dtype, valid=0.5)
    want = op_call("opforge::DeformableAggregation", args, {})  # CPU: tactic 0
    op = opforge.find("opforge::DeformableAggregation")
    for t in [t[0] for t in op.tactics if t[2] == "cuda"]:
        with opforge.torch.use_tactic("opforge::DeformableAggregation", t):
            got = op_call("opforge::DeformableAggregation", to(args, "cuda"), {})
        a, r = (1e-4, 1e-4) if dtype == torch.float32 else (None, None)
        assert_close(got, want, a, r, f"full-size DA {dtype} tactic {t}")
    if dtype == torch.float32:
        g = torch.randn(want.shape, generator=torch.Generator().manual_seed(1))
        want_g = op_call("opforge::DeformableAggregationGrad", args + (g,), {})
        got_g = op_call("opforge::DeformableAggregationGrad", to(args + (g,), "cuda"), {})
        for k, (a, b) in enumerate(zip(got_g, want_g)):
            # Location gradients are W (up to 176) times sums over 256 channels: fp32 errors scale
            # with the largest value, so the absolute bound does too.
            assert_close(a, b, 1e-4 * max(1.0, float(b.abs().max())), 1e-4, f"full-size DA gradient {k}")


def test_outputs_read_at_once_on_the_default_stream_are_complete(tmp_path, monkeypatch):
    """engine.run from PyTorch's default stream returns without synchronizing: reading the outputs
    at once on that stream must see the finished run (a plan on an unordered stream raced here)."""
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda().eval()
    xs = [torch.randn(2048, 2048, device="cuda") + i for i in range(6)]
    with torch.no_grad():
        wants = [net(x) for x in xs]
    path = tmp_path / "mlp.onnx"
    opforge.onnx.export(net, (xs[0],), path, dynamo=False, input_names=["x"], output_names=["y"])
    e = opforge.Engine.build(path, device="cuda")
    torch.cuda.synchronize()
    assert torch.cuda.current_stream().cuda_stream == 0
    for i, (x, want) in enumerate(zip(xs, wants)):
        got = e.run({"x": x})["y"]  # no synchronize before the comparison, on purpose
        err = (got - want).abs().max().item()
        assert err <= 1e-3 * want.abs().max().item() + 1e-4, f"run {i}: max |diff| {err}"


def test_sparse4d_module_full_size_on_a_cuda_plan(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)  # the engine's GEMMs use no TF32
    net = Sparse4DAggregation(**SPARSE4D_FULL).cuda().eval()
    _, _, F_ = da_tables(SPARSE4D_FULL["ncam"], SPARSE4D_FULL["levels"])
    gen = torch.Generator().manual_seed(3)
    feat = torch.randn(1, F_, 256, generator=gen).cuda()
    inst = torch.randn(1, 900, 32, generator=gen).cuda()
    kp = torch.rand(1, 900, 13, 6, 2, generator=gen).cuda()
    with torch.no_grad():
        want = net(feat, inst, kp)
    path = tmp_path / "sparse4d_full.onnx"
    opforge.onnx.export(net, (feat, inst, kp), path, dynamo=True,
                        input_names=["feature_maps", "instance_feature", "key_points"], output_names=["y"])
    e = opforge.Engine.build(path, device="cuda")
    assert e.backend == "cuda"
    layer = [ly for ly in e.layers() if ly["op"] == "opforge::DeformableAggregation v1"][0]
    assert layer["tactic"].split()[1].startswith("(cuda."), layer
    got = e.run({"feature_maps": feat, "instance_feature": inst, "key_points": kp})["y"]
    assert got.device.type == "cuda"
    tactics = "; ".join(f"{ly['name']}: {ly['tactic']}" for ly in e.layers())
    assert_close(got, want, 1e-4, 1e-3, f"Sparse4D full size, CUDA plan ({tactics})")  # two fp32 linear layers


def test_cuda_plan_runs_on_cuda_tensors_in_place(tmp_path):
    """CUDA tensors (and DLPack producers of them) are bound with setTensorAddress: no staging
    copies (a 256 MB input would take milliseconds over PCIe); results are CUDA tensors."""
    path = tmp_path / "mynet.onnx"
    x = torch.randn(4, 1024, 1024, 16)  # 256 MB
    opforge.onnx.export(MyNet(), (x[:2],), path, dynamo=True, input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    e = opforge.Engine.build(path, device="cuda", profiles={"x": ((1, 1024, 1024, 16), (4, 1024, 1024, 16),
                                                                  (4, 1024, 1024, 16))})
    (layer,) = e.layers()
    assert layer["op"] == "opforge::FusedGeluChain v1" and "(cuda." in layer["tactic"], layer
    xc = x.cuda()
    out = e.run({"x": xc})["y"]
    assert out.device == xc.device
    times = e.last_run_times()
    assert times["h2d_ms"] < 0.5 and times["d2h_ms"] < 0.5, times
    assert_close(out, MyNet()(xc), 5e-5, 5e-5, "MyNet on a CUDA plan")

    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    out2 = e.run({"x": DLPackOnly(xc)})["y"]
    assert out2.device.type == "cuda" and torch.equal(out2, out)
    assert e.last_run_times()["h2d_ms"] < 0.5
    # NumPy in, NumPy out through the host staging buffers.
    small = np.random.default_rng(0).standard_normal((1, 1024, 1024, 16)).astype(np.float32)
    got = e.run({"x": small})["y"]
    assert isinstance(got, np.ndarray)
    assert_close(torch.from_numpy(got), MyNet()(torch.from_numpy(small)), 5e-5, 5e-5, "MyNet CUDA plan, NumPy")


@pytest.mark.parametrize("model", ["circ_pad", "non_zero", "inplace"])
def test_seed_models_on_cuda_plans(model, tmp_path):
    if model == "circ_pad":
        net, x, names = CircPadNet().eval(), torch.randn(2, 3, 12, 10), ["y"]
    elif model == "non_zero":
        net, x, names = NonZeroNet(), torch.rand(6, 9) * 1.2, ["idx", "count", "pos"]
    else:
        net, x, names = InPlaceAddNet().eval(), torch.randn(2, 4, 6, 6), ["y"]
    with torch.no_grad():
        want = as_tuple(net(x.clone()))
    for dynamo in (True, False):
        path = tmp_path / f"{model}_{dynamo}.onnx"
        opforge.onnx.export(net, (x,), path, dynamo=dynamo, input_names=["x"], output_names=names)
        e = opforge.Engine.build(path, device="cuda")
        xc = x.cuda()
        x0 = xc.clone()
        got = e.run({"x": xc})
        assert torch.equal(xc, x0), "the engine modified its input"
        for n, w in zip(names, want):
            assert got[n].device.type == "cuda"
            a, r = (None, None) if not w.is_floating_point() else (1e-4, 1e-4)
            assert_close(got[n], w, a, r, f"{model} CUDA plan {n}")
        # The CUDA plan from the host too.
        host = e.run({"x": x.numpy()})
        for n, w in zip(names, want):
            assert_close(torch.from_numpy(host[n]), w, *((None, None) if not w.is_floating_point() else (1e-4, 1e-4)))
        # A CPU plan fed CUDA tensors returns CUDA tensors.
        c = opforge.Engine.build(path, device="cpu").run({"x": xc})
        for n, w in zip(names, want):
            assert c[n].device.type == "cuda"
