// CUDA tactics of opforge::FusedConv (ops/onnx/common/conv_cuda.cu):
//   1-5 cuda.dnn.*   cuDNN forward algorithms; with the precomputed implicit GEMM, bias, residual
//                    and ReLU run inside cudnnConvolutionBiasActivationForward, otherwise one
//                    epilogue kernel follows the convolution;
//   6   cuda.direct  one thread per output element, everything fused.
//   7-12 cuda.dnn.graphN  cuDNN graph-API engines (the N-th configuration cuDNN's heuristics list
//                    that opforge accepts, conv_dnn_graph.cc), on LINEAR or HWC tensors — the only
//                    tactics of the HWC combination; bias, residual and activation run inside the
//                    engine when it offers the fused graph, else in one epilogue kernel after it.
#include "../../onnx/common/conv_plan.h"
#include "../../onnx/common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr int kGraph = 100;  // template argument of the graph-API engines: kGraph + rank

Result<ConvArgs> argsOf(const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(at, in[0], in[1], out[0]));
  OPFORGE_ASSIGN_OR_RETURN(a.act, parseAct(at.get<std::string>("activation")));
  if (present(in, 2)) a.bias = reinterpret_cast<const void*>(uintptr_t{256});
  if (present(in, 3)) a.z = reinterpret_cast<const void*>(uintptr_t{512});
  return a;
}

template <int kAlgo>
Status fusedConvCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
  OPFORGE_ASSIGN_OR_RETURN(a.act, parseAct(k.attr<std::string>("activation")));
  a.x = in[0].data;
  a.w = in[1].data;
  a.bias = hasIn(in, 2) ? in[2].data : nullptr;
  a.z = hasIn(in, 3) ? in[3].data : nullptr;
  a.y = out[0].data;
  a.hwc = in[0].desc.format == Format::kHWC && in[0].desc.rank() >= 3;
  if constexpr (kAlgo >= kGraph)
    return convGraph(a, kAlgo - kGraph, k.workspace(), k.workspaceSize(), k.stream());
  else if constexpr (kAlgo >= 0)
    return convDnn(a, kAlgo, k.workspace(), k.workspaceSize(), k.stream());
  else
    return convDirect(a, k.stream());
}

template <int kAlgo>
bool fusedConvApplies(const AttrMap& at, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
  auto a = argsOf(at, in, out);
  if (!a) return false;
  if constexpr (kAlgo >= kGraph) {
    if (!allLinear(in, out) && !(a->hwc = allHwc(in, out))) return false;
    return convGraphApplies(*a, kAlgo - kGraph, nullptr);
  }
  if (!allLinear(in, out)) return false;
  if constexpr (kAlgo >= 0)
    return convDnnApplies(*a, kAlgo, nullptr);
  else
    return convDirectApplies(*a);
}

template <int kAlgo>
size_t fusedConvWorkspace(const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  auto a = argsOf(at, in, out);
  size_t ws = 0;
  if (!a) return ws;
  if constexpr (kAlgo >= kGraph) {
    a->hwc = allHwc(in, out) && !allLinear(in, out);
    convGraphApplies(*a, kAlgo - kGraph, &ws);
  } else {
    convDnnApplies(*a, kAlgo, &ws);
  }
  return ws;
}

}  // namespace

OPFORGE_TACTICS("opforge::FusedConv", [](OpDef& d) {
  d.tactic(1, "cuda.dnn.implicit_gemm", fusedConvCuda<0>, fusedConvApplies<0>, fusedConvWorkspace<0>);
  d.tactic(2, "cuda.dnn.precomp_gemm_fused", fusedConvCuda<1>, fusedConvApplies<1>, fusedConvWorkspace<1>);
  d.tactic(3, "cuda.dnn.gemm", fusedConvCuda<2>, fusedConvApplies<2>, fusedConvWorkspace<2>);
  d.tactic(4, "cuda.dnn.winograd", fusedConvCuda<3>, fusedConvApplies<3>, fusedConvWorkspace<3>);
  d.tactic(5, "cuda.dnn.winograd_nonfused", fusedConvCuda<4>, fusedConvApplies<4>, fusedConvWorkspace<4>);
  d.tactic(6, "cuda.direct", fusedConvCuda<-1>, fusedConvApplies<-1>);
  static_assert(kDnnGraphTactics == 6);
  d.tactic(7, "cuda.dnn.graph0", fusedConvCuda<kGraph>, fusedConvApplies<kGraph>,
           fusedConvWorkspace<kGraph>);
  d.tactic(8, "cuda.dnn.graph1", fusedConvCuda<kGraph + 1>, fusedConvApplies<kGraph + 1>,
           fusedConvWorkspace<kGraph + 1>);
  d.tactic(9, "cuda.dnn.graph2", fusedConvCuda<kGraph + 2>, fusedConvApplies<kGraph + 2>,
           fusedConvWorkspace<kGraph + 2>);
  d.tactic(10, "cuda.dnn.graph3", fusedConvCuda<kGraph + 3>, fusedConvApplies<kGraph + 3>,
           fusedConvWorkspace<kGraph + 3>);
  d.tactic(11, "cuda.dnn.graph4", fusedConvCuda<kGraph + 4>, fusedConvApplies<kGraph + 4>,
           fusedConvWorkspace<kGraph + 4>);
  d.tactic(12, "cuda.dnn.graph5", fusedConvCuda<kGraph + 5>, fusedConvApplies<kGraph + 5>,
           fusedConvWorkspace<kGraph + 5>);
});

}  // namespace opforge::ops
