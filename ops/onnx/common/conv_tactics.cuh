// conv_tactics.cuh — the CUDA tactics Conv and opforge::FusedConv share (kernels: conv_cuda.h).
//
//   1-5    cuda.dnn.*             cuDNN's legacy forward algorithms (implicit GEMM, precomputed
//                                 implicit GEMM, GEMM, Winograd, non-fused Winograd); LINEAR,
//                                 symmetric padding, 1-3 axes
//   6      cuda.direct            one thread per output element, any geometry, LINEAR
//   7-12   cuda.dnn.graphN        cuDNN graph-API engines (the N-th configuration cuDNN's
//                                 heuristics list that opforge accepts, conv_dnn_graph.cc) on
//                                 LINEAR or HWC tensors
//   13-18  cuda.dnn.graphN.tf32   the same on FP32 data with TF32 engines accepted (TF32 tactics:
//                                 the builder takes them only when BuilderConfig::tf32 is set)
//   19-22  cuda.lt1x1_N           a 1x1 convolution (stride 1, no padding, one group) on HWC
//                                 tensors as one cuBLASLt GEMM, the N-th algorithm of its
//                                 heuristics: Y[N*S x M] = X[N*S x C] W[M x C]^T, the bias and ReLU
//                                 in its epilogue, the residual as its C operand
//   23-26  cuda.lt1x1_N.tf32      the same on FP32 data on TF32 tensor cores
//   27     cuda.depthwise         a 2-D depthwise convolution (group = C = M) on HWC tensors,
//                                 opforge's kernel (conv_depthwise.cu), the epilogue in it;
//                                 4 output columns a thread
//   28     cuda.depthwise8        the same, 8 output columns a thread
//   29     cuda.depthwise_tile    the same for square 3/5/7 filters, stride 1 or 2, 16-byte channel
//                                 vectors: each block stages its output tile's input window and
//                                 filters in shared memory first
//   30-31  cuda.mma1x1_128/_64    the 1x1 convolution's GEMM on opforge's tensor-core kernel
//                                 (FP16/BF16, gemm_mma.cu): bias, residual and every activation
//                                 (SiLU included) in its epilogue
//   32-41  cuda.dnn.graph6-15     cuDNN graph-API engines of ranks 6-15 (42-51: their .tf32 twins)
//   52     cuda.mma1x1_skinny     the 1x1 convolution's GEMM for K <= 64 (gemm_skinny.cu)
//   53     cuda.depthwise_tile_s  cuda.depthwise_tile with half-size blocks (4 channel vectors, 128
//                                 threads): more blocks on the small planes of late stages
//   54-55  cuda.patch_lt0/1       a LINEAR 2-D convolution whose patches take at most twice the
//                                 input (ViT's patch embedding: 16x16, stride 16) as a patch gather
//                                 and one batched cuBLASLt GEMM, the N-th algorithm of its
//                                 heuristics (conv_patch.cu); the epilogue kernel after it
//   56-57  cuda.patch_lt0/1.tf32  the same on FP32 data on TF32 tensor cores
//
// Bias (input 2), residual (input 3) and activation: inside the engine where cuDNN fuses them, else
// one epilogue kernel after the convolution.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "conv_plan.h"
#include "cuda_common.cuh"
#include "gemm_skinny.h"

namespace opforge::ops {

// `Describe` gives the ConvArgs of a node from its attributes and X, W, Y (activation included);
// the tactics add the optional inputs, the layout and the pointers.
template <Result<ConvArgs> (*Describe)(const AttrMap&, const TensorDesc&, const TensorDesc&,
                                       const TensorDesc&)>
struct ConvTactics {
  static constexpr int kGraph = 100;  // template argument of the graph-API engines: kGraph + rank
  static constexpr int kGraphTf32 = 200;  // the same with TF32 engines: kGraphTf32 + rank

  // The graph engine's rank and whether it may use TF32, from a template argument >= kGraph.
  static constexpr int rankOf(int algo) {
    return algo >= kGraphTf32 ? algo - kGraphTf32 : algo - kGraph;
  }

  // Planning: the optional inputs' pointers are placeholders (only their presence matters).
  static Result<ConvArgs> planned(const AttrMap& at, std::span<const TensorDesc> in,
                                  std::span<const TensorDesc> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, Describe(at, in[0], in[1], out[0]));
    if (present(in, 2)) a.bias = reinterpret_cast<const void*>(uintptr_t{256});
    if (present(in, 3)) a.z = reinterpret_cast<const void*>(uintptr_t{512});
    a.hwc = !allLinear(in, out) && allHwc(in, out);
    return a;
  }

  // Running: the node's ConvArgs with the tensors' pointers and layout.
  static Result<ConvArgs> bound(KernelContext& k, std::span<const Tensor> in,
                                std::span<const Tensor> out, bool tf32) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, Describe(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
    a.x = in[0].data;
    a.w = in[1].data;
    a.bias = hasIn(in, 2) ? in[2].data : nullptr;
    a.z = hasIn(in, 3) ? in[3].data : nullptr;
    a.y = out[0].data;
    a.hwc = in[0].desc.format == Format::kHWC && in[0].desc.rank() >= 3;
    a.tf32 = tf32;
    return a;
  }

  template <int kAlgo>  // 0-4 legacy algorithm, -1 direct, kGraph + rank graph engine
  static Status run(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, kAlgo >= kGraphTf32));
    if constexpr (kAlgo >= kGraph)
      return convGraph(a, rankOf(kAlgo), k.workspace(), k.workspaceSize(), k.stream());
    else if constexpr (kAlgo >= 0)
      return convDnn(a, kAlgo, k.workspace(), k.workspaceSize(), k.stream());
    else
      return convDirect(a, k.stream());
  }

  template <int kAlgo>
  static bool applies(const AttrMap& at, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    if (!a) return false;
    if constexpr (kAlgo >= kGraph) {
      if constexpr (kAlgo >= kGraphTf32) {
        if (a->dtype != DataType::kFloat32) return false;
        a->tf32 = true;
      }
      return (a->hwc || allLinear(in, out)) && convGraphApplies(*a, rankOf(kAlgo), nullptr);
    } else {
      if (!allLinear(in, out)) return false;
      if constexpr (kAlgo >= 0)
        return convDnnApplies(*a, kAlgo, nullptr);
      else
        return convDirectApplies(*a);
    }
  }

  template <int kAlgo>
  static size_t workspace(const AttrMap& at, std::span<const TensorDesc> in,
                          std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    size_t ws = 0;
    if (!a) return ws;
    a->tf32 = kAlgo >= kGraphTf32;
    if constexpr (kAlgo >= kGraph)
      convGraphApplies(*a, rankOf(kAlgo), &ws);
    else
      convDnnApplies(*a, kAlgo, &ws);
    return ws;
  }

  template <int kAlgo>
  static void add(OpDef& d, int32_t id, std::string name) {
    if constexpr (kAlgo >= kGraphTf32)
      d.tf32Tactic(id, name, run<kAlgo>, applies<kAlgo>, workspace<kAlgo>);
    else
      d.tactic(id, name, run<kAlgo>, applies<kAlgo>, workspace<kAlgo>);
  }

  // The GEMM of a 1x1 convolution on channels-last tensors, when the convolution is one.
  static std::optional<GemmArgs> gemm1x1(const ConvArgs& a) {
    if (!a.hwc || a.group != 1 || a.nd < 1 || a.isz != a.osz) return std::nullopt;
    if (a.dtype != DataType::kFloat32 && a.dtype != DataType::kFloat16 &&
        a.dtype != DataType::kBFloat16)
      return std::nullopt;
    for (int i = 0; i < a.nd; ++i)
      if (a.k[i] != 1 || a.s[i] != 1 || a.pb[i] != 0 || a.pe[i] != 0) return std::nullopt;
    GemmArgs g;
    g.dtype = a.dtype;
    g.m = a.n;
    for (int64_t v : a.isz) g.m *= v;
    g.n = a.m;
    g.k = a.c;
    g.a = a.x;
    g.lda = a.c;
    g.tb = true;  // W is [M, C] row-major (HWC weights of a 1x1 kernel)
    g.b = a.w;
    g.ldb = a.c;
    g.y = a.y;
    g.ldy = a.m;
    g.bias = a.bias;
    g.act = a.act;
    g.c = a.z;
    g.beta = a.z ? 1.0 : 0.0;
    g.tf32 = a.tf32;
    return g;
  }

  template <int kRank, bool kTf32>
  static Status runLt(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, kTf32));
    auto g = gemm1x1(a);
    if (!g) return Status::unsupported("cuda.lt1x1: not a channels-last 1x1 convolution");
    return gemmLt(*g, kRank, k.workspace(), k.workspaceSize(), k.stream());
  }

  template <int kRank, bool kTf32>
  static bool appliesLt(const AttrMap& at, std::span<const TensorDesc> in,
                        std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    if (!a || (kTf32 && a->dtype != DataType::kFloat32)) return false;
    a->tf32 = kTf32;
    auto g = gemm1x1(*a);
    return g && gemmLtApplies(*g, kRank);
  }

  static size_t workspaceLt(const AttrMap&, std::span<const TensorDesc>,
                            std::span<const TensorDesc>) {
    return kLtWorkspace;
  }

  template <int... kRank>
  static void addLt(OpDef& d, std::integer_sequence<int, kRank...>) {
    (d.tactic(19 + kRank, "cuda.lt1x1_" + std::to_string(kRank), runLt<kRank, false>,
              appliesLt<kRank, false>, workspaceLt),
     ...);
    (d.tf32Tactic(23 + kRank, "cuda.lt1x1_" + std::to_string(kRank) + ".tf32", runLt<kRank, true>,
                  appliesLt<kRank, true>, workspaceLt),
     ...);
  }

  // kBn 64 or 128: cuda.mma1x1_*, 0: cuda.mma1x1_skinny.
  template <int kBn>
  static Status runMma(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, false));
    auto g = gemm1x1(a);
    if (!g) return Status::unsupported("cuda.mma1x1: not a channels-last 1x1 convolution");
    return kBn == 0 ? gemmSkinny(*g, k.stream()) : gemmMma(*g, kBn, k.stream());
  }

  template <int kBn>
  static bool appliesMma(const AttrMap& at, std::span<const TensorDesc> in,
                         std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    if (!a) return false;
    auto g = gemm1x1(*a);
    return g && (kBn == 0 ? gemmSkinnyApplies(*g) : gemmMmaApplies(*g, kBn));
  }

  template <int kColumns>
  static Status runDw(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, false));
    return convDepthwise(a, kColumns, k.stream());
  }
  static bool appliesDw(const AttrMap& at, std::span<const TensorDesc> in,
                        std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    return a && convDepthwiseApplies(*a);
  }

  template <bool kSmall>
  static Status runDwTile(KernelContext& k, std::span<const Tensor> in,
                          std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, false));
    return convDepthwiseTile(a, kSmall, k.stream());
  }
  template <bool kSmall>
  static bool appliesDwTile(const AttrMap& at, std::span<const TensorDesc> in,
                            std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    return a && convDepthwiseTileApplies(*a, kSmall);
  }

  template <int kRank, bool kTf32>
  static Status runPatch(KernelContext& k, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
    OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, bound(k, in, out, kTf32));
    return convPatch(a, kRank, k.workspace(), k.workspaceSize(), k.stream());
  }
  template <int kRank, bool kTf32>
  static bool appliesPatch(const AttrMap& at, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    if (!a || !allLinear(in, out) || (kTf32 && a->dtype != DataType::kFloat32)) return false;
    a->tf32 = kTf32;
    return convPatchApplies(*a, kRank, nullptr);
  }
  template <int kRank, bool kTf32>
  static size_t workspacePatch(const AttrMap& at, std::span<const TensorDesc> in,
                               std::span<const TensorDesc> out) {
    auto a = planned(at, in, out);
    size_t ws = 0;
    if (!a) return ws;
    a->tf32 = kTf32;
    convPatchApplies(*a, kRank, &ws);
    return ws;
  }

  // Registers tactics 1-57; `precomp_name` names tactic 2 (the one with cuDNN's fused bias).
  static void addAll(OpDef& d, const char* precomp_name) {
    add<0>(d, 1, "cuda.dnn.implicit_gemm");
    add<1>(d, 2, precomp_name);
    add<2>(d, 3, "cuda.dnn.gemm");
    add<3>(d, 4, "cuda.dnn.winograd");
    add<4>(d, 5, "cuda.dnn.winograd_nonfused");
    d.tactic(6, "cuda.direct", run<-1>, applies<-1>);
    // Graph engines: ranks 0-5 at 7-12 (TF32: 13-18), ranks 6-15 at 32-41 (TF32: 42-51).
    static_assert(kDnnGraphTactics == 16);
    addGraph<kGraph>(d, 7, 32, "", std::make_integer_sequence<int, kDnnGraphTactics>{});
    addGraph<kGraphTf32>(d, 13, 42, ".tf32", std::make_integer_sequence<int, kDnnGraphTactics>{});
    static_assert(kLtAlgos == 4);
    addLt(d, std::make_integer_sequence<int, kLtAlgos>{});
    d.tactic(27, "cuda.depthwise", runDw<4>, appliesDw);
    d.tactic(28, "cuda.depthwise8", runDw<8>, appliesDw);
    d.tactic(29, "cuda.depthwise_tile", runDwTile<false>, appliesDwTile<false>);
    d.tactic(30, "cuda.mma1x1_128", runMma<128>, appliesMma<128>);
    d.tactic(31, "cuda.mma1x1_64", runMma<64>, appliesMma<64>);
    d.tactic(52, "cuda.mma1x1_skinny", runMma<0>, appliesMma<0>);
    d.tactic(53, "cuda.depthwise_tile_s", runDwTile<true>, appliesDwTile<true>);
    d.tactic(54, "cuda.patch_lt0", runPatch<0, false>, appliesPatch<0, false>,
             workspacePatch<0, false>);
    d.tactic(55, "cuda.patch_lt1", runPatch<1, false>, appliesPatch<1, false>,
             workspacePatch<1, false>);
    d.tf32Tactic(56, "cuda.patch_lt0.tf32", runPatch<0, true>, appliesPatch<0, true>,
                 workspacePatch<0, true>);
    d.tf32Tactic(57, "cuda.patch_lt1.tf32", runPatch<1, true>, appliesPatch<1, true>,
                 workspacePatch<1, true>);
  }

  // Graph engines of every rank, "cuda.dnn.graph<rank><suffix>": tactic first + rank for ranks
  // 0-5, then + rank - 6 (ranks 6 on came after the first six, whose ids plans keep).
  template <int kBase, int... kRank>
  static void addGraph(OpDef& d, int32_t first, int32_t then, const char* suffix,
                       std::integer_sequence<int, kRank...>) {
    (add<kBase + kRank>(d, kRank < 6 ? first + kRank : then + kRank - 6,
                        "cuda.dnn.graph" + std::to_string(kRank) + suffix),
     ...);
  }
};

}  // namespace opforge::ops
