// CUDA tactics of ai.onnx::ConvTranspose (common/conv_cuda.cu):
//   1-4 cuda.dnn.*   cuDNN backward-data convolution (algorithms 0, 1, Winograd, non-fused
//                    Winograd) then the bias; symmetric padding, 1-3 axes;
//   5   cuda.direct  one thread per output element gathering its taps, any geometry.
#include "../common/conv_cuda.h"
#include "../common/cuda_common.cuh"
#include "convtranspose_geom.h"

namespace opforge::ops {
namespace {

Result<ConvArgs> argsOf(const AttrMap& at, const TensorDesc& x, const TensorDesc& w,
                        const TensorDesc& y, bool bias) {
  ConvArgs a;
  a.dtype = x.dtype;
  a.nd = x.rank() - 2;
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  OPFORGE_ASSIGN_OR_RETURN(TGeom g, transposeGeom(at, a.nd, kernel));
  const std::string auto_pad = at.get<std::string>("auto_pad");
  a.isz.assign(x.dims.begin() + 2, x.dims.end());
  a.osz.resize(a.nd);
  for (int i = 0; i < a.nd; ++i) a.osz[i] = transposeOut(g, auto_pad, i, a.isz[i]);
  if (a.osz != std::vector<int64_t>(y.dims.begin() + 2, y.dims.end()))
    return Status::invalid("ConvTranspose: the output size differs from the plan");
  a.n = x.dims[0];
  a.c = x.dims[1];
  a.m = y.dims[1];
  a.group = at.get<int64_t>("group");
  a.k = g.k;
  a.s = g.s;
  a.d = g.d;
  a.pb = g.pb;
  a.pe = g.pe;
  if (bias) a.bias = reinterpret_cast<const void*>(uintptr_t{256});
  return a;
}

template <int kAlgo>
Status convTCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a,
                           argsOf(k.attrs(), in[0].desc, in[1].desc, out[0].desc, false));
  a.x = in[0].data;
  a.w = in[1].data;
  a.bias = hasIn(in, 2) ? in[2].data : nullptr;
  a.y = out[0].data;
  if constexpr (kAlgo >= 0)
    return convTransposeDnn(a, kAlgo, k.workspace(), k.workspaceSize(), k.stream());
  else
    return convTransposeDirect(a, k.stream());
}

template <int kAlgo>
bool convTApplies(const AttrMap& at, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  auto a = argsOf(at, in[0], in[1], out[0], present(in, 2));
  if (!a) return false;
  if constexpr (kAlgo >= 0)
    return convTransposeDnnApplies(*a, kAlgo, nullptr);
  else
    return convDirectApplies(*a);
}

template <int kAlgo>
size_t convTWorkspace(const AttrMap& at, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
  auto a = argsOf(at, in[0], in[1], out[0], present(in, 2));
  size_t ws = 0;
  if (a) convTransposeDnnApplies(*a, kAlgo, &ws);
  return ws;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::ConvTranspose", [](OpDef& d) {
  d.tactic(1, "cuda.dnn.algo0", convTCuda<0>, convTApplies<0>, convTWorkspace<0>);
  d.tactic(2, "cuda.dnn.algo1", convTCuda<1>, convTApplies<1>, convTWorkspace<1>);
  d.tactic(3, "cuda.dnn.winograd", convTCuda<2>, convTApplies<2>, convTWorkspace<2>);
  d.tactic(4, "cuda.dnn.winograd_nonfused", convTCuda<3>, convTApplies<3>, convTWorkspace<3>);
  d.tactic(5, "cuda.direct", convTCuda<-1>, convTApplies<-1>);
});

}  // namespace opforge::ops
