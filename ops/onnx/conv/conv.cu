// CUDA tactics of ai.onnx::Conv (common/conv_cuda.cu):
//   1-5 cuda.dnn.*   cuDNN forward algorithms (implicit GEMM, precomputed implicit GEMM with the
//                    bias fused, GEMM, Winograd, non-fused Winograd); symmetric padding, 1-3 axes;
//   6   cuda.direct  one thread per output element, any geometry.
//   7-12 cuda.dnn.graphN  cuDNN graph-API engines (the N-th configuration cuDNN's heuristics list
//                    that opforge accepts, conv_dnn_graph.cc), on LINEAR or HWC tensors — the only
//                    tactics of the HWC combination; bias, residual and activation run inside the
//                    engine when it offers the fused graph, else in one epilogue kernel after it.
#include "../common/conv_plan.h"
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr int kGraph = 100;  // template argument of the graph-API engines: kGraph + rank

Result<ConvArgs> argsOf(const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(at, in[0], in[1], out[0]));
  if (in.size() > 2 && in[2].dtype != DataType::kUndefined) a.bias = reinterpret_cast<const void*>(uintptr_t{256});
  return a;
}

template <int kAlgo>  // -1: direct
Status convCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
  a.x = in[0].data;
  a.w = in[1].data;
  a.bias = hasIn(in, 2) ? in[2].data : nullptr;
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
bool convApplies(const AttrMap& at, std::span<const TensorDesc> in,
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
size_t convWorkspace(const AttrMap& at, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
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

OPFORGE_TACTICS("ai.onnx::Conv", [](OpDef& d) {
  d.tactic(1, "cuda.dnn.implicit_gemm", convCuda<0>, convApplies<0>, convWorkspace<0>);
  d.tactic(2, "cuda.dnn.precomp_gemm", convCuda<1>, convApplies<1>, convWorkspace<1>);
  d.tactic(3, "cuda.dnn.gemm", convCuda<2>, convApplies<2>, convWorkspace<2>);
  d.tactic(4, "cuda.dnn.winograd", convCuda<3>, convApplies<3>, convWorkspace<3>);
  d.tactic(5, "cuda.dnn.winograd_nonfused", convCuda<4>, convApplies<4>, convWorkspace<4>);
  d.tactic(6, "cuda.direct", convCuda<-1>, convApplies<-1>);
  static_assert(kDnnGraphTactics == 6);
  d.tactic(7, "cuda.dnn.graph0", convCuda<kGraph>, convApplies<kGraph>, convWorkspace<kGraph>);
  d.tactic(8, "cuda.dnn.graph1", convCuda<kGraph + 1>, convApplies<kGraph + 1>,
           convWorkspace<kGraph + 1>);
  d.tactic(9, "cuda.dnn.graph2", convCuda<kGraph + 2>, convApplies<kGraph + 2>,
           convWorkspace<kGraph + 2>);
  d.tactic(10, "cuda.dnn.graph3", convCuda<kGraph + 3>, convApplies<kGraph + 3>,
           convWorkspace<kGraph + 3>);
  d.tactic(11, "cuda.dnn.graph4", convCuda<kGraph + 4>, convApplies<kGraph + 4>,
           convWorkspace<kGraph + 4>);
  d.tactic(12, "cuda.dnn.graph5", convCuda<kGraph + 5>, convApplies<kGraph + 5>,
           convWorkspace<kGraph + 5>);
});

}  // namespace opforge::ops
