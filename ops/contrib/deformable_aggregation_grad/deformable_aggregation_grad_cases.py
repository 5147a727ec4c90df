"""The Python test case of opforge::DeformableAggregationGrad (tests/python/op_case.py)."""
import torch

from op_case import OpCase, case_module, randn

_fwd = case_module("deformable_aggregation")
da_f64, da_inputs, SPARSE4D_SMALL, DA_SMALL2 = _fwd.da_f64, _fwd.da_inputs, _fwd.SPARSE4D_SMALL, _fwd.DA_SMALL2


def da_grad_ref(feat, spatial, start, loc, weights, grad_out):
    f = feat.double().requires_grad_()
    lo = loc.double().requires_grad_()
    w = weights.double().requires_grad_()
    gf, gl, gw = torch.autograd.grad(da_f64(f, spatial, start, lo, w), (f, lo, w), grad_out.double())
    return gf.to(feat.dtype), gl.to(loc.dtype), gw.to(weights.dtype)


def da_grad_make(size):
    def make(dtype, device, seed=0):
        ins = da_inputs(**size, dtype=dtype, device=device, seed=seed)
        g = randn((size["B"], size["A"], size["C"]), dtype, device, seed + 7)
        return ins + (g,), {}
    return make


CASE = OpCase(
    "opforge::DeformableAggregationGrad", da_grad_make(DA_SMALL2), lambda a, k: da_grad_ref(*a),
    [torch.float32, torch.float64], constants=(1, 2), second_shape=da_grad_make(SPARSE4D_SMALL),
    # Location gradients are sums of W*g*wt*dBIL/dx over levels and channels (W up to 12): in
    # float32 a few 1e-6 relative to the largest term.
    tol={torch.float32: (1e-4, 1e-4)},
)
